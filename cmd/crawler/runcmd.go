package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/socialcrawl/crawler/internal/version"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/output/events"
	"github.com/socialcrawl/crawler/output/live"
	"github.com/socialcrawl/crawler/output/metrics"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/runs"
	"github.com/socialcrawl/crawler/sources"
)

// stoppedError is a run that stopped and can be resumed.
type stoppedError struct {
	err     error
	runID   int64
	jobPath string
}

func (e *stoppedError) Error() string { return e.err.Error() }
func (e *stoppedError) Unwrap() error { return e.err }
func (e *stoppedError) Resumable() string {
	return fmt.Sprintf("crawler: run %d can be resumed: crawler run --resume %d %s", e.runID, e.runID, e.jobPath)
}

// spentError is a run stopped because its credit budget is spent (exit 5):
// retrying the same command does nothing until the budget is raised or
// resume_within has passed, when it starts a new run.
type spentError struct {
	err     error
	runID   int64
	jobPath string
	resume  bool // crawler run --resume ID
}

func (e *spentError) Error() string { return e.err.Error() }
func (e *spentError) Unwrap() error { return e.err }
func (e *spentError) Spent() string {
	raise := fmt.Sprintf("crawler run --max-credits N %s", e.jobPath)
	if e.resume {
		raise = fmt.Sprintf("crawler run --resume %d --max-credits N %s", e.runID, e.jobPath)
	}
	return fmt.Sprintf("crawler: run %d spent its credit budget: to continue it, raise max_credits (%s); "+
		"otherwise the first `crawler run` after resume_within starts a new run with a budget of its own (do not retry exit 5)", e.runID, raise)
}

// failedTasksError is a run that finished with failed tasks (exit 4).
type failedTasksError struct {
	runID, failed int64
	jobPath       string
}

func (e *failedTasksError) Error() string {
	return fmt.Sprintf("run %d finished with %d failed tasks", e.runID, e.failed)
}

func (e *failedTasksError) Retryable() string {
	return fmt.Sprintf("crawler: why: crawler status --run %d; to re-queue them: crawler run --resume %d --retry-failed %s", e.runID, e.runID, e.jobPath)
}

const runSummary = `Harvest the seeds of JOBFILE into the database in DATABASE_URL.
The API key is read from the environment variable named by api.key_env.

Safe to rerun: the job's interrupted run (killed, stopped, exit 3) is
continued when it was active within resume_within (default 12h), a run
another process works on is joined, and a finished run is not continued
(the next start is a new run). --new-run starts a fresh run regardless.

Exit codes: 0 the run finished (skipped tasks, such as a 404, are not
failures); 1 it failed; 2 bad input; 3 it stopped before its end and can be
resumed; 4 it finished but some tasks failed (crawler status says why;
--resume ID --retry-failed works them again); 5 it stopped because its
credit budget (max_credits) is spent: the same command does nothing until
the budget is raised, and after resume_within starts a new run (do not
retry 5).`

func cmdRun(ctx context.Context, env *cliEnv, args []string) (err error) {
	// A stop signal before pipeline.Run makes the start's database work
	// (migrations, choosing, joining or resuming the run) fail with the
	// signal's context: a stop, as while connecting, not a failure (a
	// process joining a run that is stopped as it comes exits 3, not 1).
	working := false
	defer func() {
		var se interface{ Resumable() string }
		var be interface{ Spent() string }
		if err != nil && !working && ctx.Err() != nil && !errors.As(err, new(usageError)) && !errors.As(err, &se) && !errors.As(err, &be) {
			err = interruptedError{"while starting: " + err.Error()}
		}
	}()
	fs := newFlags(env, "run", "JOBFILE", runSummary)
	resume := fs.Int64("resume", 0, "resume (or join, from another process) run `ID` instead of starting a new one")
	newRun := fs.Bool("new-run", false, "start a new run even when the job has an interrupted run to continue (an unfinished run no process works on is marked abandoned)")
	retryFailed := fs.Bool("retry-failed", false, "with --resume: put the run's failed tasks back in the queue (a list resumes at the page that failed) and work them")
	baseURL := fs.String("base-url", "", "override api.base_url of the job file")
	insecure := fs.Bool("allow-insecure-http", false, "allow sending the API key over plain http to a host that is not loopback (a job file cannot allow it)")
	maxCredits := fs.Int64("max-credits", -1, "override limits.max_credits (on --resume: the run's new budget)")
	progress := fs.Duration("progress", pipeline.ProgressIntervalDefault, "how often to log a progress line (0: never); on a terminal the live status line replaces them unless this flag is given")
	liveMode := fs.String("live", "auto", "the live status line on stderr: auto (when stderr is a terminal) or off")
	sample := fs.Duration("sample-interval", pipeline.SampleIntervalDefault, "how often to record a progress sample of the run in crawl.run_samples (0: never)")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus metrics on http://`ADDR`/metrics while the run works (e.g. 127.0.0.1:9464)")
	metricsFile := fs.String("metrics-textfile", "", "at the end, write the run's final metrics to `PATH` (atomically) for node_exporter's textfile collector")
	grace := fs.Duration("grace", pipeline.GraceDefault, "on SIGINT/SIGTERM, how long in-flight requests may finish before they are released")
	newLogger := logFlags(fs)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("run takes exactly one job file, got %d arguments (see crawler run --help)", fs.NArg())
	}
	if *newRun && *resume != 0 {
		return usagef("--new-run and --resume ID exclude each other: --resume continues run ID, --new-run starts a new one")
	}
	if *retryFailed && *resume == 0 {
		return usagef("--retry-failed needs --resume ID: it re-queues the failed tasks of that run")
	}
	if *liveMode != "auto" && *liveMode != "off" {
		return usagef("--live: %q is not auto or off", *liveMode)
	}
	progressSet := false
	fs.Visit(func(f *flag.Flag) { progressSet = progressSet || f.Name == "progress" })
	var line *live.Line
	logOut := env.stderr
	if *liveMode == "auto" {
		if ok, width := env.isTerminal(env.stderr); ok {
			line = live.New(env.stderr, width)
			logOut = line.Writer()
			if !progressSet {
				*progress = 0
			}
		}
	}
	log, err := newLogger(logOut)
	if err != nil {
		return err
	}
	var metricsLn net.Listener
	if *metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", *metricsAddr); err != nil {
			return usagef("--metrics-addr: %v", err)
		}
		defer metricsLn.Close()
	}
	path := fs.Arg(0)
	job, err := jobfile.LoadWith(path, jobfile.LoadOptions{BaseURL: *baseURL, AllowInsecureHTTP: *insecure})
	if err != nil {
		return usageError{err}
	}
	key := env.getenv(job.API.KeyEnv)
	if key == "" {
		return usagef("%s: api.key_env: environment variable %s is not set: export the API key there", path, job.API.KeyEnv)
	}
	if *maxCredits >= 0 {
		job.Limits.MaxCredits = maxCredits
	}
	secrets, err := events.ReadSecrets(job, env.getenv)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", path, err)}
	}
	clientCfg := job.ClientConfig(sources.Secret(key), log)
	if err := clientCfg.Validate(); err != nil {
		return usageError{fmt.Errorf("%s: api: %w", path, err)}
	}
	pool, err := connect(ctx, env, job.Database.MaxConns)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := migrate(ctx, pool); err != nil {
		return err
	}
	runID := *resume
	if runID == 0 {
		ch, err := pipeline.FindOrCreateRun(ctx, pool, job, *newRun)
		if errors.Is(err, pipeline.ErrJobChanged) {
			return usageError{fmt.Errorf("%s: %w", path, err)}
		}
		if err != nil {
			return err
		}
		runID = ch.RunID
		if ch.Abandoned != 0 {
			fmt.Fprintf(env.stdout, "run %d: abandoned: %s\n", ch.Abandoned, ch.AbandonReason)
		}
		switch ch.Action {
		case pipeline.RunContinue:
			fmt.Fprintf(env.stdout, "run %d: job %q continued (interrupted, last active %s ago)\n", runID, job.Name, ch.Idle)
		case pipeline.RunJoin:
			fmt.Fprintf(env.stdout, "run %d: job %q joined (another process is working on it)\n", runID, job.Name)
		case pipeline.RunSpent:
			return &spentError{err: fmt.Errorf("run %d of job %q stopped %s ago at its credit budget (%d credits billed of %d): not continued with the same budget",
				runID, job.Name, ch.Idle, ch.Billed, ch.BudgetStop), runID: runID, jobPath: path}
		}
	} else {
		var newMax *int64 // a spent run is resumed only with a larger budget
		if *maxCredits >= 0 {
			newMax = maxCredits
		}
		if err := pipeline.ResumeUnlessSpent(ctx, pool, runID, job.Name, newMax); err != nil {
			if errors.Is(err, runs.ErrPruned) {
				return usageError{err}
			}
			if errors.Is(err, pipeline.ErrSpent) {
				return &spentError{err: err, runID: runID, jobPath: path, resume: true}
			}
			return err
		}
		if *maxCredits >= 0 {
			if err := budget.SetMaxCredits(ctx, pool, runID, maxCredits); err != nil {
				return err
			}
		}
		if *retryFailed {
			n, err := pipeline.RetryFailed(ctx, pool, runID)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "run %d: %d failed tasks re-queued\n", runID, n)
		}
	}
	fmt.Fprintf(env.stdout, "run %d: job %q started\n", runID, job.Name)
	opts := pipeline.Options{Pool: pool, Client: clientCfg, Logger: log, Grace: *grace, ProgressInterval: progressInterval(*progress),
		SampleInterval: progressInterval(*sample), Version: version.String()}
	if line != nil {
		opts.Observers = append(opts.Observers, line)
	}
	if ml := newMemoryLimiter(env, clientCfg); ml != nil {
		opts.Observers = append(opts.Observers, ml)
	}
	var m *metrics.Metrics
	if metricsLn != nil || *metricsFile != "" {
		m = metrics.New(runID, job.Name, opts.Version)
		opts.Observers = append(opts.Observers, m)
	}
	metricsURL := ""
	if metricsLn != nil {
		stopServer := serveMetrics(metricsLn, m, log)
		defer stopServer()
		metricsURL = "http://" + metricsLn.Addr().String() + "/metrics"
		log.Info("serving metrics", "url", metricsURL)
		if env.metricsServing != nil {
			env.metricsServing(metricsURL)
		}
	}
	working = true
	sum, err := pipeline.Run(ctx, opts, job, runID)
	if sum != nil {
		credits := ""
		// Within pipeline.StopBound: a stop during an outage is bounded.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		if cr, cerr := budget.LoadCredits(cctx, pool, runID); cerr == nil {
			credits = fmt.Sprintf(", %d credits billed to the run", cr.Billed)
		}
		cancel()
		fmt.Fprintf(env.stdout, "run %d: %s: %d pages, %d rows written%s\n", runID, sum.State, sum.Pages, sum.Rows, credits)
	}
	if *metricsFile != "" {
		if werr := m.WriteTextfile(*metricsFile); werr != nil {
			log.Error("could not write the metrics textfile", "path", *metricsFile, "err", werr)
		}
	}
	if env.afterRun != nil {
		env.afterRun(metricsURL)
	}
	if job.EventsOn() {
		// The run's end told, within events.timeout; nothing here changes
		// the exit code.
		s := &events.Sender{Pool: pool, Job: job, Secrets: secrets, APIKey: key, Log: log}
		if res := s.AtEnd(ctx, runID); res.EventID != 0 {
			fmt.Fprintf(env.stdout, "run %d: event %d (%s) delivered to %d of %d targets\n", runID, res.EventID, res.Outcome, delivered(res), len(res.Deliveries))
		}
	}
	var stop *pipeline.StopError
	if errors.As(err, &stop) && errors.Is(err, budget.ErrExhausted) {
		return &spentError{err: err, runID: runID, jobPath: path}
	}
	if errors.As(err, &stop) {
		return &stoppedError{err: err, runID: runID, jobPath: path}
	}
	if err == nil && sum != nil && sum.State == "done" && sum.Failed > 0 {
		return &failedTasksError{runID: runID, failed: sum.Failed, jobPath: path}
	}
	return err
}

// progressInterval maps the flag's 0 (never) to the pipeline's negative.
func progressInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// isTerminal is env.terminal, or live.Terminal.
func (env *cliEnv) isTerminal(w io.Writer) (bool, func() int) {
	if env.terminal != nil {
		return env.terminal(w)
	}
	return live.Terminal(w)
}

// serveMetrics serves m on ln's /metrics until the returned stop is called.
func serveMetrics(ln net.Listener, m *metrics.Metrics, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
}
