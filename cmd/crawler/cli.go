package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the run failed, or a dependency (database) was unusable
	exitUsage   = 2 // bad input: flags, job file, environment
	exitStopped = 3 // the run stopped before its end and can be resumed
	exitFailed  = 4 // the run finished, but some of its tasks failed
	// exitSpent: the run stopped because its credit budget is spent; the
	// same command does nothing until resume_within has passed (then it
	// starts a new run) or the budget is raised. Not to be retried.
	exitSpent = 5
)

// usageError is bad input from the user: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv is what commands get from the process.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// terminal reports whether w is a terminal and its width (default
	// live.Terminal); tests stand in a fake terminal.
	terminal func(w io.Writer) (bool, func() int)
	// afterRun, when set, is called by run once the run has ended, before
	// its metrics server closes (tests scrape the final figures there).
	afterRun func(metricsURL string)
	// metricsServing, when set, is called once the metrics server listens.
	metricsServing func(metricsURL string)
	// setMemoryLimit sets the process's soft memory limit
	// (debug.SetMemoryLimit); nil in tests, whose process is not the
	// run's alone: "run" then leaves the limit as it is.
	setMemoryLimit func(int64) int64
}

func commands() []command {
	return []command{
		{"run", "harvest a job file into PostgreSQL (or resume a run)", cmdRun},
		{"plan", "check a job can run and bound its credits, without spending any", cmdPlan},
		{"status", "show a run's figures (read-only; --json for machines)", cmdStatus},
		{"runs", "list the latest runs (read-only; --json for machines)", cmdRuns},
		{"report", "write a run's report: one HTML file with charts (--json for machines)", cmdReport},
		{"events", "send a run's end event again to the job's webhooks and NOTIFY channel (events replay)", cmdEvents},
		{"export", "export the analysts' views (or tables) to Parquet or CSV with a manifest", cmdExport},
		{"replay", "rebuild a run's rows from its page archive, with no request upstream", cmdReplay},
		{"version", "print the crawler's version (also: crawler --version)", cmdVersion},
		{"prune", "remove old runs' bookkeeping (tasks, samples, page archive); keeps the data", cmdPrune},
		{"migrate", "apply the database migrations", cmdMigrate},
		{"sandbox", "serve the local stand-in for the upstream API", cmdSandbox},
	}
}

const topUsage = `crawler harvests the social-data API into PostgreSQL.

Usage:
  crawler <command> [flags] [args]

Commands:
%s
Environment:
  DATABASE_URL   PostgreSQL connection URL (required by run, status, runs, prune and migrate)
  the variable named by api.key_env in the job file (default CRAWLER_API_KEY) holds the API key

Run "crawler <command> --help" for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, &cliEnv{stdout: stdout, stderr: stderr, getenv: os.Getenv, setMemoryLimit: debug.SetMemoryLimit})
}

func runEnv(ctx context.Context, args []string, env *cliEnv) int {
	stdout, stderr := env.stdout, env.stderr
	var list strings.Builder
	for _, c := range commands() {
		fmt.Fprintf(&list, "  %-9s %s\n", c.name, c.summary)
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, topUsage, list.String())
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprintf(stdout, topUsage, list.String())
		return exitOK
	case "-version", "--version":
		return exitCode(stderr, cmdVersion(ctx, env, args[1:]))
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(stderr, c.run(ctx, env, args[1:]))
		}
	}
	fmt.Fprintf(stderr, "crawler: unknown command %q\n\n"+topUsage, args[0], list.String())
	return exitUsage
}

func exitCode(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "crawler: %v\n", err)
	var ue usageError
	var se interface{ Resumable() string }
	var fe interface{ Retryable() string }
	var be interface{ Spent() string }
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &be):
		fmt.Fprintln(stderr, be.Spent())
		return exitSpent
	case errors.As(err, &se):
		fmt.Fprintln(stderr, se.Resumable())
		return exitStopped
	case errors.As(err, &fe):
		fmt.Fprintln(stderr, fe.Retryable())
		return exitFailed
	}
	return exitFailure
}

// newFlags returns a flag set whose --help prints usage to stdout and whose
// errors are usage errors.
func newFlags(env *cliEnv, name, args, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: crawler %s [flags] %s\n\n%s\n\nFlags:\n", name, args, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; --help prints to stdout and returns flag.ErrHelp.
func parseFlags(env *cliEnv, fs *flag.FlagSet, args []string) error {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(env.stdout)
			fs.Usage()
			return flag.ErrHelp
		}
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	return nil
}

// logFlags adds --log-level and --log-format and returns a constructor.
func logFlags(fs *flag.FlagSet) func(w io.Writer) (*slog.Logger, error) {
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	format := fs.String("log-format", "text", "log format: text or json")
	return func(w io.Writer) (*slog.Logger, error) {
		var lv slog.Level
		if err := lv.UnmarshalText([]byte(*level)); err != nil {
			return nil, usagef("--log-level: %q is not one of debug, info, warn, error", *level)
		}
		opts := &slog.HandlerOptions{Level: lv}
		switch *format {
		case "text":
			return slog.New(slog.NewTextHandler(w, opts)), nil
		case "json":
			return slog.New(slog.NewJSONHandler(w, opts)), nil
		}
		return nil, usagef("--log-format: %q is not text or json", *format)
	}
}
