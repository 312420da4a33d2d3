package main

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A stop while PostgreSQL is down is bounded (issue 33.1): SIGTERM with the
// database gone ends `crawler run` within --grace plus pipeline.StopBound,
// whatever the database does; before, the credit hold's statements retried
// up to the outage window (10 minutes) under the hold's beat, its close
// and the workers' reservations. The run's end could not be written: it
// stays running, an interrupted run, and the next start once the database
// is back continues it to its end.
func TestStopDuringDatabaseOutageIsBounded(t *testing.T) {
	t.Parallel()
	cluster := pgtest.OwnCluster(t)
	up := newUpstreamWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: 30 * time.Millisecond}})
	reached := make(chan struct{})
	var once sync.Once
	up.setTrigger(func(n int64) {
		if n == 6 {
			once.Do(func() { close(reached) })
		}
	})
	job := crashJobLease(t, up.url, "5s")
	const grace = time.Second
	p := startCrawler(t, cluster.URL(), "run", "--grace", grace.String(), job)
	exited := make(chan int, 1)
	go func() { exited <- p.wait() }()
	select {
	case <-reached:
	case code := <-exited:
		t.Fatalf("exit %d before the outage: %s", code, p.stderr.String())
	}
	ctx := context.Background()
	if err := cluster.StopImmediate(ctx); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	bound := grace + pipeline.StopBound
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	select {
	case code := <-exited:
		took := time.Since(signalled)
		t.Logf("exited %d after %s (bound %s)", code, took.Round(time.Millisecond), bound)
		if code != exitStopped {
			t.Errorf("exit %d, want %d: %s", code, exitStopped, p.stderr.String())
		}
	case <-deadline.C:
		_ = p.cmd.Process.Kill()
		<-exited
		t.Fatalf("still running %s after SIGTERM with the database down: %s", bound, tail(p.stderr.String(), 2000))
	}
	if err := cluster.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	conn := testConn(t, cluster.URL())
	defer conn.Close(ctx)
	var state string
	if err := conn.QueryRow(ctx, `SELECT state FROM crawl.runs WHERE id = 1`).Scan(&state); err != nil || state != "running" {
		t.Errorf("run 1 after the stop: %q, %v; want running (its end could not be written)", state, err)
	}
	env := map[string]string{"DATABASE_URL": cluster.URL(), "CRAWLER_API_KEY": cliKey}
	r := invoke(t, env, "run", job)
	if r.code != 0 || !strings.Contains(r.stdout, "run 1: job \"crash-test\"") {
		t.Fatalf("the next start: exit %d: %s %s; want run 1 continued to its end", r.code, r.stdout, tail(r.stderr, 2000))
	}
	if err := conn.QueryRow(ctx, `SELECT state FROM crawl.runs WHERE id = 1`).Scan(&state); err != nil || state != "done" {
		t.Errorf("run 1 after the next start: %q, %v; want done", state, err)
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
