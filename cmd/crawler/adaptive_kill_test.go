package main

import (
	"context"
	"fmt"
	"syscall"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// adaptiveKillJob is an adaptive job of a big account (400 followers, 60
// more a world day: a walk of several pages) and a small one, one worker
// so the requests come in a known order.
func adaptiveKillJob(t *testing.T, base string) string {
	return writeJob(t, fmt.Sprintf(`name: adaptive-kill
api: {base_url: %s, max_retries: 2, timeout: 3s}
limits: {workers: 1, lease_timeout: 3s, max_credits: 100}
expand: {followers: {}}
reuse: {adaptive: true, min_yield: 0.01}
seeds: {shortvideo: {profiles: [big_f400_r60, small_f3_r1]}}
`, base))
}

// A run killed (kill -9) and then abandoned for a new run still teaches
// the schedule: the visits it finished are recorded, and the walk it left
// halfway is marked cut, so the next run walks that list whole.
func TestAdaptiveKilledRunIsRecorded(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	conn := testConn(t, db)
	defer conn.Close(ctx)

	day0 := newUpstreamWith(t, sandbox.Config{WorldTime: 0})
	if p := startCrawler(t, db, "run", adaptiveKillJob(t, day0.url)); p.wait() != 0 {
		t.Fatalf("night 1: %s", p.stderr.String())
	}
	if _, err := conn.Exec(ctx, `UPDATE crawl.revisit_items SET last_visit_at = last_visit_at - interval '1 day'`); err != nil {
		t.Fatal(err)
	}
	// Night 2, killed as the big list's third page (of 3) is asked for:
	// both profiles are done, the big list has a page or two committed
	// (the second page's commit may be lost with the process).
	day1 := newUpstreamWith(t, sandbox.Config{WorldTime: 1})
	job := adaptiveKillJob(t, day1.url)
	if p, code := runSignalledAt(t, day1, db, job, 5, syscall.SIGKILL); code != -int(syscall.SIGKILL) {
		t.Fatalf("night 2 exit %d, want killed: %s", code, p.stderr.String())
	}
	var walked int
	if err := conn.QueryRow(ctx, `SELECT pages FROM crawl.tasks WHERE run_id = 2 AND kind = 'shortvideo.followers' AND params->>'handle' = 'big_f400_r60'`).Scan(&walked); err != nil || walked < 1 || walked > 2 {
		rows, _ := conn.Query(ctx, `SELECT id, kind, key, state, pages, coalesce(reason, '') FROM crawl.tasks WHERE run_id = 2 ORDER BY id`)
		for rows.Next() {
			v, _ := rows.Values()
			t.Log(v...)
		}
		rows.Close()
		t.Fatalf("the big list's walk at the kill: %d pages (%v), want 1 or 2", walked, err)
	}
	// Its leases have run out; the next night abandons it. A statement the
	// process sent before dying (a heartbeat extending its lease) may still
	// commit after it: its sessions are gone first.
	pgtest.WaitNone(t, conn, "sessions of the killed process",
		`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if _, err := conn.Exec(ctx, `UPDATE crawl.tasks SET lease_expires_at = now() - interval '1 second' WHERE state = 'leased'`); err != nil {
		t.Fatal(err)
	}
	day2 := newUpstreamWith(t, sandbox.Config{WorldTime: 2})
	if p := startCrawler(t, db, "run", "--new-run", adaptiveKillJob(t, day2.url)); p.wait() != 0 {
		t.Fatalf("night 3: %s", p.stderr.String())
	}
	// The killed run's totals hold what its two profile visits saw.
	var recorded *int
	if err := conn.QueryRow(ctx, `SELECT (revisit->'captured'->>'items')::int FROM crawl.runs WHERE id = 2`).Scan(&recorded); err != nil || recorded == nil || *recorded < 2 {
		t.Errorf("the killed run's revisits recorded: %v (%v), want 2 items at least", recorded, err)
	}
	var full bool
	if err := conn.QueryRow(ctx, `SELECT full_walk FROM crawl.revisit_plan p JOIN crawl.tasks t ON t.run_id = p.run_id AND t.kind = p.kind AND t.key = p.key
		WHERE p.run_id = 3 AND t.params->>'handle' = 'big_f400_r60' AND p.kind = 'shortvideo.followers'`).Scan(&full); err != nil || !full {
		t.Errorf("night 3's schedule walks the list cut by the kill whole: %v (%v)", full, err)
	}
}
