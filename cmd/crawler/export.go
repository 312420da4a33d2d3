package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/socialcrawl/crawler/internal/version"
	"github.com/socialcrawl/crawler/output/export"
)

const exportSummary = `Export what landed to files a researcher can hand on, with a manifest
(manifest.json) beside them: the runs included, their jobs and
fingerprints, the crawler's version, credits per endpoint, how complete
each list is, rows, column types and a SHA-256 per file. By default the
analysts' views (docs/analysts.md); --tables picks tables or views. One
directory per object, part-00000.parquet (or .csv) in it, more parts past
--rows-per-file. Read-only; the same database and --as-of give the same
bytes; a failed or interrupted export leaves nothing under DIR.

--verify DIR checks an export's files against its manifest (no database):
exit 0 when all match, 1 when a file is missing or differs, 2 when DIR
has no readable manifest. docs/export.md loads an export in DuckDB,
pandas and R.`

func cmdExport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "export", "", exportSummary)
	out := fs.String("out", "", "write the export to `DIR` (new, or empty)")
	tables := fs.String("tables", "", "comma-separated tables or views to export, as `schema.name` (default: the analysts' views)")
	asOf := fs.Int64("as-of", 0, "export the rows as run `ID` left them (default: the latest); what cannot be rebuilt is said in the manifest")
	format := fs.String("format", "parquet", "file format: parquet or csv")
	perFile := fs.Int64("rows-per-file", export.DefaultRowsPerFile, "start a new part file of an object past `N` rows")
	verify := fs.String("verify", "", "check the export in `DIR` against its manifest, and export nothing")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("export takes no arguments, got %q", fs.Args())
	}
	if *verify != "" {
		if *out != "" || *tables != "" || *asOf != 0 {
			return usagef("--verify checks an export: give it alone")
		}
		return verifyExport(env, *verify)
	}
	if *out == "" {
		return usagef("give --out DIR (or --verify DIR)")
	}
	if *format != string(export.Parquet) && *format != string(export.CSV) {
		return usagef("--format: %q is not parquet or csv", *format)
	}
	if *asOf < 0 {
		return usagef("--as-of: %d is not a run id", *asOf)
	}
	if *perFile <= 0 {
		return usagef("--rows-per-file: %d is not a positive number of rows", *perFile)
	}
	var objects []string
	for _, t := range strings.Split(*tables, ",") {
		if t = strings.TrimSpace(t); t != "" {
			objects = append(objects, t)
		}
	}
	pool, err := connectCurrent(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	m, err := export.Export(ctx, pool, export.Options{Dir: *out, Objects: objects, AsOf: *asOf, Format: export.Format(*format),
		RowsPerFile: *perFile, Version: version.Read().String()})
	switch {
	case errors.Is(err, export.ErrNoSuchObject), errors.Is(err, export.ErrNoSuchRun), errors.Is(err, export.ErrDirNotEmpty):
		return usageError{err}
	case err != nil && ctx.Err() != nil:
		return exportInterrupted{*out}
	case err != nil:
		return err
	}
	fmt.Fprintf(env.stdout, "export written to %s\n%s", *out, export.Summary(m))
	return nil
}

// exportInterrupted is an export stopped by a signal: nothing is left
// under its directory's name; exit 3, as running it again does it all.
type exportInterrupted struct{ dir string }

func (e exportInterrupted) Error() string { return "export interrupted: nothing written to " + e.dir }

func (e exportInterrupted) Resumable() string { return "run the command again" }

// verifyExport checks an export: a file that differs is exit 1 (an
// *export.VerifyError), a directory without a manifest exit 2.
func verifyExport(env *cliEnv, dir string) error {
	m, err := export.Verify(dir)
	if errors.Is(err, export.ErrNoManifest) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	files := 0
	for _, o := range m.Objects {
		files += len(o.Files)
	}
	fmt.Fprintf(env.stdout, "%s: %d files of %d objects match the manifest\n", dir, files, len(m.Objects))
	return nil
}
