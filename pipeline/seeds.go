package pipeline

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/sources"
)

// SeedTasks turns the job's seeds into the run's first tasks.
func SeedTasks(job *Job) []NewTask {
	var seeds []NewTask
	for _, h := range job.Seeds.ShortVideo.Profiles {
		seeds = append(seeds, NewTask{Kind: KindSVProfile, Key: sources.NormalizeHandle(h)})
	}
	return seeds
}

// Start records a new run of job with its seeds and budget, and returns its id.
func Start(ctx context.Context, pool *pgxpool.Pool, job *Job) (int64, error) {
	return CreateRun(ctx, pool, job, SeedTasks(job))
}
