package frontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Three tasks' pages in one group, the second's lease taken over: the
// first commits, the second fails alone (ErrLeaseLost, none of its rows
// written), the third was not run and goes in the next group, which
// commits it. Each page is a transaction of its own.
func TestGroupCommitIsolatesAFailingPage(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	runID := testRun(t, pool, profiles("a", "b", "c"))
	f := NewFrontier(pool, "p", time.Minute)
	ts, err := f.LeaseN(ctx, runID, 3, nil)
	if err != nil || len(ts) != 3 {
		t.Fatalf("lease: %v %v", ts, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE crawl.tasks SET lease_token = lease_token + 1000 WHERE id = $1`, ts[1].ID); err != nil {
		t.Fatal(err)
	}
	c := &Committer{pool: pool, runID: runID, f: f, kick: make(chan struct{}, 1)} // no senders: the test sends
	var gs []*GroupCommit
	for i, task := range ts {
		var rows sinks.Batch
		sinks.Add(&rows, sinks.SVUser{UniqueID: "user" + string(rune('a'+i)), Raw: []byte(`{}`)})
		g, err := c.Submit(task, PageCommit{Rows: &rows, Next: "c1", Items: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	group := c.take()
	if len(group) != 3 {
		t.Fatalf("group of %d, want 3", len(group))
	}
	rest := c.sendGroup(ctx, group)
	if len(rest) != 1 || rest[0] != gs[2] {
		t.Fatalf("to send again: %d pages, want the third", len(rest))
	}
	if err := gs[0].Wait(ctx); err != nil {
		t.Errorf("first page: %v", err)
	}
	if err := gs[1].Wait(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("second page: %v, want ErrLeaseLost", err)
	}
	if again := c.sendGroup(ctx, rest); len(again) != 0 {
		t.Fatalf("third page sent again %d times", len(again))
	}
	if err := gs[2].Wait(ctx); err != nil {
		t.Errorf("third page: %v", err)
	}
	var users string
	var pages int
	if err := pool.QueryRow(ctx, `SELECT (SELECT string_agg(unique_id, ',' ORDER BY unique_id) FROM shortvideo.users),
		(SELECT sum(pages) FROM crawl.tasks WHERE run_id = $1)`, runID).Scan(&users, &pages); err != nil {
		t.Fatal(err)
	}
	if users != "usera,userc" || pages != 2 {
		t.Errorf("users %q, pages %d; want usera,userc and 2", users, pages)
	}
	// No connection is left in the failed page's transaction: its
	// connection is closed, and the server ends the session as soon as it
	// reads the close (which it may not have done when Close returns).
	pgtest.WaitNone(t, pool, "connections idle in a transaction",
		`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`)
}

// A page whose group failed before it was sent is committed by Retry from
// the statements the committer kept (its task keeps no rows for it), once:
// a second Retry finds it applied. A committed page keeps no statements,
// and what it held is given back when it commits, before its task reads
// the outcome.
func TestGroupCommitRetryAndRelease(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	runID := testRun(t, pool, profiles("a", "b"))
	f := NewFrontier(pool, "p", time.Minute)
	ts, err := f.LeaseN(ctx, runID, 2, nil)
	if err != nil || len(ts) != 2 {
		t.Fatalf("lease: %v %v", ts, err)
	}
	c := &Committer{pool: pool, runID: runID, f: f, kick: make(chan struct{}, 1)} // no senders: the test sends
	released := make([]int, len(ts))
	submit := func(i int) *GroupCommit {
		var rows sinks.Batch
		sinks.Add(&rows, sinks.SVUser{UniqueID: "user" + string(rune('a'+i)), Raw: []byte(`{}`)})
		g, err := c.Submit(ts[i], PageCommit{Rows: &rows, Next: "c1", Items: 1}, func() { released[i]++ })
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	failed := submit(0)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if rest := c.sendGroup(cancelled, c.take()); len(rest) != 0 {
		t.Fatalf("%d pages to send again, want none: nothing was sent", len(rest))
	}
	if err := failed.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("page of a group not sent: %v, want context.Canceled", err)
	}
	if released[0] != 0 {
		t.Fatalf("a page not committed gave back what it held")
	}
	if err := failed.Retry(ctx); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if err := failed.Retry(ctx); !errors.Is(err, ErrAlreadyApplied) {
		t.Fatalf("second retry: %v, want ErrAlreadyApplied", err)
	}

	ok := submit(1)
	if rest := c.sendGroup(ctx, c.take()); len(rest) != 0 {
		t.Fatalf("%d pages to send again, want none", len(rest))
	}
	if released[1] != 1 || ok.batch != nil {
		t.Fatalf("committed page: released %d times, statements kept %v; want released once, none kept", released[1], ok.batch != nil)
	}
	if err := ok.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var users string
	var pages int
	if err := pool.QueryRow(ctx, `SELECT (SELECT string_agg(unique_id, ',' ORDER BY unique_id) FROM shortvideo.users),
		(SELECT sum(pages) FROM crawl.tasks WHERE run_id = $1)`, runID).Scan(&users, &pages); err != nil {
		t.Fatal(err)
	}
	if users != "usera,userb" || pages != 2 {
		t.Errorf("users %q, pages %d; want usera,userb and 2 (each page once)", users, pages)
	}
}
