package pipeline

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/kinds"
)

// BoundAllows says whether a task of kind parent may create one of kind
// child (one level deeper when hop) under the credit bound's rules.
func BoundAllows(parent, child string, hop bool) bool {
	for _, r := range kinds.BoundEdges(parent) {
		if r.Child == child && r.Hop == hop {
			return true
		}
	}
	return false
}

// AddTasks adds tasks to run runID as a commit finding them would.
func AddTasks(ctx context.Context, pool *pgxpool.Pool, runID int64, tasks []NewTask) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return addTasks(ctx, tx, runID, nil, tasks) })
}
