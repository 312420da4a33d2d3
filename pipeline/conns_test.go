package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/pgtest"
	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

// Requests in flight hold no database connection (issue 26): 600 tasks in
// progress against a slow upstream, on a server of max_connections 20, with
// database.max_conns 6. The process never has more than 6 connections
// open, more than 500 requests are in flight at once, and the run ends
// with every task done and every page bought once.
func TestConnectionsBoundedAtHighConcurrency(t *testing.T) {
	t.Parallel()
	const tasks, maxConns = 600, 6
	cluster := pgtest.OwnClusterWith(t, pgtmp.Options{MaxConnections: 20})
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = maxConns
	cfg.ConnConfig.RuntimeParams["application_name"] = "bounded"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool); err != nil {
		t.Fatal(err)
	}

	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, Faults: sandbox.Faults{Latency: 1500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, peakInFlight atomic.Int64
	h := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for p := peakInFlight.Load(); n > p && !peakInFlight.CompareAndSwap(p, n); p = peakInFlight.Load() {
		}
		h.ServeHTTP(w, r)
		inFlight.Add(-1)
	}))
	defer srv.Close()
	b := &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL + "/api"}
	handles := make([]string, tasks)
	for i := range handles {
		handles[i] = fmt.Sprintf("c%03d_f0_g0", i)
	}
	job := b.job(t, fmt.Sprintf("  rate: 5000\n  burst: 1000\nlimits: {workers: %d}\ndatabase: {max_conns: %d}\nexpand: {}\nseeds: {shortvideo: {profiles: [%s]}}\n",
		tasks, maxConns, strings.Join(handles, ", ")))

	// The server's count of the run's connections, polled while it works.
	admin, err := pgxpool.New(ctx, cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var peakConns atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			var n int64
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'bounded'`).Scan(&n); err == nil && n > peakConns.Load() {
				peakConns.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond): // sampling the server, not synchronising
			}
		}
	})
	runID := b.start(t, job)
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	close(stop)
	wg.Wait()
	if err != nil || sum.State != "done" {
		t.Fatalf("run: %v, %+v", err, sum)
	}
	t.Logf("peak: %d requests in flight, %d connections", peakInFlight.Load(), peakConns.Load())
	if got := peakConns.Load(); got > maxConns {
		t.Errorf("%d connections at once, want at most database.max_conns %d", got, maxConns)
	}
	if got := peakInFlight.Load(); got < 500 {
		t.Errorf("at most %d requests in flight, want over 500", got)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'done'`, runID); got != tasks {
		t.Errorf("%d tasks done, want %d", got, tasks)
	}
	if got := sb.Usage(testKey).Billable; got != tasks {
		t.Errorf("billable %d, want %d", got, tasks)
	}
}
