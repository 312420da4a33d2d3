package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A stop signal while crawler run is still starting (after connecting:
// migrating, choosing, joining or resuming the run) exits 3 like a stop
// while connecting, not 1 with the signal's "context canceled": the
// bench's scaleout workload stops the processes it joins to a run a
// second after they come. The same command then works the run.
func TestStopWhileStartingExits3(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	dbURL := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": dbURL, "CRAWLER_API_KEY": cliKey}
	job := writeJob(t, fmt.Sprintf("name: stop-starting\napi: {base_url: %s}\nexpand: {}\nseeds: {shortvideo: {profiles: [acct_f120_g0]}}\n", up.url))
	// Choosing the run waits on crawl.runs, locked here, until the signal.
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `LOCK TABLE crawl.runs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out, errb strings.Builder
	code := runEnv(ctx, []string{"run", job}, &cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }})
	if code != exitStopped || !strings.Contains(errb.String(), "crawler: interrupted while starting: ") ||
		!strings.Contains(errb.String(), "nothing was started: run the command again") {
		t.Errorf("stopped while starting: exit %d, want %d:\n%s", code, exitStopped, errb.String())
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := runEnv(context.Background(), []string{"run", job}, &cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}); code != exitOK {
		t.Fatalf("run after: exit %d:\n%s", code, errb.String())
	}
}
