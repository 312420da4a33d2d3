package frontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Three tasks' pages in one group, the second's lease taken over: the
// group's transaction fails and commits nothing, then, sent page by page,
// the first commits, the second fails alone (ErrLeaseLost, none of its
// rows written), the third was not run and goes in the next group, which
// commits it. Each page is then a transaction of its own.
func TestGroupCommitIsolatesAFailingPage(t *testing.T) {
	t.Parallel()
	pool, runID, c, gs := threePagesOneLeaseLost(t, 1, func(i int) (*sinks.Batch, int) {
		var rows sinks.Batch
		sinks.Add(&rows, sinks.SVUser{UniqueID: "user" + string(rune('a'+i)), Raw: []byte(`{}`)})
		return &rows, 1
	})
	ctx := context.Background()
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
	if released[1] != 1 || ok.stmts != nil {
		t.Fatalf("committed page: released %d times, statements kept %v; want released once, none kept", released[1], ok.stmts != nil)
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

// Three tasks' pages in one group commit in one transaction (every row
// and advance has its xmin), each table's rows of all the pages in one
// statement: a user on two pages is written once (a profile's row over a
// list entry's), an edge on two pages once, a task found by two pages
// once with the first finder as parent and the least depth of the two.
func TestGroupCommitsTogether(t *testing.T) {
	t.Parallel()
	pool, runID, f, ts := leaseThreeProfiles(t)
	ctx := context.Background()
	c := &Committer{pool: pool, runID: runID, f: f, kick: make(chan struct{}, 1)} // no senders: the test sends
	nick := "entry"
	pages := []func(*sinks.Batch) []NewTask{
		func(b *sinks.Batch) []NewTask {
			sinks.Add(b, sinks.SVUser{UniqueID: "shared", Nickname: &nick, Raw: []byte(`{"from":"entry"}`)})
			sinks.Add(b, sinks.SVFollow{Follower: "shared", Followee: "a", Raw: []byte(`{}`)})
			return []NewTask{{Kind: kinds.KindSVProfile, Key: "child", Depth: 2}}
		},
		func(b *sinks.Batch) []NewTask {
			sinks.Add(b, sinks.SVUser{UniqueID: "shared", Profile: true, Raw: []byte(`{"from":"profile"}`)})
			sinks.Add(b, sinks.SVUser{UniqueID: "own_b", Raw: []byte(`{}`)})
			sinks.Add(b, sinks.SVFollow{Follower: "shared", Followee: "a", Raw: []byte(`{"again":true}`)})
			return []NewTask{{Kind: kinds.KindSVProfile, Key: "child", Depth: 1}, {Kind: kinds.KindSVProfile, Key: "other", Depth: 1}}
		},
		func(b *sinks.Batch) []NewTask { return nil },
	}
	var gs []*GroupCommit
	for i, task := range ts {
		var rows sinks.Batch
		children := pages[i](&rows)
		g, err := c.Submit(task, PageCommit{Rows: &rows, Children: children, Next: "c1", Items: rows.Len()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	if rest := c.sendGroup(ctx, c.take()); len(rest) != 0 {
		t.Fatalf("%d pages to send again, want none", len(rest))
	}
	for i, g := range gs {
		if err := g.Wait(ctx); err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	var users, raw, children string
	var edges, pagesDone, xmins int
	if err := pool.QueryRow(ctx, `SELECT (SELECT string_agg(unique_id, ',' ORDER BY unique_id) FROM shortvideo.users),
		(SELECT raw->>'from' FROM shortvideo.users WHERE unique_id = 'shared'),
		(SELECT count(*) FROM shortvideo.follows),
		(SELECT sum(pages) FROM crawl.tasks WHERE run_id = $1 AND parent_id IS NULL),
		(SELECT string_agg(t.key || ':' || t.depth || ':' || p.key, ',' ORDER BY t.key) FROM crawl.tasks t JOIN crawl.tasks p ON p.id = t.parent_id),
		(SELECT count(DISTINCT x) FROM (SELECT xmin::text AS x FROM shortvideo.users UNION ALL SELECT xmin::text FROM shortvideo.follows
			UNION ALL SELECT xmin::text FROM crawl.tasks WHERE run_id = $1) s)`, runID).Scan(&users, &raw, &edges, &pagesDone, &children, &xmins); err != nil {
		t.Fatal(err)
	}
	if users != "own_b,shared" || raw != "profile" || edges != 1 || pagesDone != 3 {
		t.Errorf("users %q (raw of shared from %q), %d edges, %d pages; want own_b,shared from the profile, 1 edge, 3 pages", users, raw, edges, pagesDone)
	}
	if children != "child:1:a,other:1:b" {
		t.Errorf("children %q, want child:1:a,other:1:b (the first finder, the least depth)", children)
	}
	if xmins != 1 {
		t.Errorf("rows and advances written by %d transactions, want 1", xmins)
	}
}

// leaseThreeProfiles starts a run of three profile seeds on a database of
// its own and leases all three, for the committer's tests.
func leaseThreeProfiles(t *testing.T) (*pgxpool.Pool, int64, *Frontier, []*Task) {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	runID := testRun(t, pool, profiles("a", "b", "c"))
	f := NewFrontier(pool, "p", time.Minute)
	ts, err := f.LeaseN(context.Background(), runID, 3, nil)
	if err != nil || len(ts) != 3 {
		t.Fatalf("lease: %v %v", ts, err)
	}
	return pool, runID, f, ts
}

// threePagesOneLeaseLost leases three profile tasks, takes lost's lease
// over, and submits a page of each (page gives its rows and items) to a
// Committer with no senders: the test sends.
func threePagesOneLeaseLost(t *testing.T, lost int, page func(i int) (*sinks.Batch, int)) (*pgxpool.Pool, int64, *Committer, []*GroupCommit) {
	t.Helper()
	pool, runID, f, ts := leaseThreeProfiles(t)
	if _, err := pool.Exec(context.Background(), `UPDATE crawl.tasks SET lease_token = lease_token + 1000 WHERE id = $1`, ts[lost].ID); err != nil {
		t.Fatal(err)
	}
	c := &Committer{pool: pool, runID: runID, f: f, kick: make(chan struct{}, 1)}
	var gs []*GroupCommit
	for i, task := range ts {
		rows, items := page(i)
		g, err := c.Submit(task, PageCommit{Rows: rows, Next: "c1", Items: items}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	return pool, runID, c, gs
}
