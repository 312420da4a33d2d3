package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
)

// PollIntervalDefault is how often an idle worker looks for tasks that other
// workers or processes may have added.
const PollIntervalDefault = 250 * time.Millisecond

// Options are the parts a run is built from.
type Options struct {
	Pool   *pgxpool.Pool
	Client *sources.Client
	Logger *slog.Logger
	// Owner identifies this process in leases. Default host:pid.
	Owner string
	// PollInterval: see PollIntervalDefault.
	PollInterval time.Duration
}

// Summary is how a run ended.
type Summary struct {
	RunID   int64
	State   string // done, stopped, failed
	Reason  string
	Pages   int64 // pages (or objects) committed by this process
	Rows    int64 // rows written by this process
	Fetches int64 // upstream calls that returned data, by this process
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

// crawl is the state shared by the workers of one run in one process.
type crawl struct {
	opts     Options
	job      *Job
	runID    int64
	client   *sources.Client
	frontier *Frontier
	log      *slog.Logger
	wake     chan struct{}
	pages    atomic.Int64
	rows     atomic.Int64
}

// SeedTasks turns the job's seeds into the run's first tasks.
func SeedTasks(job *Job) []NewTask {
	var seeds []NewTask
	for _, h := range job.Seeds.ShortVideo.Profiles {
		seeds = append(seeds, NewTask{Kind: KindSVProfile, Key: sources.NormalizeHandle(h)})
	}
	return seeds
}

// Start records a new run of job with its seeds and returns its id.
func Start(ctx context.Context, pool *pgxpool.Pool, job *Job) (int64, error) {
	return CreateRun(ctx, pool, job, SeedTasks(job))
}

// Run works on run runID until its frontier is exhausted, ctx is cancelled,
// or an error stops the run.
func Run(ctx context.Context, opts Options, job *Job, runID int64) (*Summary, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Owner == "" {
		host, _ := os.Hostname()
		opts.Owner = host + ":" + strconv.Itoa(os.Getpid())
	}
	opts.PollInterval = cmp.Or(opts.PollInterval, PollIntervalDefault)
	c := &crawl{
		opts:     opts,
		job:      job,
		runID:    runID,
		client:   opts.Client,
		frontier: NewFrontier(opts.Pool, opts.Owner, time.Duration(job.Limits.LeaseTimeout)),
		log:      opts.Logger.With("run_id", runID),
		wake:     make(chan struct{}, job.Limits.Workers),
	}
	c.log.Info("run started", "job", job.Name, "workers", job.Limits.Workers, "owner", opts.Owner)
	g, gctx := errgroup.WithContext(ctx)
	for w := range job.Limits.Workers {
		g.Go(func() error { return c.worker(gctx, w) })
	}
	err := g.Wait()
	sum := &Summary{RunID: runID, Pages: c.pages.Load(), Rows: c.rows.Load()}
	bg := context.WithoutCancel(ctx)
	var stop *StopError
	switch {
	case errors.As(err, &stop):
		sum.State, sum.Reason = "stopped", stop.Err.Error()
	case err != nil:
		sum.State, sum.Reason = "failed", err.Error()
	case ctx.Err() != nil:
		sum.State, sum.Reason = "stopped", "interrupted"
		err = &StopError{RunID: runID, Err: context.Cause(ctx)}
	default:
		sum.State = "done"
	}
	if serr := SetRunState(bg, opts.Pool, runID, sum.State, sum.Reason); serr != nil && err == nil {
		err = serr
	}
	c.log.Info("run ended", "state", sum.State, "reason", sum.Reason, "pages", sum.Pages, "rows", sum.Rows)
	return sum, err
}

// worker leases and processes tasks until the run has none left.
func (c *crawl) worker(ctx context.Context, id int) error {
	log := c.log.With("worker", id)
	for {
		if ctx.Err() != nil {
			return nil
		}
		t, err := c.lease(ctx)
		if err != nil {
			return err
		}
		if t != nil && ctx.Err() != nil {
			return c.release(ctx, t)
		}
		if t == nil {
			pending, leased, err := c.frontier.Active(ctx, c.runID)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			if pending == 0 && leased == 0 {
				return nil
			}
			c.idle(ctx)
			continue
		}
		if err := c.process(ctx, log, t); err != nil {
			return err
		}
	}
}

// lease takes a task without letting cancellation interrupt the statement:
// a cancelled lease may still commit on the server, leaving a task leased
// that nobody would know of until its lease expired.
func (c *crawl) lease(ctx context.Context) (*Task, error) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return c.frontier.Lease(lctx, c.runID)
}

// idle waits for a wake-up from another worker or the poll interval.
func (c *crawl) idle(ctx context.Context) {
	timer := time.NewTimer(c.opts.PollInterval)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-c.wake:
	case <-timer.C:
	}
}

func (c *crawl) wakeOthers() {
	for range cap(c.wake) {
		select {
		case c.wake <- struct{}{}:
		default:
			return
		}
	}
}

// process walks a task page by page, committing each page with its cursor.
func (c *crawl) process(ctx context.Context, log *slog.Logger, t *Task) error {
	h, ok := handlers[t.Kind]
	if !ok {
		return c.finish(ctx, t, StateFailed, "unknown task kind "+t.Kind)
	}
	for {
		res, err := h(ctx, c, t)
		if err != nil {
			return c.fail(ctx, log, t, err)
		}
		if err := c.commit(ctx, t, res); err != nil {
			if errors.Is(err, ErrLeaseLost) {
				log.Warn("lease lost; page discarded", "task_id", t.ID, "kind", t.Kind)
				return nil
			}
			if ctx.Err() != nil {
				return c.release(ctx, t)
			}
			return err
		}
		if len(res.Children) > 0 {
			c.wakeOthers()
		}
		if res.Stop != "" {
			return nil
		}
		t.Cursor, t.Pages = res.Next, t.Pages+1
		if ctx.Err() != nil {
			return c.release(ctx, t)
		}
	}
}

// commit writes a page's rows, its children and the task's progress in one
// transaction, retried on deadlock or serialization failure.
func (c *crawl) commit(ctx context.Context, t *Task, res *result) error {
	children := make([]NewTask, 0, len(res.Children))
	for _, ch := range res.Children {
		if ch.Depth <= c.job.Limits.MaxDepth {
			children = append(children, ch)
		}
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, c.opts.Pool, func(tx pgx.Tx) error {
			if err := sinks.Write(ctx, tx, c.runID, &res.Batch); err != nil {
				return err
			}
			if err := addTasks(ctx, tx, c.runID, &t.ID, children); err != nil {
				return fmt.Errorf("add tasks: %w", err)
			}
			return c.frontier.Advance(ctx, tx, t, res.Next, res.Items, res.Stop)
		})
		if !isTransient(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	c.pages.Add(1)
	c.rows.Add(int64(res.Batch.Len()))
	return nil
}

func isTransient(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// fail ends a task according to the class of its error. Errors that stop
// the run release the task so a resume picks it up again.
func (c *crawl) fail(ctx context.Context, log *slog.Logger, t *Task, err error) error {
	if ctx.Err() != nil {
		return c.release(ctx, t)
	}
	class := sources.ClassOf(err)
	switch {
	case class.StopsRun():
		_ = c.release(ctx, t)
		return &StopError{RunID: c.runID, Err: err}
	case class == sources.ClassNotFound:
		return c.finish(ctx, t, StateSkipped, "not found: "+err.Error())
	case class != 0:
		log.Warn("task failed", "task_id", t.ID, "kind", t.Kind, "err", err)
		return c.finish(ctx, t, StateFailed, err.Error())
	default:
		// Not the upstream's doing (a bug or the database): stop the run.
		_ = c.release(ctx, t)
		return fmt.Errorf("task %d (%s %s): %w", t.ID, t.Kind, t.Key, err)
	}
}

func (c *crawl) finish(ctx context.Context, t *Task, state, reason string) error {
	err := c.frontier.Finish(context.WithoutCancel(ctx), t, state, reason)
	if errors.Is(err, ErrLeaseLost) {
		return nil
	}
	return err
}

func (c *crawl) release(ctx context.Context, t *Task) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := c.frontier.Release(rctx, t); err != nil {
		c.log.Warn("release failed; the lease will expire", "task_id", t.ID, "err", err)
	}
	return nil
}
