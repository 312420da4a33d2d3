package frontier

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A depth's content lists are leased after its other tasks, by their
// yield (crawl.tasks.lease_yield, docs/revisit.md "Content lists"): the
// counter's move since the list's last walk per credit of that walk's
// pages (never walked: one page);
// first those whose counter is their last walk's within refresh_after
// (skipped without a request). A lower depth still comes first.
func TestLeaseOrderContentByYield(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	runID := testRun(t, pool, nil)
	list := func(key string, depth int, count int64, credits int) NewTask {
		nt := NewTask{Kind: kinds.KindPSComments, Key: key, Depth: depth, Credits: credits, RefreshAfter: 24 * time.Hour}
		if count >= 0 {
			nt.Params = map[string]string{kinds.ParamCount: strconv.FormatInt(count, 10)}
		}
		return nt
	}
	// Last walks: (count, pages, age in days).
	for key, w := range map[string][3]int64{
		"same": {10, 1, 0}, "due": {10, 1, 2}, "grew": {10, 2, 0}, "grew15": {10, 2, 0}, "fell": {10, 1, 0}, "shallow": {10, 1, 0},
	} {
		if _, err := pool.Exec(ctx, `INSERT INTO crawl.content_walks (kind, key, count, run_id, pages, outcome, walked_at)
			VALUES ($1, $2, $3, $4, $5, 'done_end', now() - $6 * interval '1 day')`, kinds.KindPSComments, key, w[0], runID, w[1], w[2]); err != nil {
			t.Fatal(err)
		}
	}
	err := AddTasks(ctx, pool, runID, []NewTask{
		{Kind: kinds.KindSVProfile, Key: "a_profile", Depth: 1},
		list("shallow", 0, 11, 1), // 1 a credit, but a depth lower
		list("same", 1, 10, 1),    // its last walk's counter: Infinity
		list("due", 1, 10, 1),     // the same, past its refresh_after: 0
		list("grew", 1, 14, 1),    // 4 over 2 pages
		list("grew15", 1, 14, 15), // the same at 15 credits a page
		list("new", 1, 5, 1),      // never walked: 5 over 1 page
		list("fell", 1, 7, 1),     // 3 deleted over 1 page
		list("nocount", 1, -1, 1), // no counter: as found (added in kind and key order), with the profile
	})
	if err != nil {
		t.Fatal(err)
	}
	inf := math.Inf(1)
	want := []struct {
		key   string
		yield float64 // NaN: none
	}{
		{"shallow", 1}, {"nocount", math.NaN()}, {"a_profile", math.NaN()}, {"same", inf}, {"new", 5}, {"fell", 3},
		{"grew", 2}, {"grew15", 4.0 / 30}, {"due", 0},
	}
	f := NewFrontier(pool, "order", time.Minute)
	for i, w := range want {
		got, err := f.Lease(ctx, runID, nil)
		if err != nil || got == nil {
			t.Fatalf("lease %d: %v, %v", i, got, err)
		}
		switch {
		case got.Key != w.key:
			t.Errorf("lease %d: %s, want %s", i, got.Key, w.key)
		case math.IsNaN(w.yield) != (got.Yield == nil):
			t.Errorf("lease %d (%s): yield %v, want %v", i, got.Key, got.Yield, w.yield)
		case got.Yield != nil && !(*got.Yield == w.yield || math.Abs(*got.Yield-w.yield) < 1e-12):
			t.Errorf("lease %d (%s): yield %v, want %v", i, got.Key, *got.Yield, w.yield)
		}
	}
}
