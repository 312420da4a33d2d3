package budget

import (
	"context"
	"testing"

	"github.com/socialcrawl/crawler/sources"
)

// Far from the budget no request waits for a statement on the hold: the
// next block is asked for in the background while the spare lasts. A
// request that had to wait would first read its previous page's commit
// and then the statement's round trip: a third of the pages of workload 13
// (16 workers, 50 ms answers) waited so (issue 34).
func TestRequestsDoNotWaitForTheHoldFarFromTheBudget(t *testing.T) {
	t.Parallel()
	pool, runID := budgetRun(t, 1_000_000)
	ctx := context.Background()
	stop := make(chan struct{})
	defer close(stop)
	b := newTestBudget(pool, runID, "p", stop)
	billed := sources.Outcome{Endpoint: "/e", Status: 200, Billed: true}
	waits := 0
	const requests = 5 * creditBlock
	for i := range requests {
		var r int64
		if err := b.Reserve(ctx, &r, 1, func() error { waits++; return nil }); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b.Settle(&r, billed)
		// The answer time, in which a refill's round trip is hidden.
		b.refills.Wait()
	}
	if waits != 1 {
		t.Errorf("%d of %d requests waited for a statement on the hold; want 1 (the first, nothing held yet)", waits, requests)
	}
	if b.held > 1+creditBlock {
		t.Errorf("held %d: more than the request and a block of %d", b.held, creditBlock)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if cr := ledger(t, pool, runID); cr.Billed != requests || cr.Held != 0 {
		t.Errorf("after close: %+v; want %d billed, nothing held", cr, requests)
	}
}
