package pipeline

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
)

// SeedFilesBatches is SeedFiles in batches of batch values, stopping after
// batches of them: a seeding killed between two batches.
func SeedFilesBatches(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, runID int64, batch, batches int) (int64, error) {
	return seedFiles(ctx, pool, job, runID, nil, batch, batches)
}

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
