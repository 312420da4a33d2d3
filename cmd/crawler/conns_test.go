package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/pgbouncer"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A server with no free connection slot (SQLSTATE 53300; here a role's
// connection limit, which answers as max_connections does) is a clear
// error naming database.max_conns, exit 1 at once, not an outage waited
// out as "database unreachable; waiting".
func TestNoConnectionSlotIsAClearError(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	role := fmt.Sprintf("noslot_cli_%d", time.Now().UnixNano())
	if _, err := conn.Exec(context.Background(), `CREATE ROLE `+role+` LOGIN CONNECTION LIMIT 0`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), `DROP ROLE `+role) })
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	job := writeJob(t, "name: noslot\napi: {base_url: http://127.0.0.1:1/api}\ndatabase: {max_conns: 3}\nseeds: {shortvideo: {profiles: [a]}}\n")
	start := time.Now()
	r := invoke(t, map[string]string{"DATABASE_URL": u.String(), "CRAWLER_API_KEY": cliKey}, "run", job)
	if r.code != exitFailure || !strings.Contains(r.stderr, "no free connection slot") || !strings.Contains(r.stderr, "database.max_conns connections (3 here)") {
		t.Errorf("exit %d: %s; want 1 naming database.max_conns", r.code, r.stderr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s: waited as for an outage", took)
	}
}

// Two processes crawl one run through a real PgBouncer in transaction
// pooling mode (pgx's statement cache off by the URL's
// default_query_exec_mode=cache_describe, as docs/pgbouncer.md says): the
// harvest is the clean run's, nothing bought twice, and the budget's and
// the quota's bookkeeping work without session state. PgBouncer missing
// fails the test (make test installs it: scripts/ensure-pgbouncer.sh).
func TestCrawlThroughPgBouncer(t *testing.T) {
	t.Parallel()
	want := clean(t)
	// Latency, so that the second process, started at the second request,
	// finds work to share.
	up := newUpstreamWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: 20 * time.Millisecond}})
	direct := pgtest.DB(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	b, err := pgbouncer.Start(t.Context(), pgbouncer.Options{Host: u.Hostname(), Port: port, PoolSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	through := b.URL(strings.TrimPrefix(u.Path, "/"))
	job := crashJob(t, up.url)
	second := joinAt(t, up, 2, through, job)
	first := startCrawler(t, through, "run", job)
	procs := []*process{first, second()}
	for i, p := range procs {
		if code := p.wait(); code != 0 {
			t.Fatalf("process %d exit %d: %s", i+1, code, p.stderr.String())
		}
	}
	if got := content(t, direct); got != want {
		t.Errorf("content through PgBouncer differs from a clean run:\n%s", diffLines(want, got))
	}
	if n := up.sb.Usage(cliKey).Billable; n != cleanPages {
		t.Errorf("billable %d, want %d: a page bought twice", n, cleanPages)
	}
	if d := up.duplicates(); len(d) > 0 {
		t.Errorf("pages bought twice: %v", d)
	}
}

// database.max_conns in the job file bounds the connections of a crawler
// process: 300 tasks in progress against a slow upstream, max_conns 2 (the
// pool's own default would be at least 4), and the server never sees more
// than 2 of the process's connections while it works; the run ends done,
// every page bought once. Issue 33: the test of the bound built its own
// pool (pipeline's TestConnectionsBoundedAtHighConcurrency), so the job
// file's wiring to the process's pool was not tested.
func TestJobMaxConnsBoundsTheProcess(t *testing.T) {
	t.Parallel()
	const tasks, maxConns = 300, 2
	db := pgtest.DB(t)
	up := newUpstreamWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: 200 * time.Millisecond}})
	handles := make([]string, tasks)
	for i := range handles {
		handles[i] = fmt.Sprintf("c%03d_f0_g0", i)
	}
	job := writeJob(t, fmt.Sprintf("name: conns\napi: {base_url: %s, rate: 5000, burst: 1000}\nlimits: {workers: %d}\ndatabase: {max_conns: %d}\nexpand: {}\nseeds: {shortvideo: {profiles: [%s]}}\n",
		up.url, tasks, maxConns, strings.Join(handles, ", ")))
	admin := testConn(t, db)
	defer admin.Close(context.Background())
	p := startCrawler(t, db, "run", "--live", "off", job)
	exited := make(chan int, 1)
	go func() { exited <- p.wait() }()
	// The server's count of the process's connections, sampled while it
	// works (sampling, not synchronising).
	var peak int64
	var code int
	for done := false; !done; {
		var n int64
		if err := admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'crawler'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, n)
		select {
		case code = <-exited:
			done = true
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Logf("peak %d connections", peak)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}
	if peak > maxConns || peak == 0 {
		t.Errorf("%d connections of the process at once, want 1 to database.max_conns %d", peak, maxConns)
	}
	if n := up.sb.Usage(cliKey).Billable; n != tasks {
		t.Errorf("billable %d, want %d", n, tasks)
	}
}
