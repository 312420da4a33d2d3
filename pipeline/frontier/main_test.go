package frontier

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.MainMigrated(m) }

// testRun records a run with tasks and returns its id: the frontier needs
// no job (pipeline.CreateRun records one).
func testRun(t testing.TB, pool *pgxpool.Pool, tasks []NewTask) int64 {
	t.Helper()
	ctx := context.Background()
	var runID int64
	if err := pool.QueryRow(ctx, `INSERT INTO crawl.runs (job_name, job) VALUES ('t', '{}') RETURNING id`).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	if err := AddTasks(ctx, pool, runID, tasks); err != nil {
		t.Fatal(err)
	}
	return runID
}

// profiles are seed tasks of the profiles keys.
func profiles(keys ...string) []NewTask {
	tasks := make([]NewTask, len(keys))
	for i, k := range keys {
		tasks[i] = NewTask{Kind: kinds.KindSVProfile, Key: k}
	}
	return tasks
}
