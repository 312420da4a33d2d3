package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/output/events"
	"github.com/socialcrawl/crawler/runs"
)

const eventsSummary = `Run events (docs/events.md). One subcommand:

  crawler events replay RUN JOBFILE

sends run RUN's end event again, the same id and JSON as at its end (a
receiver drops an id it already has), to the webhooks and the NOTIFY
channel JOBFILE's events section names now, signed with the secrets their
secret_env variables hold; a run that ended without an event gets one.
JOBFILE must be the run's job (its name). Each delivery is recorded in
crawl.event_deliveries. Exit 0 when every target got it, 1 when one did
not (logged), 2 on bad input.`

func cmdEvents(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "events", "replay RUN JOBFILE", eventsSummary)
	newLogger := logFlags(fs)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 || fs.Arg(0) != "replay" {
		return usagef("events: give a subcommand: crawler events replay RUN JOBFILE")
	}
	// Flags may follow the subcommand too.
	if err := parseFlags(env, fs, fs.Args()[1:]); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("events replay takes a run id and a job file, got %d arguments", fs.NArg())
	}
	runID, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || runID <= 0 {
		return usagef("events replay: %q is not a run id (crawler runs lists them)", fs.Arg(0))
	}
	path := fs.Arg(1)
	log, err := newLogger(env.stderr)
	if err != nil {
		return err
	}
	job, err := jobfile.Load(path)
	if err != nil {
		return usageError{err}
	}
	if !job.EventsOn() {
		return usagef("%s: the job has no events section: nobody to send run %d's event to (docs/events.md)", path, runID)
	}
	secrets, err := events.ReadSecrets(job, env.getenv)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", path, err)}
	}
	pool, err := connectCurrent(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	st, err := runs.LoadStatus(ctx, pool, runID)
	if err != nil {
		return noRun(err, runID)
	}
	if st.Job != job.Name {
		return usagef("run %d is of job %q, and %s is job %q: give the run's own job file", runID, st.Job, path, job.Name)
	}
	s := &events.Sender{Pool: pool, Job: job, Secrets: secrets, APIKey: env.getenv(job.API.KeyEnv), Log: log}
	res, err := s.Replay(ctx, runID)
	if errors.Is(err, runs.ErrNoRun) {
		return noRun(err, runID)
	}
	if err != nil {
		return err
	}
	for _, d := range res.Deliveries {
		status := "delivered"
		if !d.Delivered {
			status = "NOT delivered: " + d.Err
		}
		fmt.Fprintf(env.stdout, "run %d: event %d (%s) to %s: %s after %d attempts\n", runID, res.EventID, res.Outcome, d.Target, status, d.Attempts)
	}
	if n := delivered(res); n < len(res.Deliveries) {
		return fmt.Errorf("run %d's event %d reached %d of %d targets", runID, res.EventID, n, len(res.Deliveries))
	}
	return nil
}

// delivered counts the targets that got the event.
func delivered(res events.Result) int {
	n := 0
	for _, d := range res.Deliveries {
		if d.Delivered {
			n++
		}
	}
	return n
}
