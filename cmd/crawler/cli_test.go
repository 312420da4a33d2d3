package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

const cliKey = "sk-cli-secret-5d0e"

type result struct {
	code           int
	stdout, stderr string
}

// invoke runs the CLI in-process with env as its whole environment.
func invoke(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(context.Background(), args, &cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }})
	return result{code, out.String(), errb.String()}
}

func newSandbox(t *testing.T) (*sandbox.Server, string) {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{cliKey}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	return sb, srv.URL + "/api"
}

func writeJob(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"help"}, {"run", "--help"}, {"migrate", "--help"}, {"sandbox", "--help"}} {
		r := invoke(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage") {
			t.Errorf("%v: code %d stdout %q", args, r.code, r.stdout)
		}
	}
	if r := invoke(t, nil, "frobnicate"); r.code != exitUsage || !strings.Contains(r.stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %+v", r)
	}
	if r := invoke(t, nil); r.code != exitUsage {
		t.Errorf("no args: %+v", r)
	}
}

// Bad job files exit 2 naming key and line, before touching the database.
func TestBadJobFileWritesNothing(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.EmptyDB(t)
	env := map[string]string{"DATABASE_URL": dbURL, "CRAWLER_API_KEY": cliKey}
	cases := map[string]struct{ text, want string }{
		"unknown key": {"name: x\napi: {base_url: http://127.0.0.1:9/api}\nseeds: {shortvideo: {profiles: [a]}}\nspeed: 3\n", "job.yaml:4: speed: unknown key"},
		"no name":     {"api: {base_url: http://127.0.0.1:9/api}\nseeds: {shortvideo: {profiles: [a]}}\n", "job.yaml:1: name: is required"},
		"wrong type":  {"name: x\napi: {base_url: http://127.0.0.1:9/api}\nlimits:\n  max_pages: lots\nseeds: {shortvideo: {profiles: [a]}}\n", "job.yaml:4"},
		"no seeds":    {"name: x\napi: {base_url: http://127.0.0.1:9/api}\nseeds:\n  shortvideo:\n    profiles: []\n", "seeds: no seeds"},
	}
	for name, tc := range cases {
		r := invoke(t, env, "run", writeJob(t, tc.text))
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: code %d, stderr %q, want %q", name, r.code, r.stderr, tc.want)
		}
	}
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname IN ('crawl', 'shortvideo')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("schemas created by a rejected job: %d (%v)", n, err)
	}
}

func TestKeyVariableUnsetFailsBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	sb, base := newSandbox(t)
	job := writeJob(t, fmt.Sprintf("name: x\napi: {base_url: %s, key_env: CRAWLER_MY_KEY}\nseeds: {shortvideo: {profiles: [a]}}\n", base))
	r := invoke(t, map[string]string{"DATABASE_URL": pgtest.DB(t)}, "run", job)
	if r.code != exitUsage || !strings.Contains(r.stderr, "CRAWLER_MY_KEY is not set") {
		t.Errorf("code %d stderr %q", r.code, r.stderr)
	}
	if u := sb.Usage(""); u.Requests != 0 {
		t.Errorf("%d requests reached the sandbox", u.Requests)
	}
}

func TestDatabaseUnreachableNamesHostNotPassword(t *testing.T) {
	t.Parallel()
	job := writeJob(t, "name: x\napi: {base_url: http://127.0.0.1:9/api}\nseeds: {shortvideo: {profiles: [a]}}\n")
	env := map[string]string{
		"DATABASE_URL":    "postgres://harvester:hunter2-pw@127.0.0.1:1/warehouse?connect_timeout=2",
		"CRAWLER_API_KEY": cliKey,
	}
	r := invoke(t, env, "run", job)
	if r.code != exitFailure || !strings.Contains(r.stderr, "127.0.0.1:1") || !strings.Contains(r.stderr, "warehouse") {
		t.Errorf("code %d stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "hunter2") {
		t.Errorf("password leaked: %q", r.stderr)
	}
	if r := invoke(t, map[string]string{"CRAWLER_API_KEY": cliKey}, "run", job); r.code != exitUsage || !strings.Contains(r.stderr, "DATABASE_URL is not set") {
		t.Errorf("unset DATABASE_URL: %+v", r)
	}
}

// A full run through the CLI, migrations included (a database never
// migrated): the key reaches the sandbox, and neither logs, the database
// nor pg_stat_activity ever hold it.
func TestRunKeepsKeySecret(t *testing.T) {
	t.Parallel()
	sb, base := newSandbox(t)
	dbURL := pgtest.EmptyDB(t)
	job := writeJob(t, fmt.Sprintf("name: secret-check\napi: {base_url: %s}\nseeds: {shortvideo: {profiles: [\"@k_f60_g2\"]}}\n", base))
	r := invoke(t, map[string]string{"DATABASE_URL": dbURL, "CRAWLER_API_KEY": cliKey}, "run", "--log-level", "debug", job)
	if r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "done: 4 pages") {
		t.Errorf("stdout %q", r.stdout)
	}
	if u := sb.Usage(cliKey); u.Billable != 4 {
		t.Errorf("billable = %d, want 4", u.Billable)
	}
	if strings.Contains(r.stdout+r.stderr, cliKey) {
		t.Error("key in output")
	}
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	var hits int
	err := conn.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM crawl.runs WHERE job::text LIKE '%' || $1 || '%')
		     + (SELECT count(*) FROM crawl.tasks WHERE params::text || coalesce(reason, '') LIKE '%' || $1 || '%')
		     + (SELECT count(*) FROM shortvideo.users WHERE raw::text LIKE '%' || $1 || '%')
		     + (SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid())`, cliKey).Scan(&hits)
	if err != nil || hits != 0 {
		t.Errorf("key found %d times in the database (%v)", hits, err)
	}
}
