package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/socialcrawl/crawler/output/report"
	"github.com/socialcrawl/crawler/runs"
)

const reportSummary = `Write the report of a run (default: the latest): credits per endpoint,
pages/s and 429s over the run's time, task outcomes by kind with the top
failure reasons, rows per table, and the top movers (follower and
play-count growth) since the previous run of the same job. --html FILE
writes one self-contained HTML file (inline CSS and SVG charts, nothing
fetched from anywhere); --json prints the same figures to stdout. Give
either or both. Read-only.`

func cmdReport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "report", "", reportSummary)
	runID := fs.Int64("run", 0, "run `ID` to report on (default: the latest)")
	htmlPath := fs.String("html", "", "write the HTML report to `FILE`")
	asJSON := fs.Bool("json", false, "print the report's figures as one JSON object")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("report takes no arguments, got %q", fs.Args())
	}
	if *htmlPath == "" && !*asJSON {
		return usagef("give --html FILE, --json, or both")
	}
	if *runID < 0 {
		return usagef("--run: %d is not a run id", *runID)
	}
	pool, err := connectCurrent(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	r, err := runs.LoadReport(ctx, pool, *runID)
	if err != nil {
		return noRun(err, *runID)
	}
	if *htmlPath != "" {
		var buf bytes.Buffer
		if err := report.WriteHTML(&buf, r); err != nil {
			return err
		}
		if err := writeFileAtomic(*htmlPath, buf.Bytes()); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		if !*asJSON {
			fmt.Fprintf(env.stdout, "report of run %d written to %s\n", r.Run.ID, *htmlPath)
		}
	}
	if *asJSON {
		return printJSON(env.stdout, r)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename: a reader never sees half a report.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".report-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
