package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Requests in flight hold no database connection (issue 26): 200 tasks in
// progress against a slow upstream, with database.max_conns 6. The process never has more than 6 connections
// open, more than 180 requests are in flight at once, and the run ends
// with every task done and every page bought once. Answers take 5 s: on
// two loaded cores a process leased and sent some 65 tasks a second, so
// that 600 tasks answered in 1.5 s (before) or 300 in 3 s were never all
// in flight at once (188 to 246 were).
func TestConnectionsBoundedAtHighConcurrency(t *testing.T) {
	t.Parallel()
	st := highConcurrency(t, 200, 6, 5*time.Second)
	if st.peakInFlight <= 180 {
		t.Errorf("at most %d requests in flight, want over 180", st.peakInFlight)
	}
}

// BenchmarkInFlight2000 is the run above with 2,000 tasks in progress and
// database.max_conns 10 against an upstream answering in 2 s: the
// connections it uses, the requests in flight, and the CPU and memory of
// the test process (the sandbox's included) for the whole run.
func BenchmarkInFlight2000(b *testing.B) {
	for b.Loop() {
		var ru0, ru1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		start := time.Now()
		st := highConcurrency(b, 2000, 10, 2*time.Second)
		took := time.Since(start)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()+ru1.Stime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(st.peakConns), "conns")
		b.ReportMetric(float64(st.peakInFlight), "in-flight")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(took.Seconds(), "run-s")
		b.ReportMetric(float64(ru1.Maxrss)/1024, "maxrss-MB")
		b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MB")
	}
}

type concurrencyStats struct{ peakInFlight, peakConns int64 }

// highConcurrency runs tasks profile tasks at once (limits.workers tasks)
// with database.max_conns maxConns against a sandbox answering in latency,
// on a database of its own, and checks the run: at most maxConns
// connections, every task done, every page bought once. The server's
// count of the process's connections is the proof (they carry an
// application_name of their own), not a server too small for more: a
// cluster of its own cost more CPU than the run (initdb, a migration).
func highConcurrency(t testing.TB, tasks, maxConns int, latency time.Duration) concurrencyStats {
	url := pgtest.DB(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = int32(maxConns)
	app := "bounded " + cfg.ConnConfig.Database // the server is shared with other tests and packages
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, Faults: sandbox.Faults{Latency: latency}})
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
	text := fmt.Sprintf("name: test\napi:\n  base_url: %s\n  key_env: CRAWLER_TEST_KEY\n  max_retries: 1\n  rate: 5000\n  burst: 1000\n"+
		"limits: {workers: %d}\ndatabase: {max_conns: %d}\nexpand: {}\nseeds: {shortvideo: {profiles: [%s]}}\n",
		b.baseURL, tasks, maxConns, strings.Join(handles, ", "))
	job, err := jobfile.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}

	// The server's count of the run's connections, polled while it works.
	admin, err := pgxpool.New(ctx, url)
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
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err == nil && n > peakConns.Load() {
				peakConns.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond): // sampling the server, not synchronising
			}
		}
	})
	runID, err := pipeline.Start(ctx, pool, job)
	if err != nil {
		t.Fatal(err)
	}
	opts := b.options(job, testKey)
	// The adaptive limit starts at the tasks (not 16, doubling): the run
	// is over before a doubling would reach them.
	opts.Client.InitialInFlight = tasks
	sum, err := pipeline.Run(ctx, opts, job, runID)
	close(stop)
	wg.Wait()
	if err != nil || sum.State != "done" {
		t.Fatalf("run: %v, %+v", err, sum)
	}
	t.Logf("peak: %d requests in flight, %d connections", peakInFlight.Load(), peakConns.Load())
	if got := peakConns.Load(); got > int64(maxConns) {
		t.Errorf("%d connections at once, want at most database.max_conns %d", got, maxConns)
	}
	var done int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'done'`, runID).Scan(&done); err != nil || done != int64(tasks) {
		t.Errorf("%d tasks done (%v), want %d", done, err, tasks)
	}
	if got := sb.Usage(testKey).Billable; got != int64(tasks) {
		t.Errorf("billable %d, want %d", got, tasks)
	}
	return concurrencyStats{peakInFlight: peakInFlight.Load(), peakConns: peakConns.Load()}
}
