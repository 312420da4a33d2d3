package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/sinks"
)

// Reuse across runs (docs/reuse.md). Two opt-in rules make a
// nightly rerun of a job buy only what changed:
//
//   - refresh_after: a task whose entity another run fetched successfully
//     (its task ended done) within the task's window ends skipped, reason
//     "fresh: ...", without a request; its kind's FreshRule expands it from
//     the stored data (a fresh profile still fans out to its lists).
//   - stop_at_seen: a newest-first list (its kind has Seen) ends, reason
//     "stop_at_seen: ...", at the first page whose entries earlier runs all
//     stored, unless a full walk of it is due (reuse.full_walk_every,
//     reuse.full_walk_after).
//
// Both record the credits they saved in crawl.tasks.credits_saved, summed
// by the view crawl.run_ledger next to the credits billed.

type lastWalkParams struct {
	Kind  string `db:"kind"`
	Key   string `db:"key"`
	RunID int64  `db:"run_id"`
}

// freshOf says whether t is fresh (refresh_after), with the fetch that
// makes it so and the tasks it expands to from stored data (those deeper
// than limits.max_depth left out).
func freshOf(ctx context.Context, q db.Querier, j *jobfile.Job, k *kinds.Kind, t *kinds.Task, runID int64) (kinds.Fetch, []kinds.NewTask, bool, error) {
	if k.Fresh == nil || t.RefreshAfter <= 0 || t.Pages > 0 {
		return kinds.Fetch{}, nil, false, nil
	}
	last := k.Fresh.Last
	if last == nil {
		last = kinds.LastDone
	}
	f, ok, err := last(ctx, q, t, runID, t.RefreshAfter)
	if err != nil || !ok {
		return kinds.Fetch{}, nil, false, err
	}
	children, ok, err := storedChildren(ctx, q, j, k, t)
	if err != nil || !ok {
		return kinds.Fetch{}, nil, false, err
	}
	return f, children, true, nil
}

// storedChildren are the tasks t would create, from the data an earlier
// fetch stored (its kind's FreshRule.Expand; none without one), those
// deeper than limits.max_depth left out; ok is false when the stored data
// cannot say.
func storedChildren(ctx context.Context, q db.Querier, j *jobfile.Job, k *kinds.Kind, t *kinds.Task) ([]kinds.NewTask, bool, error) {
	if k.Fresh == nil || k.Fresh.Expand == nil {
		return nil, true, nil
	}
	all, ok, err := k.Fresh.Expand(ctx, q, j, t)
	if err != nil || !ok {
		return nil, false, err
	}
	var children []kinds.NewTask
	for _, ch := range all {
		if ch.Depth <= j.Limits.MaxDepth && sinks.CheckKey(ch.Kind+" task key", ch.Key) == nil {
			children = append(children, ch)
		}
	}
	return children, true, nil
}

// freshReason is the reason of a task skipped as fresh; its first two
// colon-separated parts group such tasks in crawler status.
func freshReason(t *kinds.Task, f kinds.Fetch) string {
	return fmt.Sprintf("fresh: within refresh_after %s: fetched by run %d at %s", t.RefreshAfter, f.RunID, f.At.UTC().Format(time.RFC3339))
}

// skipFresh ends t as skipped when refresh_after finds it fresh, adding
// the tasks it expands to from stored data in the same transaction; it
// reports whether it did. Nothing is bought.
func (c *crawl) skipFresh(ctx context.Context, log *slog.Logger, k *kinds.Kind, t *task) (bool, error) {
	if k.Fresh == nil || t.RefreshAfter <= 0 || t.Pages > 0 {
		return false, nil
	}
	var (
		f        kinds.Fetch
		children []kinds.NewTask
		fresh    bool
	)
	err := c.retryDB(ctx, func(ctx context.Context) (err error) {
		f, children, fresh, err = freshOf(ctx, c.opts.Pool, c.job, k, &t.Task.Task, c.runID)
		return err
	})
	if err == nil && fresh {
		err = c.retryDB(context.WithoutCancel(c.work), func(ctx context.Context) error {
			return c.frontier.EndFresh(ctx, c.runID, t.Task, kinds.OutcomeSkippedFresh, freshReason(&t.Task.Task, f), 1, children)
		})
	}
	switch {
	case errors.Is(err, frontier.ErrLeaseLost):
		return true, nil
	case err != nil && ctx.Err() != nil:
		_ = c.release(t.Task) // the run stops (another worker spent the budget): not this task's failure
		return true, nil
	case err != nil:
		return true, c.abandon(t, "refresh_after", err)
	case fresh:
		log.Debug("fresh; not fetched", "task_id", t.ID, "kind", t.Kind, "key", t.Key, "fetched_by_run", f.RunID)
		if len(children) > 0 {
			c.wakeOthers()
		}
	}
	return fresh, nil
}

// ListWalk is what stop_at_seen knows of a list from earlier runs.
type ListWalk struct {
	Kind, Key string
	// Found: an earlier run walked the list whole; then Run, Pages and Age
	// are that walk's, and Cut counts the walks stop_at_seen cut short
	// since.
	Found bool
	Run   int64
	Pages int
	Age   time.Duration
	Cut   int
	// FullDue: the next walk must be whole (no full walk yet, or
	// reuse.full_walk_every / full_walk_after reached).
	FullDue bool
}

var lastFullWalk = db.Prepare[lastWalkParams]("LastFullWalk")

// listWalkOf is listWalk of task t in this run, retried as the run's
// other reads are.
func (c *crawl) listWalkOf(ctx context.Context, t *task) (w ListWalk, err error) {
	err = c.retryDB(ctx, func(ctx context.Context) (err error) {
		w, err = listWalk(ctx, c.opts.Pool, c.job, t.Kind, t.Key, c.runID)
		return err
	})
	return w, err
}

// listWalk reads what earlier runs (before runID; 0: all) did of list t.
func listWalk(ctx context.Context, q db.Querier, j *jobfile.Job, kind, key string, runID int64) (ListWalk, error) {
	if runID == 0 {
		runID = math.MaxInt64
	}
	w := ListWalk{Kind: kind, Key: key}
	var ageUS int64
	err := lastFullWalk.QueryRow(ctx, q, lastWalkParams{Kind: kind, Key: key, RunID: runID}).Scan(&w.Run, &w.Pages, &ageUS, &w.Cut)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		w.FullDue = true
		return w, nil
	case err != nil:
		return w, fmt.Errorf("last full walk of %s %s: %w", kind, key, err)
	}
	w.Found, w.Age = true, time.Duration(ageUS)*time.Microsecond
	w.FullDue = w.Cut+1 >= j.Reuse.FullWalkEvery || (j.Reuse.FullWalkAfter > 0 && w.Age >= time.Duration(j.Reuse.FullWalkAfter))
	return w, nil
}

// stopAtSeen counts a list page's entries no earlier run stored, when its
// edge has stop_at_seen or the job revisits adaptively, and ends the task
// when they were all stored by earlier runs and no full walk is due; the
// credits saved are estimated from the list's last full walk. Under
// adaptive revisits a full walk is due when the list was never walked
// whole or the run's schedule says so (adaptive.Visit.FullWalk).
func (c *crawl) stopAtSeen(ctx context.Context, k *kinds.Kind, t *task, res *kinds.Result) error {
	if k.Seen == nil || k.Pages == "" {
		return nil
	}
	adaptive := c.job.Reuse.Adaptive
	if e := c.job.Edge(k.Pages); !adaptive && (e == nil || !e.StopAtSeen) {
		return nil
	}
	var seen, total int
	err := c.retryDB(ctx, func(ctx context.Context) (err error) {
		seen, total, err = k.Seen(ctx, c.opts.Pool, c.runID, &t.Task.Task, res)
		return err
	})
	if err != nil {
		return err
	}
	res.New, res.Counted = total-seen, true
	if res.Stop != "" || total == 0 || seen < total {
		return nil
	}
	w, err := c.listWalkOf(ctx, t)
	if err != nil {
		return err
	}
	if adaptive {
		// A walk whole at least every max_age: what the run knows of the
		// pages it does not read (kinds.Kind.Known) is no older.
		w.FullDue = !w.Found || t.visit.FullWalk || w.Age >= time.Duration(c.job.Reuse.MaxAge)
	}
	if w.FullDue {
		return nil
	}
	walked := t.Pages + 1
	full := w.Pages
	if t.MaxPages > 0 {
		full = min(full, t.MaxPages)
	}
	res.Stop = fmt.Sprintf("stop_at_seen: page %d held only entries stored by earlier runs (last full walk: run %d, %d pages)", walked, w.Run, w.Pages)
	res.Outcome = kinds.OutcomeDoneStopAtSeen
	res.Saved = max(0, full-walked) * PagePrice(c.job, t.Kind)
	if adaptive && k.Known != nil {
		// The pages not read still lead to their entries, as the job's
		// runs know them: each is decided by the schedule.
		var known []kinds.NewTask
		err := c.retryDB(ctx, func(ctx context.Context) (err error) {
			known, err = k.Known(ctx, c.opts.Pool, c.job, &t.Task.Task, knownWithin(c.job))
			return err
		})
		res.Children = append(res.Children, known...)
		return err
	}
	return nil
}

// ReusePlan is what refresh_after and stop_at_seen would do in a new run
// of a job now, as far as the database can tell before it starts.
type ReusePlan struct {
	// Fresh are the tasks refresh_after would skip (1 credit saved each),
	// with what they expand to from stored data.
	Fresh []FreshTask
	// Lists are the stop_at_seen lists among the tasks and the lists that
	// fresh tasks expand to, with their history.
	Lists []ListWalk
}

// FreshTask is a task refresh_after would skip.
type FreshTask struct {
	Task     kinds.NewTask
	Fetch    kinds.Fetch
	Children []kinds.NewTask
}

// PlanReuse says, for crawler plan, which of tasks (a job's SeedTasks)
// refresh_after would skip in a new run of job now, following the tasks
// fresh ones expand to from stored data, and the history of every
// stop_at_seen list among them. It buys and writes nothing.
func PlanReuse(ctx context.Context, q db.Querier, job *jobfile.Job, tasks []kinds.NewTask) (*ReusePlan, error) {
	plan := &ReusePlan{}
	seen := map[[2]string]bool{}
	for len(tasks) > 0 {
		nt := tasks[0]
		tasks = tasks[1:]
		if seen[[2]string{nt.Kind, nt.Key}] {
			continue
		}
		seen[[2]string{nt.Kind, nt.Key}] = true
		k := kinds.Of(nt.Kind)
		if k == nil {
			continue
		}
		t := &kinds.Task{Kind: nt.Kind, Key: nt.Key, Params: nt.Params, Depth: nt.Depth, MaxPages: nt.MaxPages, RefreshAfter: nt.RefreshAfter}
		f, children, fresh, err := freshOf(ctx, q, job, k, t, 0)
		if err != nil {
			return nil, err
		}
		if fresh {
			plan.Fresh = append(plan.Fresh, FreshTask{Task: nt, Fetch: f, Children: children})
			tasks = append(tasks, children...)
			continue
		}
		if k.Seen != nil && k.Pages != "" {
			if e := job.Edge(k.Pages); e != nil && e.StopAtSeen {
				w, err := listWalk(ctx, q, job, nt.Kind, nt.Key, 0)
				if err != nil {
					return nil, err
				}
				plan.Lists = append(plan.Lists, w)
			}
		}
	}
	return plan, nil
}
