package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/socialcrawl/crawler/pipeline"
)

// A stop signal that comes while a process is still starting (the bench's
// scaleout workload joins processes to a run it stops a second later) is
// a stop like any other: a StopError (crawler run exits 3), the run
// stopped and resumable, nothing bought, nothing left leased. It was the
// bare "context canceled" of the start's database work (exit 1).
func TestStopWhileStartingIsAStop(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, "expand: {}\nseeds: {shortvideo: {profiles: [real_one, real_two]}}\n")
	runID := b.start(t, job)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	var stop *pipeline.StopError
	if !errors.As(err, &stop) || sum == nil || sum.State != "stopped" {
		t.Fatalf("err = %v, summary = %+v; want a stop", err, sum)
	}
	if u := b.sandbox.Usage(testKey); u.Requests != 0 {
		t.Errorf("%d requests upstream, want none", u.Requests)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'leased'`, runID); got != 0 {
		t.Errorf("%d tasks left leased", got)
	}
	// The next start works the run to its end.
	if sum, err := pipeline.Run(context.Background(), b.options(job, testKey), job, runID); err != nil || sum.State != "done" {
		t.Fatalf("resume: err = %v, summary = %+v", err, sum)
	}
}
