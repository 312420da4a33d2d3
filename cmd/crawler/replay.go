package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/socialcrawl/crawler/runs"
)

const replaySummary = `Rebuild the normalized rows of run ID from its page archive (the run's
job set archive: true), with no request to the upstream: every archived
page goes through its kind's mapping again and its rows are written as
the run's (idempotent upserts: rows still there are rewritten the same).
Exit 2 when the run does not exist or kept no pages, 4 when some pages
could not be mapped (logged).`

func cmdReplay(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "replay", "--run ID", replaySummary)
	runID := fs.Int64("run", 0, "the run `ID` to replay (required)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("replay takes no arguments, got %q", fs.Args())
	}
	if *runID <= 0 {
		return usagef("--run: give the run ID to replay (crawler runs lists them)")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level: %q is not debug, info, warn or error", *logLevel)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	pool, err := connectCurrent(ctx, env, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	sum, err := runs.Replay(ctx, pool, *runID, log)
	if errors.Is(err, runs.ErrNoRun) || errors.Is(err, runs.ErrNoArchive) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "replayed run %d: %d pages, %d rows in %.2fs (%.0f rows/s), 0 requests upstream\n",
		sum.RunID, sum.Pages, sum.Rows, sum.Elapsed.Seconds(), sum.RowsPerSecond())
	fmt.Fprintf(env.stdout, "the harvest wrote %d rows in %.2fs (%.0f rows/s)\n",
		sum.HarvestRows, sum.HarvestSeconds, sum.HarvestRowsPerSecond())
	if sum.Failed > 0 {
		return &replayFailedError{runID: sum.RunID, failed: sum.Failed}
	}
	return nil
}

// replayFailedError is a replay some of whose pages could not be mapped
// (exit 4, like a run with failed tasks).
type replayFailedError struct{ runID, failed int64 }

func (e *replayFailedError) Error() string {
	return fmt.Sprintf("replay of run %d: %d archived pages could not be mapped (logged above)", e.runID, e.failed)
}

func (e *replayFailedError) Retryable() string {
	return fmt.Sprintf("crawler: fix the mapping and replay again: crawler replay --run %d", e.runID)
}
