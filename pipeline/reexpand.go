package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/kinds"
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

type endReexpandParams struct {
	ID    int64 `db:"id"`
	Token int64 `db:"token"`
}

var endReexpand = db.Prepare[endReexpandParams]("EndReexpand")

// reexpand expands t again from stored data at its new depth and ends its
// lease as it ended before (done, or skipped: its outcome says), in one batch.
func (c *crawl) reexpand(ctx context.Context, log *slog.Logger, k *kinds.Kind, t *Task) error {
	var children []NewTask
	err := c.retryDB(ctx, func(ctx context.Context) error {
		all, err := k.Reexpand(ctx, c.opts.Pool, c.job, &t.Task)
		children = c.children(&kinds.Result{Children: all})
		return err
	})
	if err == nil {
		err = c.retryDB(context.WithoutCancel(c.work), func(ctx context.Context) error {
			return c.frontier.endWithChildren(ctx, c.runID, t, fmt.Sprintf("end re-expanded task %d", t.ID), func(b *pgx.Batch) {
				endReexpand.Queue(b, endReexpandParams{ID: t.ID, Token: t.Token})
			}, children)
		})
	}
	switch {
	case errors.Is(err, ErrLeaseLost):
		return nil
	case err != nil:
		err = fmt.Errorf("task %d (%s %s): expand again at depth %d: %w", t.ID, t.Kind, t.Key, t.Depth, err)
		c.stop(err)
		_ = c.release(t)
		return err
	}
	log.Debug("expanded again at a smaller depth", "task_id", t.ID, "kind", t.Kind, "key", t.Key, "depth", t.Depth, "children", len(children))
	if len(children) > 0 {
		c.wakeOthers()
	}
	return nil
}
