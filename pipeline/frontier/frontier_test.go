package frontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A worker whose lease expired and was taken over cannot commit its page.
func TestLeaseTakeoverRejectsStaleCommit(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	runID := testRun(t, pool, profiles("a"))
	stale := NewFrontier(pool, "stale", time.Millisecond)
	fresh := NewFrontier(pool, "fresh", time.Minute)
	t1, err := stale.Lease(ctx, runID, nil)
	if err != nil || t1 == nil {
		t.Fatalf("lease: %v %v", t1, err)
	}
	// Wait until the database itself sees the lease as expired.
	for {
		var expired bool
		if err := pool.QueryRow(ctx, `SELECT lease_expires_at < now() FROM crawl.tasks WHERE id = $1`, t1.ID).Scan(&expired); err != nil {
			t.Fatal(err)
		}
		if expired {
			break
		}
	}
	if n, err := fresh.Rescue(ctx, runID); err != nil || n != 1 {
		t.Fatalf("rescue = %d, %v; want the expired lease back", n, err)
	}
	t2, err := fresh.Lease(ctx, runID, nil)
	if err != nil || t2 == nil || t2.ID != t1.ID || t2.Token <= t1.Token {
		t.Fatalf("takeover lease = %+v, %v (stale %+v)", t2, err, t1)
	}
	err = stale.Commit(ctx, runID, t1, PageCommit{Items: 1, Stop: "done"})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale commit err = %v, want ErrLeaseLost", err)
	}
	if err := stale.Finish(ctx, t1, StateFailed, "stale"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale finish err = %v, want ErrLeaseLost", err)
	}
	err = fresh.Commit(ctx, runID, t2, PageCommit{Items: 1, Stop: "done"})
	if err != nil {
		t.Fatalf("fresh commit: %v", err)
	}
	var got int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM crawl.tasks WHERE id = $1 AND state = 'done' AND lease_owner LIKE 'fresh#%'`, t1.ID).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != 1 {
		t.Error("task not done by the fresh worker")
	}
}
