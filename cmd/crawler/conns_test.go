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
