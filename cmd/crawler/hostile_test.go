package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/testkit/bench"
	"github.com/socialcrawl/crawler/testkit/childproc"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Generous margins: the machine running the suite is small and shared.
// "Promptly" is a bound on the process's CPU time (user and system), not
// its wall time: a parse that goes quadratic or worse on a hostile body
// burns CPU, and CPU time hardly moves with the machine's load, where
// the wall time of the same run went from 7 s (quiet) past 30 s (load
// 20-30). A run that waits instead (a retry, a stall) is caught by the
// one request per task and by runMeasured's 2 minutes.
const (
	hostileMaxRSS = 150 << 20
	hostileMaxCPU = 10 * time.Second // a whole run: start, 4 tasks, exit (1.6-1.8 s measured for the 7.5 MB strings at load 20-24, under 0.3 s for the other classes)
)

// measured is a crawler run as a child process: its exit code, peak RSS
// (VmHWM polled until it exited), wall time and CPU time (user and
// system).
type measured struct {
	*process
	code int
	peak int64
	wall time.Duration
	cpu  time.Duration
}

// runMeasured runs the binary, polling its VmHWM every 10 ms; onStart, when
// set, is called once the process runs (to signal it, say).
func runMeasured(t *testing.T, dbURL string, onStart func(p *process), args ...string) measured {
	t.Helper()
	childproc.Crawler(t) // built before the clock starts: the first run's wall is not go build's
	begin := time.Now()
	p := startCrawler(t, dbURL, args...)
	done := make(chan int, 1)
	go func() { done <- p.wait() }()
	if onStart != nil {
		go onStart(p)
	}
	m := measured{process: p}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case m.code = <-done:
			m.wall = time.Since(begin)
			m.cpu = p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
			return m
		case <-tick.C:
			if hwm, err := bench.VmHWM(p.cmd.Process.Pid); err == nil {
				m.peak = max(m.peak, hwm)
			}
		case <-deadline:
			_ = p.cmd.Process.Kill()
			t.Fatalf("crawler still running after 2 minutes: %s", p.stderr.String())
		}
	}
}

// hostileJob is a job of its own (named after its first handle), so
// that several runs of it share one database.
func hostileJob(t *testing.T, base string, handles ...string) string {
	return writeJob(t, fmt.Sprintf(`name: hostile-%s
api: {base_url: %s, max_retries: 2, retry_initial: 10ms}
limits: {workers: 4}
expand: {}
seeds: {shortvideo: {profiles: [%s]}}
`, handles[0], base, strings.Join(handles, ", ")))
}

// hostileUpstream serves bench.HostileHandler and counts requests.
func hostileUpstream(t *testing.T) (string, *atomic.Int64) {
	var n atomic.Int64
	h := bench.HostileHandler(cliKey)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api", &n
}

func taskStates(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT key, state || ': ' || coalesce(reason, '') FROM crawl.tasks`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// Hostile bodies, four workers receiving them at once: the process stays
// under 150 MB and finishes promptly (hostileMaxCPU); each task ends as its body deserves,
// after one request (a billed body that cannot be used is not bought again).
// The 7.5 MB strings peak at 117-127 MB on a loaded machine; a peak over
// the bound (153 MB once, issue 33) is the collector's mark outrun by the
// page's large allocations when it gets too little CPU
// (docs/how-a-run-works.md, Memory).
func TestHostileBodiesBounded(t *testing.T) {
	t.Parallel()
	base, requests := hostileUpstream(t)
	// One database: each class is a job of its own, its handles its own.
	db := pgtest.DB(t)
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	for _, tc := range []struct {
		name    string
		handles []string
		want    string // state and reason prefix of every task
	}{
		{"7.5 MB strings under the cap", []string{"str_a", "str_b", "str_c", "str_d"}, "done: "},
		{"bodies beyond the cap", []string{"strbig_a", "flood_a", "flood_b", "gzip_a"}, "failed: /shortvideo/profile: bad_request (HTTP 200): body larger than 8388608 bytes"},
		{"9000-deep nesting", []string{"deep_a", "deep_b", "deep_c", "deep_d"}, "failed: /shortvideo/profile: bad_request (HTTP 200): malformed body: nested deeper than 64 levels"},
		{"10,000-digit numbers", []string{"digits_a", "digits_b", "digits_c", "digits_d"}, "failed: /shortvideo/profile: bad_request (HTTP 200): malformed body: number literal longer than 40"},
		{"huge exponents", []string{"exp_a", "exp_b", "exp_c", "exp_d"}, "failed: /shortvideo/profile: bad_request (HTTP 200): malformed body: "},
	} {
		// One class at a time: the figures are the class's own.
		before := requests.Load()
		m := runMeasured(t, db, nil, "run", hostileJob(t, base, tc.handles...))
		t.Logf("%s: exit %d, peak RSS %.1f MB, wall %v, CPU %v", tc.name, m.code, float64(m.peak)/(1<<20), m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond))
		if m.code != exitOK && m.code != 4 { // 4: finished with failed tasks
			t.Errorf("%s: exit %d: %s", tc.name, m.code, m.stderr.String())
		}
		if strings.Contains(m.stderr.String(), "panic") {
			t.Errorf("%s: panic: %s", tc.name, m.stderr.String())
		}
		if m.peak == 0 || m.peak > hostileMaxRSS {
			t.Errorf("%s: peak RSS %.1f MB, want < %d MB", tc.name, float64(m.peak)/(1<<20), hostileMaxRSS>>20)
		}
		if m.cpu > hostileMaxCPU {
			t.Errorf("%s: CPU %v (wall %v), want < %v", tc.name, m.cpu, m.wall, hostileMaxCPU)
		}
		states := taskStates(t, conn)
		for _, h := range tc.handles {
			if !strings.HasPrefix(states[h], tc.want) {
				t.Errorf("%s: task %s = %q, want %q...", tc.name, h, states[h], tc.want)
			}
		}
		if n := requests.Load() - before; n != int64(len(tc.handles)) {
			t.Errorf("%s: %d requests, want %d (one per task)", tc.name, n, len(tc.handles))
		}
	}
}

// SIGTERM while four bodies are still arriving: the process exits within
// --grace plus a few seconds, resumable (exit 3).
func TestSigtermMidBodyExitsWithinGrace(t *testing.T) {
	t.Parallel()
	base, requests := hostileUpstream(t)
	db := pgtest.DB(t)
	const grace = time.Second
	var signalled atomic.Int64
	m := runMeasured(t, db, func(p *process) {
		deadline := time.Now().Add(time.Minute)
		for requests.Load() < 4 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // polling the upstream's counter, not synchronising
		}
		signalled.Store(time.Now().UnixNano())
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}, "run", "--grace", grace.String(), hostileJob(t, base, "trickle_a", "trickle_b", "trickle_c", "trickle_d"))
	took := time.Since(time.Unix(0, signalled.Load())) // measured after the exit
	if m.code != exitStopped {
		t.Errorf("exit %d, want 3: %s", m.code, m.stderr.String())
	}
	if signalled.Load() == 0 || took > grace+3*time.Second {
		t.Errorf("exit %v after SIGTERM, want < grace %v + 3s", took, grace)
	}
	if !strings.Contains(m.stdout.String()+m.stderr.String(), "--resume") {
		t.Errorf("no resume command: %s %s", m.stdout.String(), m.stderr.String())
	}
	t.Logf("exit %v after SIGTERM (grace %v), peak RSS %.1f MB", took.Round(time.Millisecond), grace, float64(m.peak)/(1<<20))
}
