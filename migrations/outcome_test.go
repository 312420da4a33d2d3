package migrations_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Migrations 00030 and 00036 give the tasks written before it their outcome, from
// their state and reason, once: every reason the crawler wrote maps to the
// outcome it meant, a task still to do has none, and one found again closer
// to a seed (pending with its reason) keeps how it ended. Down and up again
// gives the same.
func TestOutcomeBackfill(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p := provider(t, db)
	ctx := context.Background()
	if _, err := p.DownTo(ctx, 29); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ state, reason, want string }{
		{"done", "done", "done"},
		{"done", "done: private account, lists not fetched", "done"},
		{"done", "end", "done_end"},
		{"done", "empty_page", "done_end"},
		{"done", "page_limit", "done_page_limit"},
		{"done", "stop_at_seen: page 1 held only entries stored by earlier runs (last full walk: run 3, 4 pages)", "done_stop_at_seen"},
		{"done", "repeated_cursor", "done_guard"},
		{"done", "empty_page_more", "done_guard"},
		{"done", `bad page cursor "x"`, "done_guard"},
		{"skipped", "fresh: within refresh_after 20h0m0s: fetched by run 1 at 2025-01-01T00:00:00Z", "skipped_fresh"},
		{"skipped", "adaptive: budget: 3 credits left, 5 kept for the visits ranked higher or under way: expected 0.10 new per 2 credits", "skipped_budget"},
		{"skipped", "adaptive: below_floor: expected 0.10 new per 2 credits", "skipped_adaptive"},
		{"skipped", "not found: /shortvideo/profile: not_found (HTTP 404): no such account", "skipped_not_found"},
		{"skipped", "retired: /shortvideo/popular_videos is retired in dialect scrapecreators", "skipped_retired"},
		{"failed", "/shortvideo/profile: server_error (HTTP 502): bad gateway", "failed"},
		{"failed", "blocked: /shortvideo/profile: forbidden (HTTP 403)", "failed_blocked"},
		{"failed", "cannot store page: value too long", "failed_unstorable"},
		{"failed", "unknown task kind shortvideo.gone", "failed_unstorable"},
		{"pending", "", ""},
		{"leased", "", ""},
		{"pending", "fresh: within refresh_after 20h0m0s: fetched by run 1 at 2025-01-01T00:00:00Z", "skipped_fresh"},
		{"pending", "end", "done_end"},
	}
	if _, err := pool.Exec(ctx, `INSERT INTO crawl.runs (id, job_name, job) VALUES (1, 'j', '{}')`); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		_, err := pool.Exec(ctx, `INSERT INTO crawl.tasks (run_id, kind, key, state, reason, lease_expires_at)
			VALUES (1, 'k', $1, $2, NULLIF($3, ''), CASE WHEN $2 = 'leased' THEN now() END)`, fmt.Sprint(i), c.state, c.reason)
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		for i, c := range cases {
			var got string
			if err := pool.QueryRow(ctx, `SELECT coalesce(outcome::text, '') FROM crawl.tasks WHERE key = $1`, fmt.Sprint(i)).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: %s task, reason %q: outcome %q, want %q", when, c.state, c.reason, got, c.want)
			}
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	check("up")
	if _, err := p.DownTo(ctx, 29); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	check("down and up again")
}
