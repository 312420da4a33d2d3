package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Far from the budget a lease reserves a block of creditBlock credits and
// spends it without asking again; near it, one credit at a time; when the
// lease ends its spare credits come back exactly, and a billed answer counts
// even when its lease is lost. After every step the run's committed credits
// are its billed credits plus what its leases hold.
func TestCreditBlocksFarFromBudgetOneNearItGivenBackExactly(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	job, err := jobfile.Parse("t.yaml", []byte("name: t\napi: {base_url: http://127.0.0.1:1/api, key_env: CRAWLER_K}\n"+
		"expand: {}\nseeds: {shortvideo: {profiles: [a, b, c, d, e, f, g]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	runID, err := Start(ctx, pool, job)
	if err != nil {
		t.Fatal(err)
	}
	max := int64(100)
	if err := SetMaxCredits(ctx, pool, runID, &max); err != nil {
		t.Fatal(err)
	}
	fr := NewFrontier(pool, "p", time.Minute)
	stop := make(chan struct{})
	defer close(stop)
	// One worker: blocks while blockFar(1) = 64 credits are left.
	b := &budget{pool: pool, runID: runID, workers: 1, log: slog.New(slog.DiscardHandler), waitMax: 50 * time.Millisecond, stopping: stop,
		retry: func(ctx context.Context, op func(context.Context) error) error { return op(ctx) }}
	lease := func() (*Task, *leaseCredits) {
		t.Helper()
		task, err := fr.Lease(ctx, runID, nil)
		if err != nil || task == nil {
			t.Fatalf("lease: %v %v", task, err)
		}
		return task, task.leaseCredits()
	}
	check := func(step string, committed, billed int64) {
		t.Helper()
		cr, err := LoadCredits(ctx, pool, runID)
		if err != nil {
			t.Fatal(err)
		}
		held := heldCredits(t, pool, runID)
		if cr.Committed != committed || cr.Billed != billed || cr.Committed != cr.Billed+held {
			t.Errorf("%s: committed %d, billed %d, held by leases %d; want committed %d = billed %d + held", step, cr.Committed, cr.Billed, held, committed, billed)
		}
	}
	billedAnswer := sources.Outcome{Endpoint: "e", Status: 200, Billed: true}

	a, actx := lease()
	if err := b.reserve(ctx, actx, 1, nil); err != nil || a.credits.held != creditBlock {
		t.Fatalf("first reserve: %v, lease holds %d; want a block of %d", err, a.credits.held, creditBlock)
	}
	check("block for a", creditBlock, 0)
	// A 429 and a free answer keep their credit for the next request,
	// which asks nothing of the database.
	b.settle(ctx, actx, sources.Outcome{Endpoint: "e", Status: 429}, nil)
	if err := b.reserve(ctx, actx, 1, nil); err != nil {
		t.Fatal(err)
	}
	b.settle(ctx, actx, billedAnswer, nil)
	check("a's answers before its commit", creditBlock, 0)

	bt, bctx := lease()
	ct, cctx := lease()
	dt, dctx := lease()
	for _, c := range []*leaseCredits{bctx, cctx, dctx} {
		if err := b.reserve(ctx, c, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	// 100 - 16 = 84 and 68 left: blocks; 52 left: one.
	if bt.credits.held != creditBlock || ct.credits.held != creditBlock || dt.credits.held != 1 {
		t.Errorf("held by b, c, d = %d, %d, %d; want %d, %d, 1", bt.credits.held, ct.credits.held, dt.credits.held, creditBlock, creditBlock)
	}
	check("blocks for b and c, one for d", 3*creditBlock+1, 0)

	// a's last page: its billed answer is settled in the commit, its 15
	// spare credits come back.
	if err := fr.Commit(ctx, runID, a, PageCommit{Rows: &sinks.Batch{}, Stop: "done"}); err != nil {
		t.Fatal(err)
	}
	if a.credits.held != 0 || a.credits.pending() {
		t.Errorf("after its last commit a holds %d, pending %v", a.credits.held, a.credits.pending())
	}
	check("a committed", 2*creditBlock+1+1, 1)
	if got := usageRequests(t, pool, runID); got != 2 {
		t.Errorf("usage requests = %d, want 2 (the 429 and the billed answer)", got)
	}

	// b is released with its block unspent: all 16 come back.
	if err := fr.Release(ctx, bt); err != nil {
		t.Fatal(err)
	}
	check("b released", creditBlock+1+1, 1)

	// d's lease is lost after a billed answer: the answer still counts.
	b.settle(ctx, dctx, billedAnswer, nil)
	if _, err := pool.Exec(ctx, `UPDATE crawl.tasks SET lease_token = lease_token + 1000 WHERE id = $1`, dt.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE crawl.runs r SET credits_committed = r.credits_committed - t.credits_held FROM crawl.tasks t WHERE t.id = $1 AND r.id = t.run_id`, dt.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE crawl.tasks SET credits_held = 0 WHERE id = $1`, dt.ID); err != nil {
		t.Fatal(err)
	}
	b.flush(ctx, dt.credits, nil)
	check("d lost after a billed answer", creditBlock+1+1, 2)

	// Near the budget: 3 left, so one credit per lease, then none.
	max = 20
	if err := SetMaxCredits(ctx, pool, runID, &max); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		e, ectx := lease()
		if err := b.reserve(ctx, ectx, 1, nil); err != nil || e.credits.held != 1 {
			t.Fatalf("reserve near the budget: %v, holds %d; want 1", err, e.credits.held)
		}
	}
	check("two single credits", 20, 2)
	_, gctx := lease()
	if err := b.reserve(ctx, gctx, 1, nil); !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("reserve on a budget full of reservations: %v; want ErrBudgetExhausted after the wait", err)
	}
	check("nothing granted", 20, 2)

	// c's process dies: its block comes back when its lease expires.
	if _, err := pool.Exec(ctx, `UPDATE crawl.tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, ct.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := fr.Rescue(ctx, runID); err != nil || n != 1 {
		t.Fatalf("rescue: %d, %v", n, err)
	}
	check("c's lease expired", 20-creditBlock, 2)
}

func heldCredits(t *testing.T, pool *pgxpool.Pool, runID int64) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(sum(credits_held), 0) FROM crawl.tasks WHERE run_id = $1`, runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func usageRequests(t *testing.T, pool *pgxpool.Pool, runID int64) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(sum(requests), 0) FROM crawl.credit_usage WHERE run_id = $1`, runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
