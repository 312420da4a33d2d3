package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// An upstream that echoes the key, raw and JSON-escaped, in a 400 body, a
// 401 body and a 2xx body: the key reaches no output, no status and no
// column of any table.
func TestEchoedKeyNeverStoredOrPrinted(t *testing.T) {
	t.Parallel()
	dashes := strings.ReplaceAll(cliKey, "-", `\u002d`) // sk\u002dcli\u002d...
	var all strings.Builder                             // every character escaped
	for _, r := range cliKey {
		fmt.Fprintf(&all, `\u%04X`, r)
	}
	forms := []string{cliKey, dashes, all.String(), strings.ToUpper(all.String())}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.URL.Query().Get("handle")
		switch {
		case strings.HasPrefix(h, "bad"):
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"success":false,"message":"invalid request for key %s (%s)"}`, cliKey, dashes)
		case strings.HasPrefix(h, "refused"):
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"message":"key %s not allowed"}`, all.String())
		default:
			fmt.Fprintf(w, `{"user":{"uniqueId":%q,"nickname":"%s","signature":"%s"},"debug":{"k":"%s","%s":1},
				"itemList":[{"id":"71","desc":"%s","author":{"uniqueId":"v%s"}}]}`, h, cliKey, dashes, all.String(), cliKey, dashes, cliKey)
		}
	}))
	t.Cleanup(srv.Close)
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	job := func(handles string) string {
		return writeJob(t, fmt.Sprintf("name: echo\napi: {base_url: %s/api, max_retries: 1}\nlimits: {workers: 1}\nexpand: {}\nseeds: {shortvideo: {profiles: [%s]}}\n", srv.URL, handles))
	}
	var out strings.Builder
	r1 := invoke(t, env, "run", "--log-level", "debug", job("bad_a, echo_b"))
	if r1.code != exitOK && r1.code != 4 {
		t.Errorf("run 1: exit %d: %s", r1.code, r1.stderr)
	}
	r2 := invoke(t, env, "run", "--log-level", "debug", job("refused_c"))
	if r2.code != exitStopped {
		t.Errorf("run 2: exit %d, want 3: %s", r2.code, r2.stderr)
	}
	s1 := invoke(t, env, "status", "--run", "1")
	s2 := invoke(t, env, "status")
	for _, r := range []result{r1, r2, s1, s2} {
		out.WriteString(r.stdout + r.stderr)
	}
	if !strings.Contains(out.String(), "[REDACTED]") {
		t.Errorf("expected the marker in the output: %s", out.String())
	}
	dump := dumpAll(t, db)
	if !strings.Contains(dump, "[REDACTED]") || !strings.Contains(dump, "echo_b") {
		t.Errorf("dump lacks the redacted rows: %.2000s", dump)
	}
	for _, f := range forms {
		if strings.Contains(out.String(), f) {
			t.Errorf("key form %q in output:\n%s", f, out.String())
		}
		if strings.Contains(dump, f) {
			t.Errorf("key form %q in the database", f)
		}
	}
}

// dumpAll is every row of every table of the crawler's schemas as text.
func dumpAll(t *testing.T, dbURL string) string {
	t.Helper()
	ctx := context.Background()
	conn := testConn(t, dbURL)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT format('%I.%I', table_schema, table_name) FROM information_schema.tables
		WHERE table_schema IN ('crawl', 'shortvideo', 'photosocial', 'public') AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 10 {
		t.Fatalf("tables %v: %v", tables, err)
	}
	var b strings.Builder
	for _, tb := range tables {
		rows, err := conn.Query(ctx, "SELECT t::text FROM "+tb+" t")
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n%s\n", tb, strings.Join(lines, "\n"))
	}
	return b.String()
}
