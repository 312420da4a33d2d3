package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/socialcrawl/crawler/internal/db"

	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
)

// Deterministic depth. Workers take tasks breadth first, but a task can be
// fetched at depth d before a longer walk, still in progress, finds it at
// a smaller depth: its children beyond max_depth were dropped, and its
// children's depths are too large. AddTasks then lowers its depth and, for
// the kinds that declare Reexpand (every kind whose tasks make others:
// profiles, follow lists, songs and their videos, feeds, searches, reels
// searches), sends it back to be expanded again from what its fetch stored
// in the run: no request, the same children a fetch at the smaller depth
// would have made. Lowering goes on down the tree the same way, so a run
// reaches the same tasks at the same depths whatever the timing.

// reexpand expands t again from stored data at its new depth and ends its
// lease as it ended before (done, or skipped: its outcome says), in one batch.
func (c *crawl) reexpand(ctx context.Context, log *slog.Logger, k *kinds.Kind, t *task) error {
	var children []kinds.NewTask
	expand := k.Reexpand
	if c.job.Reuse.Adaptive && k.Known != nil && ledByKnown(t.Outcome) {
		// A list skipped or cut led to its entries as known; one walked
		// whole (or to its page limit) to what this run stored of it, as
		// its walk did: the same tasks whichever depth it was found at
		// first.
		expand = func(ctx context.Context, q db.Querier, j kinds.Job, t *kinds.Task) ([]kinds.NewTask, error) {
			return k.Known(ctx, q, j, t, knownWithin(c.job))
		}
	}
	err := c.retryDB(ctx, func(ctx context.Context) error {
		all, err := expand(ctx, c.opts.Pool, c.job, &t.Task.Task)
		children = c.children(&kinds.Result{Children: all})
		return err
	})
	if err == nil {
		err = c.retryDB(context.WithoutCancel(c.work), func(ctx context.Context) error {
			return c.frontier.EndReexpand(ctx, c.runID, t.Task, children)
		})
	}
	switch {
	case errors.Is(err, frontier.ErrLeaseLost):
		return nil
	case err != nil:
		return c.abandon(t, fmt.Sprintf("expand again at depth %d", t.Depth), err)
	}
	log.Debug("expanded again at a smaller depth", "task_id", t.ID, "kind", t.Kind, "key", t.Key, "depth", t.Depth, "children", len(children))
	if len(children) > 0 {
		c.wakeOthers()
	}
	return nil
}

// ledByKnown reports whether a list that ended with outcome led to its
// entries as the job's runs know it (kinds.Kind.Known) rather than as its
// walk in this run read them: skipped by the schedule or for the budget,
// or cut by stop_at_seen.
func ledByKnown(o kinds.Outcome) bool {
	switch o {
	case kinds.OutcomeSkippedAdaptive, kinds.OutcomeSkippedBudget, kinds.OutcomeSkippedFresh, kinds.OutcomeDoneStopAtSeen:
		return true
	}
	return false
}
