package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
)

// skipAdaptive applies the run's schedule to t before it is fetched
// (adaptive.Revisits.Decide): a task the schedule skips ends skipped, a
// profile expanding to its lists from stored data (when that cannot be
// read, it is visited instead), a list to its entries as the job's runs
// know it (kinds.Kind.Known); a visit it lets through is marked with what
// the schedule said. It reports whether t ended.
func (c *crawl) skipAdaptive(ctx context.Context, log *slog.Logger, k *kinds.Kind, t *task) (bool, error) {
	v, err := c.revisits.Decide(ctx, log, &t.Task.Task)
	if err != nil && ctx.Err() != nil {
		_ = c.release(t.Task) // the run stops: the task waits for its resume
		return true, nil
	}
	if err != nil {
		return true, c.abandon(t, "adaptive schedule", err)
	}
	if !v.Skip {
		t.visit = v.Visit
		return false, nil
	}
	var children []kinds.NewTask
	if k.Known != nil {
		// A list leads to its entries as the job's runs know it, each
		// decided by the schedule (a profile due by max_age is visited).
		err := c.retryDB(ctx, func(ctx context.Context) error {
			all, err := k.Known(ctx, c.opts.Pool, c.job, &t.Task.Task, knownWithin(c.job))
			children = c.children(&kinds.Result{Children: all})
			return err
		})
		if err != nil && ctx.Err() != nil {
			_ = c.release(t.Task) // the run stops: the task waits for its resume
			return true, nil
		}
		if err != nil {
			return true, c.abandon(t, "entries of a list skipped by the adaptive schedule", err)
		}
	}
	if k.Fresh != nil && k.Fresh.Expand != nil {
		var fromStorage bool
		err := c.retryDB(ctx, func(ctx context.Context) (err error) {
			children, fromStorage, err = storedChildren(ctx, c.opts.Pool, c.job, k, &t.Task.Task)
			return err
		})
		if err != nil && ctx.Err() != nil {
			_ = c.release(t.Task) // the run stops: the task waits for its resume
			return true, nil
		}
		if err != nil || !fromStorage {
			if err != nil {
				log.Warn("could not expand a profile from stored data; visited", "task_id", t.ID, "err", err)
			}
			t.visit = c.revisits.Admit(&t.Task.Task, v)
			return false, nil // its lists cannot be found without a fetch
		}
	}
	err = c.retryDB(context.WithoutCancel(c.work), func(ctx context.Context) error {
		return c.frontier.EndFresh(ctx, c.runID, t.Task, v.Outcome, v.Reason, v.Saved, children)
	})
	switch {
	case errors.Is(err, frontier.ErrLeaseLost):
		return true, nil
	case err != nil:
		return true, c.abandon(t, "adaptive schedule", err)
	}
	log.Debug("not revisited", "task_id", t.ID, "kind", t.Kind, "key", t.Key, "reason", v.Reason)
	if len(children) > 0 {
		c.wakeOthers()
	}
	return true, nil
}

// secondLook gives the credits an adaptive run's estimates kept and did
// not spend to the visits skipped for the budget, once the frontier is
// done (adaptive.Revisits.SecondLook). It reports whether the dispatcher
// should go on: some went back to pending, or another worker's second look
// sent some meanwhile.
func (c *crawl) secondLook(ctx context.Context) bool {
	n, looked := c.revisits.SecondLook(ctx)
	if !looked {
		return false
	}
	if n > 0 {
		c.wakeOthers()
		return true
	}
	// None here: another process's (or worker's) second look may have
	// sent some back since this worker found the frontier done.
	var pending, leased int64
	err := c.retryDB(ctx, func(ctx context.Context) (err error) {
		pending, leased, err = c.frontier.Active(ctx, c.runID)
		return err
	})
	return err == nil && pending+leased > 0
}

// knownWithin is how far back a list not read tonight knows its entries
// (kinds.Kind.Known): twice max_age. A list is visited at least every
// max_age and walked whole at least every max_age (stop_at_seen does not
// cut an older one), so when it is skipped, or cut, its last whole walk is
// at most twice max_age old; within max_age only, an entry that walk saw
// dropped out exactly when its profile fell due (seed 1567 of the
// simulator). The schedule forgets an item unreached that long.
func knownWithin(j *jobfile.Job) time.Duration { return 2 * time.Duration(j.Reuse.MaxAge) }
