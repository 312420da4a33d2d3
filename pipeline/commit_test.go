package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A page's commit is one batch in an implicit transaction, fenced by its
// first statement: a retry of a commit that went through succeeds without
// counting the page twice, a stale worker's commit is refused, and neither
// leaves any of its rows behind.
func TestCommitBatchIsFencedAndIdempotent(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	job, err := jobfile.Parse("t.yaml", []byte("name: t\napi: {base_url: http://127.0.0.1:1/api, key_env: CRAWLER_K}\nseeds: {shortvideo: {profiles: [a]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	runID, err := Start(ctx, pool, job)
	if err != nil {
		t.Fatal(err)
	}
	stale := frontier.NewFrontier(pool, "stale", time.Minute)
	c := &crawl{opts: Options{Pool: pool, OutageTimeout: time.Second}, job: job, runID: runID, frontier: stale, log: slog.New(slog.DiscardHandler)}
	t1, err := stale.Lease(ctx, runID, nil)
	if err != nil || t1 == nil {
		t.Fatalf("lease: %v %v", t1, err)
	}
	page := func(user string) *fetched {
		res := &fetched{Result: &kinds.Result{Items: 1, Next: "c1"}}
		sinks.Add(&res.Batch, sinks.SVUser{UniqueID: user, Raw: []byte(`{}`)})
		return res
	}
	users := func() string {
		var s string
		if err := pool.QueryRow(ctx, `SELECT string_agg(unique_id, ',' ORDER BY unique_id) FROM shortvideo.users`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := c.commit(ctx, t1, page("u1"), nil); err != nil {
		t.Fatal(err)
	}
	// The same page again, as a retry whose first attempt went through.
	if err := stale.Commit(ctx, runID, t1, frontier.PageCommit{Rows: &page("u2").Batch, Next: "c1", Items: 1}); !errors.Is(err, frontier.ErrAlreadyApplied) {
		t.Fatalf("retried commit: %v, want ErrAlreadyApplied", err)
	}
	if err := c.commit(ctx, t1, page("u2"), nil); err != nil {
		t.Fatalf("commit treats an applied page as done: %v", err)
	}
	var pages, items int
	if err := pool.QueryRow(ctx, `SELECT pages, items FROM crawl.tasks WHERE id = $1`, t1.ID).Scan(&pages, &items); err != nil || pages != 1 || items != 1 {
		t.Fatalf("pages %d items %d (%v), want the page counted once", pages, items, err)
	}
	// Another worker takes the task over; the stale one's next page is refused.
	if _, err := pool.Exec(ctx, `UPDATE crawl.tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, t1.ID); err != nil {
		t.Fatal(err)
	}
	fresh := frontier.NewFrontier(pool, "fresh", time.Minute)
	if n, err := fresh.Rescue(ctx, runID); err != nil || n != 1 {
		t.Fatalf("rescue %d %v", n, err)
	}
	if t2, err := fresh.Lease(ctx, runID, nil); err != nil || t2 == nil || t2.ID != t1.ID {
		t.Fatalf("takeover: %+v %v", t2, err)
	}
	t1.Pages, t1.Cursor = 1, "c1"
	next := page("u3")
	next.Next = "c2"
	if err := stale.Commit(ctx, runID, t1, frontier.PageCommit{Rows: &next.Batch, Children: []kinds.NewTask{{Kind: "shortvideo.profile", Key: "child"}}, Next: next.Next, Items: next.Items, Stop: next.Stop}); !errors.Is(err, frontier.ErrLeaseLost) {
		t.Fatalf("stale commit: %v, want ErrLeaseLost", err)
	}
	if got := users(); got != "u1" {
		t.Errorf("users %q, want only u1: a refused batch left rows", got)
	}
	var tasks int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1`, runID).Scan(&tasks); err != nil || tasks != 1 {
		t.Errorf("tasks %d (%v), want 1: a refused batch added its children", tasks, err)
	}
}
