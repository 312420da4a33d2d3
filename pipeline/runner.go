package pipeline

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/loop"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/adaptive"
	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/pipeline/quota"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
)

// Defaults of Options.
const (
	// PollIntervalDefault is how often an idle worker looks for tasks that
	// other workers or processes may have added, or whose lease expired.
	PollIntervalDefault = 250 * time.Millisecond
	// OutageTimeoutDefault is how long workers wait for an unreachable
	// database before the run fails.
	OutageTimeoutDefault = 10 * time.Minute
	// StopBound is how long a stopped process may take, beyond Grace, to
	// end, whatever the database does (docs/operating.md): statements
	// retried through an outage give up StopLinger after the hard stop,
	// and the final bookkeeping (releasing leases, the credit hold, the
	// run's state) has FinishTimeout.
	StopBound = StopLinger + FinishTimeout + 2*time.Second + 2*time.Second
	// StopLinger is how long past the hard stop (the signal plus Grace)
	// statements retried through a database outage go on: the hold's
	// beat, a worker's reservation or commit, the seeding of follow lists.
	StopLinger = 2 * time.Second
	// FinishTimeout bounds the bookkeeping of a process's end on a run:
	// releasing its leases, posting its last credits and giving back its
	// spare (half of it at most), writing the run's state.
	FinishTimeout = 5 * time.Second
	// GraceDefault is how long in-flight requests may finish after a stop
	// was asked for (SIGINT/SIGTERM) before they are cancelled and released.
	GraceDefault = 5 * time.Second
)

// Options are the parts a run is built from.
type Options struct {
	Pool *pgxpool.Pool
	// Client configures the jobfile.API client; Run adds the credit hooks.
	Client sources.Config
	Logger *slog.Logger
	// Owner identifies this process in leases. Default host:pid:random.
	Owner string
	// PollInterval: see PollIntervalDefault.
	PollInterval time.Duration
	// Grace: see GraceDefault.
	Grace time.Duration
	// OutageTimeout: see OutageTimeoutDefault.
	OutageTimeout time.Duration
	// ProgressInterval: see ProgressIntervalDefault; negative: never.
	ProgressInterval time.Duration
	// SampleInterval: see SampleIntervalDefault; negative: no samples are
	// recorded (the run-wide figures of the progress are still read).
	SampleInterval time.Duration
	// Observers watch the run (live line, metrics); see Observer.
	Observers []Observer
	// Version is recorded as the crawler version of this process on the
	// run (crawl.run_processes). Default: from the build info.
	Version string
}

// Summary is how a run ended, as seen by this process.
type Summary struct {
	RunID  int64
	State  string // done, stopped, failed
	Reason string
	Pages  int64 // pages (or objects) committed by this process
	Rows   int64 // rows written by this process
	// Failed counts the run's failed tasks when it is done (all processes
	// together); skipped tasks (404, free private profiles) are not failures.
	Failed int64
}

// StopError is a failure that stops the whole run; the run can be resumed.
type StopError struct {
	RunID int64
	Err   error
}

func (e *StopError) Error() string {
	return fmt.Sprintf("run %d stopped: %v", e.RunID, e.Err)
}

func (e *StopError) Unwrap() error { return e.Err }

// NoSlotError is PostgreSQL refusing a connection for want of a free slot
// (SQLSTATE 53300): not an outage, a setting to change.
type NoSlotError struct {
	Err      error
	MaxConns int32
}

func (e NoSlotError) Error() string {
	return fmt.Sprintf("PostgreSQL has no free connection slot (SQLSTATE 53300): a crawler process opens at most database.max_conns connections (%d here); "+
		"lower it or run fewer processes, raise the server's max_connections, or put PgBouncer in front (docs/pgbouncer.md): %v", e.MaxConns, e.Err)
}

func (e NoSlotError) Unwrap() error { return e.Err }

// crawl is the state shared by the workers of one run in one process.
type crawl struct {
	opts     Options
	job      *jobfile.Job
	runID    int64
	client   *sources.Client
	budget   *budget.Hold
	frontier *frontier.Frontier
	log      *slog.Logger
	wake     chan struct{}
	pages    atomic.Int64
	rows     atomic.Int64
	mon      monitorState
	// work is the context of in-flight requests and commits: it outlives
	// the stop signal by opts.Grace.
	work context.Context
	// stop cancels the workers' context at once when an error stops the
	// run, before the failing task is released, so no other worker can
	// lease it in between.
	stop context.CancelCauseFunc
	// held are the tasks this process is working on, with the cancel of
	// each one's context (a lost lease cancels it with ErrLeaseLost).
	// Rescue leaves them alone even when their lease expired: during a
	// database outage longer than lease_timeout the heartbeat cannot renew
	// it, and taking the task over would buy its page again.
	heldMu sync.Mutex
	held   map[int64]heldTask
	// committer groups the page commits of all the tasks.
	committer *frontier.Committer
	// revisits record what the run sees of the items it revisits, and
	// apply an adaptive run's schedule.
	revisits *adaptive.Revisits
	// dying ends StopLinger after work: retryDB stops retrying then, so
	// that a stop during a database outage is bounded. finishing: the
	// run's end is being written, within FinishTimeout of its own.
	dying     context.Context
	finishing atomic.Bool
}

// Run works on run runID until its frontier is exhausted, ctx is cancelled
// (in-flight work gets opts.Grace to finish, then is released), or an error
// stops the run.
func Run(ctx context.Context, opts Options, job *jobfile.Job, runID int64) (*Summary, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Owner == "" {
		// host:pid is not unique across containers (pid 1, same hostname):
		// a random suffix keeps lease tags apart.
		host, _ := os.Hostname()
		opts.Owner = host + ":" + strconv.Itoa(os.Getpid()) + ":" + rand.Text()[:8]
	}
	opts.PollInterval = cmp.Or(opts.PollInterval, PollIntervalDefault)
	opts.Grace = cmp.Or(opts.Grace, GraceDefault)
	opts.OutageTimeout = cmp.Or(opts.OutageTimeout, OutageTimeoutDefault)
	opts.ProgressInterval = cmp.Or(opts.ProgressInterval, ProgressIntervalDefault)
	opts.SampleInterval = cmp.Or(opts.SampleInterval, SampleIntervalDefault)
	c := &crawl{
		opts:     opts,
		job:      job,
		runID:    runID,
		frontier: frontier.NewFrontier(opts.Pool, opts.Owner, time.Duration(job.Limits.LeaseTimeout)),
		log:      opts.Logger.With("run_id", runID),
		wake:     make(chan struct{}, 1),
		mon:      monitorState{started: time.Now()},
		held:     map[int64]heldTask{},
	}
	// Credits, bodies and the archive are each page's lease's (pageLease);
	// the process watches every outcome.
	cfg := opts.Client
	cfg.AfterResponse = func(_ context.Context, o sources.Outcome) { c.observeRequest(o) }
	client, err := sources.New(cfg)
	if err != nil {
		return nil, err
	}
	c.client = client
	// The processes on this run share the key's quota.
	stopShare := quota.Start(ctx, opts.Pool, runID, opts.Owner, client, c.inProgress, c.log)
	defer stopShare()

	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelWork(nil)
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.NewTimer(opts.Grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancelWork(fmt.Errorf("stop: in-flight work not finished within %s", opts.Grace))
		case <-work.Done():
		}
	})
	defer stopGrace()
	dying, cancelDying := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDying()
	stopDying := context.AfterFunc(work, func() { time.AfterFunc(StopLinger, cancelDying) })
	defer stopDying()
	c.dying = dying

	c.log.Info("run started", "job", job.Name, "workers", job.Limits.Workers, "max_conns", opts.Pool.Config().MaxConns, "owner", opts.Owner)
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	c.stop = stopRun
	g, gctx := errgroup.WithContext(runCtx)
	c.work = work
	c.committer = frontier.NewCommitter(work, opts.Pool, runID, c.frontier)
	// A reservation held by a live lease settles within its request's
	// retries, or comes back when the lease expires: the wait for one is
	// bounded well beyond both.
	c.budget = budget.NewHold(budget.Config{Pool: opts.Pool, RunID: runID, Owner: opts.Owner, Retry: c.retryDB, Log: c.log,
		WaitMax: max(opts.OutageTimeout, 2*time.Duration(job.Limits.LeaseTimeout)), Stopping: gctx.Done()})
	c.join(ctx)
	c.revisits, err = adaptive.Start(ctx, adaptive.Config{Pool: opts.Pool, Job: job, RunID: runID, Owner: opts.Owner,
		Poll: opts.PollInterval, Retry: c.retryDB, Credits: c.budget, Log: c.log})
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	// A stop signal while the process is still starting (a process joining
	// a run stopped a moment after it came) is a stop like any other:
	// stopped, resumable, with the run's end written below.
	if err == nil {
		// A run whose seeding from files was interrupted finishes it
		// first, so the frontier is whole before workers can find it
		// empty.
		err = c.retryDB(runCtx, func(ctx context.Context) error {
			_, err := SeedFiles(ctx, opts.Pool, job, runID, c.log)
			return err
		})
	}
	if err == nil {
		g.Go(func() error { return c.dispatch(gctx, g) })
		mctx, stopMonitor := context.WithCancel(gctx)
		background := []func(context.Context){c.monitor, c.budget.Beat, c.heartbeat}
		var bg sync.WaitGroup
		for _, f := range background {
			bg.Go(func() { f(mctx) })
		}
		err = g.Wait()
		stopMonitor()
		bg.Wait()
	} else if ctx.Err() != nil {
		err = nil // interrupted while starting or seeding: stopped, resumable
	}
	switch {
	case db.TooManyConnections(err):
		err = NoSlotError{Err: err, MaxConns: opts.Pool.Config().MaxConns}
	case db.PoolerStatements(err):
		err = fmt.Errorf("%w (through PgBouncer in transaction mode, add default_query_exec_mode=cache_describe to DATABASE_URL: docs/pgbouncer.md)", err)
	}
	sum := &Summary{RunID: runID, Pages: c.pages.Load(), Rows: c.rows.Load()}
	var stop *StopError
	switch {
	case errors.As(err, &stop):
		sum.State, sum.Reason = "stopped", stop.Err.Error()
	case err != nil:
		sum.State, sum.Reason = "failed", err.Error()
	case ctx.Err() != nil:
		sum.State, sum.Reason = "stopped", "interrupted"
		err = &StopError{RunID: runID, Err: errors.New("interrupted")}
	default:
		sum.State = "done"
	}
	// Whatever this process still holds goes back to the frontier, and the
	// run's state is written only if no other process is still working on
	// it. Bounded (FinishTimeout): a stop must not wait out a database
	// outage. The credits are given half of it, so that a database back
	// within it still gets the run's state; one that stays away leaves the
	// run running, interrupted, as a kill does: the next start continues
	// it (docs/operating.md).
	c.finishing.Store(true)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
	defer cancel()
	if n, rerr := c.frontier.ReleaseOwned(fctx, runID); rerr != nil {
		c.log.Warn("could not release this process's leases; they will expire", "err", rerr)
	} else if n > 0 {
		c.log.Info("released unfinished tasks", "tasks", n)
	}
	cctx, ccancel := context.WithTimeout(fctx, FinishTimeout/2)
	if berr := c.budget.Close(cctx); berr != nil {
		c.log.Warn("could not post the last answers' credits or give back the spare ones; they stay counted as spent", "err", berr)
	}
	ccancel()
	var final string
	serr := c.retryDB(fctx, func(ctx context.Context) (err error) {
		final, err = FinishRun(ctx, opts.Pool, runID, opts.Owner, sum.State, sum.Reason)
		return err
	})
	if lt := time.Duration(c.job.Limits.LeaseTimeout); serr == nil && final == "running" && errors.Is(err, budget.ErrExhausted) && ctx.Err() == nil {
		// Nothing more to buy here: outwait a dead holder's leases (bounded
		// by lease_timeout; a signal ends the wait), then give what follows
		// its own time.
		wctx, wcancel := context.WithTimeout(ctx, lt+lt/2+time.Second)
		final, serr = FinishRunAfterDead(wctx, opts.Pool, runID, opts.Owner, sum.State, sum.Reason, lt, c.log)
		wcancel()
		after, acancel := context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
		defer acancel()
		fctx = after
	}
	switch {
	case serr != nil:
		c.log.Warn("could not record the run's state", "err", serr)
	case final == "running" && sum.State == "done":
		sum.State = "running"
		sum.Reason = "other processes are still working on the run"
	case sum.State == "done":
		if sum.Failed, serr = CountFailed(fctx, opts.Pool, runID); serr != nil {
			c.log.Warn("could not count failed tasks", "err", serr)
		}
	case final == "stopped" && errors.Is(err, budget.ErrExhausted):
		// Not continued with this budget (rerun.go).
		if _, merr := markBudgetStop.Exec(fctx, opts.Pool, db.RunArg{RunID: runID}); merr != nil {
			c.log.Warn("could not record that the run's budget is spent", "err", merr)
		}
	}
	c.revisits.End(fctx, final) // what the run saw of the items it revisits ("": not known to have ended)
	sum.Reason = frontier.CleanReason(sum.Reason)
	c.finalProgress(fctx, sum.State)
	c.log.Info("run ended", "state", sum.State, "reason", sum.Reason, "pages", sum.Pages, "rows", sum.Rows, "failed_tasks", sum.Failed)
	return sum, err
}

// db.Retry retries op while the database is unreachable, up to the outage
// timeout, logging each wait.
func (c *crawl) retryDB(ctx context.Context, op func(context.Context) error) error {
	if c.dying != nil && !c.finishing.Load() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(c.dying, cancel)()
	}
	return db.Retry(ctx, c.opts.OutageTimeout, func(err error, wait time.Duration) {
		c.log.Warn("database unreachable; waiting", "err", err, "retry_in", wait)
	}, op)
}

// maxAside bounds the tasks a process sets aside (their request dearer
// than the budget has left) before it stops on its budget as if spent.
const maxAside = 1000

// MaxInProgress is the most tasks one process works on at once, whatever
// limits.workers or the client's concurrency target say.
const MaxInProgress = jobfile.MaxWorkers

// heldTask is a task this process works on: its lease, and the cancel of
// its context.
type heldTask struct {
	task   *frontier.Task
	cancel context.CancelCauseFunc
}

// task is a task this process works on: its lease, the lease's context in
// this process, and what the run's schedule said of its visit.
type task struct {
	*frontier.Task
	// lease is cancelled with frontier.ErrLeaseLost when the heartbeat
	// finds the lease lost, and at the run's hard stop.
	lease context.Context
	visit adaptive.Visit
	// rise, for a content list whose counter rose since its last walk, is
	// that rise and what the pages read so far explain of it (changed.go,
	// stopExplained); nil: the list is walked whole.
	rise *rise
}

// target is how many tasks the process keeps in progress: the client's
// limit of requests in flight (sources/concurrency), and as many again for
// tasks between two requests, capped by limits.workers when set (> 0). At
// most MaxInProgress.
func (c *crawl) target() int {
	n := 2 * c.client.Limit()
	if w := c.job.Limits.Workers; w > 0 {
		n = min(n, w)
	}
	return max(1, min(n, MaxInProgress))
}

// dispatch leases tasks in batches, as many as the target leaves room for,
// and works each in a goroutine of g, until the run has none left or ctx
// ends.
func (c *crawl) dispatch(ctx context.Context, g *errgroup.Group) error {
	for ctx.Err() == nil {
		room := c.target() - c.inProgress()
		var ts []*frontier.Task
		if room > 0 {
			var err error
			if ts, err = c.lease(ctx, room); err != nil {
				return err
			}
		}
		for _, ft := range ts {
			lctx, cancel := context.WithCancelCause(c.work)
			t := &task{Task: ft, lease: lctx}
			c.heldMu.Lock()
			c.held[t.ID] = heldTask{task: ft, cancel: cancel}
			c.heldMu.Unlock()
			g.Go(func() error {
				defer c.done(ft)
				if ctx.Err() != nil {
					return c.release(ft)
				}
				return c.process(ctx, c.log, t)
			})
		}
		if len(ts) > 0 && len(ts) == room {
			continue // there may be more
		}
		if room > 0 && len(ts) == 0 {
			if finished, err := c.noneReady(ctx); finished || err != nil {
				return err
			}
		}
		c.idle(ctx)
	}
	return nil
}

// noneReady is what the dispatcher does when no task was ready to lease:
// the run is finished when no task is pending or leased and this process
// works on none; when every task is leased, expired leases (of a dead
// process) are taken over.
func (c *crawl) noneReady(ctx context.Context) (finished bool, err error) {
	var pending, leased int64
	err = c.retryDB(ctx, func(ctx context.Context) (err error) {
		pending, leased, err = c.frontier.Active(ctx, c.runID)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return true, nil
		}
		return true, err
	}
	if pending == 0 && leased == 0 && c.inProgress() == 0 {
		// reuse.adaptive: credits left for the visits skipped for the budget.
		if c.secondLook(ctx) {
			return false, nil
		}
		if n := len(c.frontier.Aside()); n > 0 {
			// What is left waits for a larger budget.
			stop := &StopError{RunID: c.runID, Err: fmt.Errorf("%w: %d tasks wait for requests dearer than what is left", budget.ErrExhausted, n)}
			c.stop(stop)
			return true, stop
		}
		return true, nil
	}
	if pending == 0 && leased > int64(c.inProgress()) {
		// Some leases are not this process's: some may be a dead one's.
		var n int64
		err := c.retryDB(ctx, func(ctx context.Context) (err error) {
			n, err = c.frontier.Rescue(ctx, c.runID, c.inflightIDs()...)
			return err
		})
		if err != nil && ctx.Err() == nil {
			return true, err
		}
		if n > 0 {
			c.log.Info("took over expired leases", "tasks", n)
			c.wakeOthers()
		}
	}
	return false, nil
}

// done forgets a task this process no longer works on, and wakes the
// dispatcher: there is room for another.
func (c *crawl) done(t *frontier.Task) {
	c.heldMu.Lock()
	// Only this lease: a task set aside and released may be leased again
	// by this process before this worker ends.
	if h, ok := c.held[t.ID]; ok && h.task == t {
		h.cancel(nil)
		delete(c.held, t.ID)
	}
	c.heldMu.Unlock()
	c.wakeOthers()
}

// inProgress is how many tasks this process works on.
func (c *crawl) inProgress() int {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	return len(c.held)
}

// inflightIDs lists the tasks this process is working on.
func (c *crawl) inflightIDs() []int64 {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	ids := make([]int64, 0, len(c.held))
	for id := range c.held {
		ids = append(ids, id)
	}
	return ids
}

// heartbeat renews the leases of every task this process works on, one
// statement for all, every third of the lease timeout until ctx ends; a
// lease it could not renew is lost: its task's context is cancelled with
// ErrLeaseLost, so its request is called off and its page discarded.
func (c *crawl) heartbeat(ctx context.Context) {
	loop.Every(ctx, max(time.Duration(c.job.Limits.LeaseTimeout)/3, 10*time.Millisecond), nil, func() {
		c.heldMu.Lock()
		tasks := make([]*frontier.Task, 0, len(c.held))
		for _, h := range c.held {
			tasks = append(tasks, h.task)
		}
		c.heldMu.Unlock()
		if len(tasks) == 0 {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, max(time.Duration(c.job.Limits.LeaseTimeout)/3, time.Second))
		renewed, err := c.frontier.ExtendLeases(sctx, tasks)
		cancel()
		if err != nil {
			// The database is away: the leases run on, and Rescue spares
			// this process's own when they expire.
			c.log.Debug("lease heartbeat failed", "err", err)
			return
		}
		c.heldMu.Lock()
		for _, t := range tasks {
			if h, ok := c.held[t.ID]; ok && !renewed[t.ID] && h.task.Token == t.Token {
				h.cancel(frontier.ErrLeaseLost)
			}
		}
		c.heldMu.Unlock()
	})
}

// lease takes up to n tasks. The statement itself is not interrupted by a
// stop (a cancelled lease may still commit on the server; its tasks are
// then given back by ReleaseOwned at the end of the run), but a stop ends
// the retries while the database is away.
func (c *crawl) lease(ctx context.Context, n int) ([]*frontier.Task, error) {
	ts, err := c.frontier.LeaseN(context.WithoutCancel(ctx), c.runID, n, func(_ context.Context, op func(context.Context) error) error {
		return c.retryDB(ctx, func(context.Context) error {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			return op(sctx)
		})
	})
	if err != nil && ctx.Err() != nil {
		return nil, nil
	}
	return ts, err
}

// idle waits for a wake-up (a task ended, or one found new tasks) or the
// poll interval.
func (c *crawl) idle(ctx context.Context) {
	timer := time.NewTimer(c.opts.PollInterval)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-c.wake:
	case <-timer.C:
	}
}

func (c *crawl) wakeOthers() { loop.Kick(c.wake) }

// process walks a task page by page, committing each page with its cursor.
// ctx is the stop signal: between pages it releases the task; requests and
// commits run under c.work, which outlives ctx by the grace period. A
// heartbeat keeps the lease alive while a page is fetched and committed.
func (c *crawl) process(ctx context.Context, log *slog.Logger, t *task) error {
	k := kinds.Of(t.Kind)
	if k == nil {
		return c.finish(t.Task, kinds.OutcomeFailedUnstorable, "unknown task kind "+t.Kind)
	}
	if err := sinks.CheckKey("task key", t.Key); err != nil {
		// Its rows could not be keyed: fail before buying anything.
		return c.finish(t.Task, kinds.OutcomeFailedUnstorable, t.Kind+": "+err.Error())
	}
	if t.Reexpand && k.Reexpand != nil {
		return c.reexpand(ctx, log, k, t) // found closer to a seed after its fetch
	}
	if skipped, err := c.skipAdaptive(ctx, log, k, t); skipped || err != nil {
		return err // reuse.adaptive: the run's schedule skips it
	}
	defer c.revisits.Ended(&t.Task.Task) // a visit under way no more, to record
	// The schedule decides for the kinds it schedules, not refresh_after.
	if !adaptive.Scheduled(t.Kind) || !c.job.Reuse.Adaptive {
		if skipped, err := c.skipFresh(ctx, log, k, t); skipped || err != nil {
			return err // refresh_after: an earlier run's fetch is fresh
		}
	}
	if skipped, err := c.skipUnchanged(ctx, log, k, t); skipped || err != nil {
		return err // changed_only: its counter shows no change since its last walk
	}
	// prev is the page whose commit was sent while the next one is
	// fetched; page reads it before anything else touches the task.
	var prev *sentPage
	for {
		res, sent, err := c.page(k, t, prev)
		prev = nil
		if err != nil {
			return c.pageFailed(log, t, err)
		}
		if res.Stop != "" {
			return nil
		}
		t.Cursor, t.Pages, t.Items = res.Next, t.Pages+1, t.Items+res.Items
		prev = sent
		if ctx.Err() != nil {
			// Stopping: the last page's commit is read, and a failure of
			// it is handled as any other.
			if err := c.await(prev); err != nil {
				return c.pageFailed(log, t, err)
			}
			return c.release(t.Task)
		}
	}
}

// pageFailed ends t's lease after page (or the commit of the page before
// it) failed with err, according to the kind of failure.
func (c *crawl) pageFailed(log *slog.Logger, t *task, err error) error {
	var fe fetchError
	switch {
	case errors.Is(err, frontier.ErrLeaseLost):
		log.Warn("lease lost; page discarded, the task is its new owner's", "task_id", t.ID, "kind", t.Kind)
		return nil
	case errors.Is(err, budget.ErrStopping):
		return c.release(t.Task) // it was waiting for the budget: nothing sent
	case errors.As(err, new(*kinds.UnstorableError)):
		// A single-object page whose key cannot be stored: only this
		// task fails, and a resume does not buy the object again.
		log.Warn("object cannot be stored; task failed", "task_id", t.ID, "kind", t.Kind, "err", err)
		return c.finish(t.Task, kinds.OutcomeFailedUnstorable, err.Error())
	case errors.As(err, &fe):
		return c.fail(log, t.Task, fe.err)
	case db.IsData(err):
		// This page cannot be stored (the upstream sent something the
		// schema refuses): the task fails with the reason, the run goes on.
		log.Warn("page cannot be stored; task failed", "task_id", t.ID, "kind", t.Kind, "err", err)
		return c.finish(t.Task, kinds.OutcomeFailedUnstorable, "cannot store page: "+err.Error())
	default:
		c.stop(err)
		_ = c.release(t.Task)
		if c.work.Err() != nil {
			return nil
		}
		return err
	}
}

// fetched is a page the kind mapped, with its body when the job archives
// pages.
type fetched struct {
	*kinds.Result
	archive *frontier.ArchivedPage
	walk    *frontier.ContentWalk // a content list's walk ends (walkEnd)
}

// sentPage is a page whose commit is submitted to the committer, its
// outcome not read yet. It keeps none of the page's rows: the committer's
// statements are what a retry sends again, and they go once the page is
// committed, an answer time before its task reads the outcome.
type sentPage struct {
	sc       *frontier.GroupCommit
	rows     int           // the page's rows, counted once committed
	children bool          // the page added tasks
	sending  time.Duration // how long writing the batch took
	release  func()        // the page's hold on the in-flight body budget
	done     bool          // await ran: err is its result
	err      error
}

// await reads a sent page's commit: a failure the synchronous commit
// would have retried (a lost connection, a conflict) is retried the same
// way; the page then counts as committed.
func (c *crawl) await(p *sentPage) error {
	if p == nil {
		return nil
	}
	if p.done {
		return p.err
	}
	p.done = true
	p.err = c.awaitOnce(p)
	return p.err
}

func (c *crawl) awaitOnce(p *sentPage) error {
	defer p.release()
	// Under c.work, as the synchronous commit: the run's hard stop ends a
	// stuck read (a batch the server has whole still commits).
	ctx := c.work
	start := time.Now()
	err := p.sc.Wait(ctx)
	if cl := db.Classify(err); cl.Retryable() || cl == db.Conflict {
		err = c.retryCommit(ctx, p.sc.Retry)
	} else if errors.Is(err, frontier.ErrAlreadyApplied) {
		err = nil
	}
	if err != nil {
		return err // the lease's end settles what it carried (flush)
	}
	// The worker's time on the commit: writing it, and reading results
	// that mostly came while the next page was fetched.
	c.committed(p.rows, p.children, p.sending+time.Since(start))
	return nil
}

// committed counts a page of rows rows whose commit went through.
func (c *crawl) committed(rows int, children bool, took time.Duration) {
	c.pages.Add(1)
	c.rows.Add(int64(rows))
	c.observeCommit(rows, took)
	if children {
		c.wakeOthers()
	}
}

// fetchError marks an error of the handler (the upstream or the client), as
// opposed to one of the commit.
type fetchError struct{ err error }

func (e fetchError) Error() string { return e.err.Error() }
func (e fetchError) Unwrap() error { return e.err }

// page fetches one page while a heartbeat keeps the task's lease alive
// (if the lease is lost meanwhile, the request is cancelled), then reads
// prev's commit, the previous page's, which went on meanwhile, and commits
// this one. A page that is not the task's last is only sent (Frontier.Send):
// its results are read by the next call, or by await, so that the list's
// next request leaves without waiting for them. The server commits a batch
// it has whole even if the process dies before reading its results, so a
// kill still costs at most the request in flight. When a sent commit fails
// for good (the lease was lost, or the database refuses the page), the
// next page, already requested, is discarded: one credit, and only then.
func (c *crawl) page(k *kinds.Kind, t *task, prev *sentPage) (*fetched, *sentPage, error) {
	fctx, cancel := context.WithCancelCause(t.lease)
	defer cancel(nil)
	if prev != nil {
		// The next request leaves once the previous page's commit is
		// written to the server, which commits it even if this process
		// dies: a kill costs at most the request in flight.
		<-prev.sc.Sent()
	}
	// What the page's requests spend and wait for: the budget's credits,
	// the previous page's commit, and the page's bodies, which stay counted
	// against the client's in-flight budget until its rows are committed
	// (or it is given up).
	bodies := &bodyHold{}
	lease := &pageLease{budget: c.budget, prev: prev, await: c.await, archive: c.job.Archive, bodies: bodies}
	held := true
	defer func() {
		// A request whose answer never came is taken as not billed.
		c.budget.Release(&lease.reserved)
		if held {
			bodies.release()
		}
		// Nothing of this page keeps the previous one once it is done:
		// its commit (sent, unread) holds only the bodies it counts.
		lease.prev = nil
	}()
	// The previous page's commit is read before a statement of the lease's
	// own, and before a read waits for the body budget it holds (the
	// lease's awaitPrev); its failure stays the answer for the rest of the
	// page.
	mapped, err := k.Fetch(fctx, c.client, lease, c.job, &t.Task.Task)
	// The previous page's commit comes first: if it failed, this page
	// (bought on the strength of its cursor) is discarded, and its billed
	// answer stays in the lease's credits for the end of the lease.
	if perr := c.await(prev); perr != nil {
		return nil, nil, perr
	}
	if err != nil {
		if errors.Is(context.Cause(fctx), frontier.ErrLeaseLost) {
			return nil, nil, frontier.ErrLeaseLost
		}
		return nil, nil, fetchError{err}
	}
	res := &fetched{Result: mapped, archive: lease.archived()}
	t.visit.Bought() // an adaptive visit's page: other workers count it from now
	if err := c.stopAtSeen(fctx, k, t, res.Result); err != nil {
		if errors.Is(context.Cause(fctx), frontier.ErrLeaseLost) {
			return nil, nil, frontier.ErrLeaseLost
		}
		return nil, nil, err
	}
	if err := c.stopExplained(fctx, k, t, res.Result); err != nil {
		if errors.Is(context.Cause(fctx), frontier.ErrLeaseLost) {
			return nil, nil, frontier.ErrLeaseLost
		}
		return nil, nil, err
	}
	res.walk = walkEnd(k, &t.Task.Task, res.Result)
	children := c.children(res.Result)
	start := time.Now()
	// The committer sends the page's commit with other tasks' pages (it
	// outlives this page's context, not the run's hard stop). Not the last
	// page: the next call reads it, after its request left.
	if g, err := c.committer.Submit(t.Task, c.pageCommit(res, children), bodies.release); err == nil {
		held = false
		sent := &sentPage{sc: g, rows: res.Batch.Len(), children: len(res.Children) > 0, sending: time.Since(start), release: bodies.release}
		if res.Stop == "" {
			return res, sent, nil
		}
		if err := c.await(sent); err != nil {
			return nil, nil, err
		}
		return res, nil, nil
	}
	if err := c.commit(fctx, t.Task, res, children); err != nil {
		if errors.Is(context.Cause(fctx), frontier.ErrLeaseLost) {
			return nil, nil, frontier.ErrLeaseLost
		}
		return nil, nil, err
	}
	c.committed(res.Batch.Len(), len(res.Children) > 0, time.Since(start))
	return res, nil, nil
}

// children are the tasks res discovered that the job keeps: within
// max_depth, with keys that can be stored (others are counted as drops).
func (c *crawl) children(res *kinds.Result) []kinds.NewTask {
	children := make([]kinds.NewTask, 0, len(res.Children))
	for _, ch := range res.Children {
		if ch.Depth > c.job.Limits.MaxDepth {
			continue
		}
		if err := sinks.CheckKey(ch.Kind+" task key", ch.Key); err != nil {
			// Entries are checked before they become tasks; this is the
			// backstop for keys built from them (a reel's URL).
			res.Drop(err.Error())
			continue
		}
		children = append(children, ch)
	}
	return children
}

// pageCommit is what committing res records.
func (c *crawl) pageCommit(res *fetched, children []kinds.NewTask) frontier.PageCommit {
	p := frontier.PageCommit{Rows: &res.Batch, Children: children, Next: res.Next, Items: res.Items, Stop: res.Stop, Outcome: res.Outcome, Drops: res.Drops, Saved: res.Saved, Archive: res.archive, Walk: res.walk}
	if res.Counted {
		p.NewItems = &res.New
	}
	return p
}

// commit writes a page's rows, its children and the task's progress in one
// transaction, retried with back-off on deadlock or serialization failure,
// and while the database is unreachable. A retried commit that had in fact
// gone through is recognised (Frontier.Commit answers ErrAlreadyApplied),
// so a page is never counted twice.
func (c *crawl) commit(ctx context.Context, t *frontier.Task, res *fetched, children []kinds.NewTask) error {
	return c.retryCommit(ctx, func(ctx context.Context) error {
		return c.frontier.Commit(ctx, c.runID, t, c.pageCommit(res, children))
	})
}

// retryCommit runs a page's commit, send, as commit does: retried on
// conflicts and while the database is away, a retry that finds the page
// already applied counting as committed.
func (c *crawl) retryCommit(ctx context.Context, send func(context.Context) error) error {
	return c.retryDB(ctx, func(ctx context.Context) error {
		var err error
		_ = backoff.Retry(func() error {
			err = send(ctx)
			if db.Classify(err) == db.Conflict {
				return err
			}
			return backoff.Permanent(err)
		}, db.ConflictBackOff(ctx))
		if errors.Is(err, frontier.ErrAlreadyApplied) {
			return nil
		}
		return err
	})
}

// fail ends a task according to the class of its error. Errors that stop
// the run release the task so a resume picks it up again.
func (c *crawl) fail(log *slog.Logger, t *frontier.Task, err error) error {
	if c.work.Err() != nil {
		return c.release(t)
	}
	class := sources.ClassOf(err)
	var dear *budget.TooDearError
	switch {
	case errors.As(err, &dear):
		// Cheaper work may still fit: only this task waits, pending, for
		// a larger budget (noneReady stops the run once nothing else is
		// left).
		log.Info("task set aside: its request costs more than the budget has left", "task_id", t.ID, "kind", t.Kind,
			"credits", dear.Credits, "left", dear.Left)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(c.work), 5*time.Second)
		defer cancel()
		if err := c.frontier.SetAside(rctx, t); err != nil {
			c.log.Warn("release failed; the lease will expire", "task_id", t.ID, "err", err)
		}
		if n := len(c.frontier.Aside()); n >= maxAside {
			// Every lease skips those set aside: past a bound, the budget
			// is as good as spent for this process.
			stop := &StopError{RunID: c.runID, Err: fmt.Errorf("%w: %d tasks wait for requests dearer than what is left", budget.ErrExhausted, n)}
			c.stop(stop)
			return stop
		}
		return nil
	case class.StopsRun(), class == sources.ClassRateLimited, errors.Is(err, budget.ErrExhausted):
		// Throttled beyond the client's patience: stop resumable rather than
		// fail the task, since the data is still to be had.
		stop := &StopError{RunID: c.runID, Err: err}
		c.stop(stop)
		_ = c.release(t)
		return stop
	case class == sources.ClassNotFound:
		return c.finish(t, kinds.OutcomeSkippedNotFound, "not found: "+err.Error())
	case class == sources.ClassRetired:
		return c.finish(t, kinds.OutcomeSkippedRetired, "retired: "+err.Error())
	case class == sources.ClassBlocked:
		// The platform blocked this item: it fails, a resume does not ask again.
		return c.finish(t, kinds.OutcomeFailedBlocked, "blocked: "+err.Error())
	case class != 0:
		log.Warn("task failed", "task_id", t.ID, "kind", t.Kind, "err", err)
		return c.finish(t, kinds.OutcomeFailed, err.Error())
	default:
		// Not the upstream's doing (a bug, or the database gone for longer
		// than the outage timeout): stop the run.
		ferr := fmt.Errorf("task %d (%s %s): %w", t.ID, t.Kind, t.Key, err)
		c.stop(ferr)
		_ = c.release(t)
		return ferr
	}
}

func (c *crawl) finish(t *frontier.Task, outcome kinds.Outcome, reason string) error {
	err := c.retryDB(context.WithoutCancel(c.work), func(ctx context.Context) error {
		return c.frontier.Finish(ctx, t, outcome, reason)
	})
	if errors.Is(err, frontier.ErrLeaseLost) {
		return nil
	}
	return err
}

// abandon stops the run for err, which stopped what t's work did (what),
// and hands t back for the resume: the failure is not the task's (the
// database's, most often).
func (c *crawl) abandon(t *task, what string, err error) error {
	err = fmt.Errorf("task %d (%s %s): %s: %w", t.ID, t.Kind, t.Key, what, err)
	c.stop(err)
	_ = c.release(t.Task)
	return err
}

// release hands the task back; failure is only logged, since the lease
// expires by itself.
func (c *crawl) release(t *frontier.Task) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(c.work), 5*time.Second)
	defer cancel()
	if err := c.frontier.Release(rctx, t); err != nil {
		c.log.Warn("release failed; the lease will expire", "task_id", t.ID, "err", err)
	}
	return nil
}
