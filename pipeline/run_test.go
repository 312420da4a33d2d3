package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/sources"
)

// The sandbox's pages hold 50 entries: an account with exactly N followers
// and M following costs 1 profile + ceil(N/50) + ceil(M/50) pages (an empty
// list still costs its one page).
func TestFollowGraphExactCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, `
limits:
  workers: 3
seeds:
  shortvideo:
    profiles: ["@acct_f120_g30", "solo_f0_g7"]
`)
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("state = %s (%s)", sum.State, sum.Reason)
	}
	// Users: 2 seeds + 120 + 30 + 0 + 7 entries, all distinct.
	if got := b.count(t, `SELECT count(*) FROM shortvideo.users`); got != 159 {
		t.Errorf("users = %d, want 159", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.follows`); got != 157 {
		t.Errorf("follows = %d, want 157", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.follows WHERE followee = 'acct_f120_g30'`); got != 120 {
		t.Errorf("followers of acct = %d, want 120", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.follows WHERE follower = 'acct_f120_g30'`); got != 30 {
		t.Errorf("following of acct = %d, want 30", got)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.user_snapshots`); got != 2 {
		t.Errorf("snapshots = %d, want 2", got)
	}
	if got := b.count(t, `SELECT follower_count FROM shortvideo.user_snapshots WHERE unique_id = 'acct_f120_g30'`); got != 120 {
		t.Errorf("follower_count = %d, want 120", got)
	}
	// 2 profiles + 3 + 1 (acct) + 1 + 1 (solo) pages, and not one request more.
	u := b.sandbox.Usage(testKey)
	if u.Billable != 8 || u.Requests != 8 {
		t.Errorf("sandbox billable=%d requests=%d, want 8 and 8", u.Billable, u.Requests)
	}
	if sum.Pages != 8 {
		t.Errorf("pages committed = %d, want 8", sum.Pages)
	}

	// The same job again: a second snapshot per profile, no duplicate users
	// or edges, and the edges marked as seen by the second run.
	sum2 := b.run(t, job)
	if sum2.State != "done" || sum2.RunID == sum.RunID {
		t.Fatalf("second run = %+v", sum2)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM shortvideo.users`:                                             159,
		`SELECT count(*) FROM shortvideo.follows`:                                           157,
		`SELECT count(*) FROM shortvideo.user_snapshots`:                                    4,
		`SELECT count(DISTINCT run_id) FROM shortvideo.user_snapshots`:                      2,
		`SELECT count(*) FROM shortvideo.follows WHERE last_seen_run = ` + itoa(sum2.RunID): 157,
		`SELECT count(*) FROM shortvideo.follows WHERE first_seen_run = ` + itoa(sum.RunID): 157,
	} {
		if got := b.count(t, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 16 {
		t.Errorf("billable after two runs = %d, want 16", u.Billable)
	}
}

func TestEveryTaskEndsWithAReason(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, `
limits:
  workers: 2
expand:
  followers: {max_pages: 3}
seeds:
  shortvideo:
    profiles: [missing_nobody, private_hidden, huge_endless, tiny_f1_g0]
`)
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("state = %s (%s)", sum.State, sum.Reason)
	}
	got := b.tasks(t, sum.RunID)
	want := []string{
		"shortvideo.profile missing_nobody skipped not found 0",
		"shortvideo.profile private_hidden done done 1",
		"shortvideo.profile huge_endless done done 1",
		"shortvideo.profile tiny_f1_g0 done done 1",
		"shortvideo.followers " + secUID("huge_endless") + " done page_limit 3",
		"shortvideo.followers " + secUID("tiny_f1_g0") + " done end 1",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tasks:\n got %q\nwant %q", got, want)
	}
	// The missing profile is a 404: not billable; the endless list costs
	// exactly its page limit.
	if u := b.sandbox.Usage(testKey); u.Billable != 3+3+1 || u.Requests != 4+3+1 {
		t.Errorf("billable=%d requests=%d, want 7 and 8", u.Billable, u.Requests)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.follows WHERE followee = 'huge_endless'`); got != 150 {
		t.Errorf("endless edges = %d, want 150 (3 pages of 50)", got)
	}
}

func TestKeyRefusedStopsRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, "seeds:\n  shortvideo:\n    profiles: [a_f3, b_f3, c_f3]\n")
	ctx := context.Background()
	runID := b.start(t, job)
	sum, err := pipeline.Run(ctx, b.options(job, "wrong-key"), job, runID)
	if sources.ClassOf(err) != sources.ClassAuth || sum.State != "stopped" {
		t.Fatalf("err = %v, summary = %+v", err, sum)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'pending'`, runID); got != 3 {
		t.Errorf("pending tasks after stop = %d, want 3 (released for a resume)", got)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.runs WHERE id = $1 AND state = 'stopped'`, runID); got != 1 {
		t.Error("run not marked stopped")
	}
}

// max_credits K on a larger job buys exactly K pages, stops resumable, and a
// resume with a larger budget finishes with no page bought twice.
func TestBudgetExactAndResumable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// 1 + 10 + 1 pages.
	job := b.job(t, "limits: {workers: 3, max_credits: 7}\nseeds: {shortvideo: {profiles: [rich_f500_g10]}}\n")
	ctx := context.Background()
	runID := b.start(t, job)
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if !errors.Is(err, budget.ErrExhausted) || sum.State != "stopped" {
		t.Fatalf("err = %v, summary = %+v", err, sum)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 7 || u.Requests != 7 {
		t.Errorf("billable = %d, requests = %d, want exactly 7", u.Billable, u.Requests)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE state = 'leased'`); got != 0 {
		t.Errorf("%d tasks left leased", got)
	}
	if err := pipeline.Resume(ctx, b.pool, runID, job.Name); err != nil {
		t.Fatal(err)
	}
	more := int64(100)
	if err := budget.SetMaxCredits(ctx, b.pool, runID, &more); err != nil {
		t.Fatal(err)
	}
	sum, err = pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if err != nil || sum.State != "done" {
		t.Fatalf("resume: %v %+v", err, sum)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 12 {
		t.Errorf("billable after resume = %d, want 12 (no page bought twice)", u.Billable)
	}
	if got := b.count(t, `SELECT count(*) FROM shortvideo.follows`); got != 510 {
		t.Errorf("follows = %d, want 510", got)
	}
	cr, err := budget.LoadCredits(ctx, b.pool, runID)
	if err != nil || cr.Billed != 12 || cr.Committed != 12 {
		t.Errorf("credits = %+v, %v; want 12 billed and committed", cr, err)
	}
	if got := b.count(t, `SELECT sum(billed) FROM crawl.credit_usage WHERE run_id = $1`, runID); got != 12 {
		t.Errorf("credit_usage billed = %d, want 12", got)
	}
}

// 404s are refunded: a budget of 2 with a missing account first still buys
// two real pages.
func TestBudgetRefundsUnbilledAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, "limits: {workers: 1, max_credits: 2}\nexpand: {}\nseeds: {shortvideo: {profiles: [missing_a, missing_b, real_one, real_two, real_three]}}\n")
	ctx := context.Background()
	runID := b.start(t, job)
	_, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if !errors.Is(err, budget.ErrExhausted) {
		t.Fatalf("err = %v", err)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 2 || u.Requests != 4 {
		t.Errorf("billable = %d requests = %d, want 2 and 4", u.Billable, u.Requests)
	}
	if got := b.count(t, `SELECT errors FROM crawl.credit_usage WHERE run_id = $1`, runID); got != 2 {
		t.Errorf("recorded errors = %d, want 2", got)
	}
}
