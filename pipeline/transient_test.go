package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/pipeline"
)

// A page's commit that finds its table locked past lock_timeout (55P03)
// is retried, not a failed task nor a stopped run: the run ends done with
// every page bought once. The test holds a lock on the users table until
// it has seen the crawler's statement wait, time out, and wait again.
func TestLockTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(b.pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["lock_timeout"] = "50ms"
	cfg.ConnConfig.RuntimeParams["application_name"] = "crawler-under-test"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	job := b.job(t, "expand: {}\nseeds: {shortvideo: {profiles: [ok_f0_g0]}}\n")
	runID := b.start(t, job)
	lock, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, `LOCK TABLE shortvideo.users IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	opts := b.options(job, testKey)
	opts.Pool = pool
	done := make(chan error, 1)
	var sum *pipeline.Summary
	go func() {
		var err error
		sum, err = pipeline.Run(ctx, opts, job, runID)
		done <- err
	}()
	// Two distinct statements waiting on the lock: the first timed out.
	starts := map[time.Time]bool{}
	for deadline := time.Now().Add(30 * time.Second); len(starts) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the crawler's commit never waited on the lock twice")
		}
		var at time.Time
		err := b.pool.QueryRow(ctx, `SELECT query_start FROM pg_stat_activity
			WHERE application_name = 'crawler-under-test' AND wait_event_type = 'Lock' LIMIT 1`).Scan(&at)
		if err == nil {
			starts[at] = true
		}
		time.Sleep(5 * time.Millisecond) // polling pg_stat_activity, not synchronising
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || sum.State != "done" {
		t.Fatalf("run: %v %+v", err, sum)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE state = 'done'`); got != 1 {
		t.Errorf("%d tasks done, want 1", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.users WHERE unique_id = 'ok_f0_g0'`); got != 1 {
		t.Errorf("profile rows %d, want 1", got)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 1 {
		t.Errorf("billable %d, want 1", u.Billable)
	}
}
