package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

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
