package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/budget"
)

// Free answers never end a budget-limited run early: with max_credits 2 and
// four workers whose first leases are all free 404s in flight together, the
// budget is momentarily full of reservations that come back; the run must
// wait for them and still buy exactly two pages.
func TestBudgetFreeAnswersInFlightDoNotStopTheRun(t *testing.T) {
	t.Parallel()
	// The latency keeps the four 404s in flight at once.
	b := setupWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: 40 * time.Millisecond}})
	job := b.job(t, "limits: {workers: 4, max_credits: 2}\nexpand: {}\nseeds: {shortvideo: {profiles: "+
		"[missing_a, missing_b, missing_c, missing_d, real_one, real_two, real_three, real_four]}}\n")
	ctx := context.Background()
	runID := b.start(t, job)
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if !errors.Is(err, budget.ErrExhausted) || sum.State != "stopped" {
		t.Fatalf("err = %v, summary = %+v; want a stop on the spent budget", err, sum)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 2 {
		t.Errorf("billable = %d, want exactly max_credits 2", u.Billable)
	}
	cr, err := budget.LoadCredits(ctx, b.pool, runID)
	if err != nil || cr.Billed != 2 || cr.Committed != 2 {
		t.Errorf("credits = %+v, %v; want 2 billed, 2 committed", cr, err)
	}
	// A missing account still waiting for the budget when it was spent is
	// handed back for a resume, not failed.
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state IN ('failed', 'leased')`, runID); got != 0 {
		t.Errorf("%d tasks failed or left leased", got)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'done'`, runID); got != 2 {
		t.Errorf("done tasks = %d, want 2", got)
	}
}

// Two processes (two owners, each with its own budget waiters) share one
// budget exactly, with free answers in flight in both.
func TestBudgetSharedByTwoProcessesWithFreeAnswers(t *testing.T) {
	t.Parallel()
	b := setupWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: 20 * time.Millisecond}})
	job := b.job(t, "limits: {workers: 3, max_credits: 5}\nexpand: {}\nseeds: {shortvideo: {profiles: "+
		"[missing_a, missing_b, missing_c, missing_d, missing_e, missing_f, p_one, p_two, p_three, p_four, p_five, p_six, p_seven, p_eight]}}\n")
	ctx := context.Background()
	runID := b.start(t, job)
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			opts := b.options(job, testKey)
			opts.Owner = "proc" + string(rune('a'+i))
			_, err := pipeline.Run(ctx, opts, job, runID)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil && !errors.Is(err, budget.ErrExhausted) {
			t.Errorf("run: %v", err)
		}
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 5 {
		t.Errorf("billable = %d, want exactly the shared budget 5", u.Billable)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'done'`, runID); got != 5 {
		t.Errorf("done tasks = %d, want 5", got)
	}
	cr, err := budget.LoadCredits(ctx, b.pool, runID)
	if err != nil || cr.Billed != 5 || cr.Committed != 5 {
		t.Errorf("credits = %+v, %v; want 5 billed and committed", cr, err)
	}
}
