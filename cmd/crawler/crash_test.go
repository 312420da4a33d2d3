package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/childproc"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// upstream is a sandbox behind a middleware that records every request and
// can act on the process under test when the n-th request arrives.
type upstream struct {
	sb      *sandbox.Server
	url     string
	n       atomic.Int64
	mu      sync.Mutex
	seen    map[string]int // path?query -> 200 answers
	trigger func(n int64)  // called as request n arrives, before it is served
	serving atomic.Int64   // requests past the trigger not yet answered
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	return newUpstreamWith(t, sandbox.Config{})
}

// newUpstreamWith is newUpstream over a sandbox configured by cfg.
func newUpstreamWith(t *testing.T, cfg sandbox.Config) *upstream {
	t.Helper()
	cfg.APIKeys = []string{cliKey}
	sb, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{sb: sb, seen: map[string]int{}}
	h := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := u.n.Add(1)
		u.mu.Lock()
		trig := u.trigger
		u.mu.Unlock()
		if trig != nil {
			trig(n)
		}
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		u.serving.Add(1)
		h.ServeHTTP(rec, r)
		u.serving.Add(-1)
		if rec.status == 200 {
			u.mu.Lock()
			u.seen[r.URL.Path+"?"+r.URL.RawQuery]++
			u.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL + "/api"
	return u
}

func (u *upstream) setTrigger(f func(n int64)) {
	u.mu.Lock()
	u.trigger = f
	u.mu.Unlock()
}

// duplicates lists requests answered 200 more than once.
func (u *upstream) duplicates() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var d []string
	for k, n := range u.seen {
		if n > 1 {
			d = append(d, fmt.Sprintf("%s x%d", k, n))
		}
	}
	return d
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

const crashWorkers = 4

// crashJob needs 1+8+3 + 1+2+1 + 1+1+1 = 19 pages from the sandbox.
func crashJob(t *testing.T, base string) string {
	return crashJobLease(t, base, "2m")
}

// crashJobLease is crashJob with a lease timeout: short only where a dead
// process's leases must expire, since a stall of a loaded machine longer
// than a short lease hands a live worker's task to another and re-buys a
// page. A lease must outlast a request: api.timeout is the lease too.
func crashJobLease(t *testing.T, base, lease string) string {
	return writeJob(t, fmt.Sprintf(`name: crash-test
api: {base_url: %s, max_retries: 2, timeout: %s}
limits: {workers: %d, lease_timeout: %s}
seeds:
  shortvideo:
    profiles: [big_f400_g120, mid_f100_g50, small_f3_g3]
`, base, lease, crashWorkers, lease))
}

const cleanPages = 19

// process is a crawler run started as a child process.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr strings.Builder
}

func startCrawler(t *testing.T, dbURL string, args ...string) *process {
	t.Helper()
	return startCrawlerEnv(t, dbURL, nil, args...)
}

// startCrawlerEnv is startCrawler with env (NAME=value) added to the
// process's environment.
func startCrawlerEnv(t *testing.T, dbURL string, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(childproc.Crawler(t), args...)}
	p.cmd.Env = append([]string{"DATABASE_URL=" + dbURL, "CRAWLER_API_KEY=" + cliKey, "PATH=" + os.Getenv("PATH")}, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *process) wait() int {
	err := p.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1000
	}
	return 0
}

// testConn opens a connection to the database at dbURL for the test; the
// caller closes it.
func testConn(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// content is the harvest as an analyst sees it plus the frontier's
// outcome, without timestamps, lease bookkeeping or insertion-order ids.
func content(t *testing.T, dbURL string) string {
	t.Helper()
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	return contentOn(t, conn)
}

// contentOn is content read on conn: a test that queries the database
// again spares a connection (a new server backend and its catalog caches).
func contentOn(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	var out strings.Builder
	for _, q := range []string{
		`SELECT to_jsonb(u) - 'updated_at' FROM shortvideo.users u`,
		`SELECT to_jsonb(s) - 'captured_at' FROM shortvideo.user_snapshots s`,
		`SELECT to_jsonb(f) FROM shortvideo.follows f`,
		`SELECT jsonb_build_object('kind', kind, 'key', key, 'state', state, 'reason', reason, 'cursor', cursor,
		        'pages', pages, 'items', items, 'depth', depth, 'params', params) FROM crawl.tasks`,
		`SELECT jsonb_build_object('state', state) FROM crawl.runs`,
	} {
		rows, err := conn.Query(ctx, "SELECT x::text FROM ("+q+") AS t(x) ORDER BY 1")
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s\n%s\n", q, strings.Join(lines, "\n"))
	}
	return out.String()
}

var (
	cleanOnce    sync.Once
	cleanContent string
)

// clean is the content of an uninterrupted run of crashJob.
func clean(t *testing.T) string {
	t.Helper()
	cleanOnce.Do(func() {
		up := newUpstream(t)
		db := pgtest.DB(t)
		p := startCrawler(t, db, "run", crashJob(t, up.url))
		if code := p.wait(); code != 0 {
			t.Fatalf("clean run exit %d: %s", code, p.stderr.String())
		}
		if b := up.sb.Usage(cliKey).Billable; b != cleanPages {
			t.Fatalf("clean run billable = %d, want %d", b, cleanPages)
		}
		cleanContent = content(t, db)
	})
	if cleanContent == "" {
		t.Fatal("clean run failed in another test")
	}
	return cleanContent
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	inA := map[string]bool{}
	for _, l := range al {
		inA[l] = true
	}
	inB := map[string]bool{}
	for _, l := range bl {
		inB[l] = true
	}
	var d []string
	for _, l := range al {
		if !inB[l] {
			d = append(d, "- "+l)
		}
	}
	for _, l := range bl {
		if !inA[l] {
			d = append(d, "+ "+l)
		}
	}
	if len(d) > 20 {
		d = append(d[:20], "...")
	}
	return strings.Join(d, "\n")
}

// kill -9 at several points, then resume: the same content as a clean run,
// and at most the in-flight requests bought twice.
func TestKill9ThenResume(t *testing.T) {
	t.Parallel()
	want := clean(t)
	for _, at := range []int64{1, 2, 5, 9, 14, 18} {
		t.Run(fmt.Sprintf("at_request_%d", at), func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t)
			db := pgtest.DB(t)
			job := crashJobLease(t, up.url, "3s")
			p, code := runSignalledAt(t, up, db, job, at, syscall.SIGKILL)
			if code != -int(syscall.SIGKILL) {
				t.Fatalf("first run exit %d, want SIGKILL: %s", code, p.stderr.String())
			}
			r := startCrawler(t, db, "run", "--resume", "1", job)
			if code := r.wait(); code != 0 {
				t.Fatalf("resume exit %d: %s", code, r.stderr.String())
			}
			conn := testConn(t, db)
			defer conn.Close(context.Background())
			if got := contentOn(t, conn); got != want {
				t.Errorf("content after kill at %d + resume differs from a clean run:\n%s", at, diffLines(want, got))
			}
			extra := up.sb.Usage(cliKey).Billable - cleanPages
			t.Logf("kill at request %d: %d extra billable requests", at, extra)
			if extra < 0 || extra > crashWorkers {
				t.Errorf("extra billable = %d, want 0..%d", extra, crashWorkers)
			}
			// What the dead process held stays spent (its requests in
			// flight may have been billed); the ledger adds up.
			var billed, committed, holds int64
			if err := conn.QueryRow(context.Background(), `SELECT credits_billed, credits_committed, (SELECT coalesce(sum(held), 0) FROM crawl.credit_holds) FROM crawl.runs`).Scan(&billed, &committed, &holds); err != nil {
				t.Fatal(err)
			}
			if billed > up.sb.Usage(cliKey).Billable {
				t.Errorf("credits_billed %d > sandbox billable", billed)
			}
			if committed != billed+holds {
				t.Errorf("credits committed %d, billed %d, held by the dead process %d: the ledger does not add up", committed, billed, holds)
			}
		})
	}
}

// SIGINT: the process stops leasing, finishes or releases in-flight work,
// exits 3 saying how to resume, and the resume completes the run.
func TestInterruptThenResume(t *testing.T) {
	t.Parallel()
	want := clean(t)
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := crashJob(t, up.url)
	p, code := runSignalledAt(t, up, db, job, 6, syscall.SIGINT)
	if code != exitStopped {
		t.Fatalf("exit %d, want %d: %s", code, exitStopped, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "crawler run --resume 1 ") {
		t.Errorf("no resume hint in %q", p.stderr.String())
	}
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	var leased int
	var state string
	err := conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM crawl.tasks WHERE state = 'leased'), (SELECT state FROM crawl.runs)`).Scan(&leased, &state)
	if err != nil || leased != 0 || state != "stopped" {
		t.Errorf("after SIGINT: %d tasks still leased, run %s (%v)", leased, state, err)
	}
	up.setTrigger(nil)
	r := startCrawler(t, db, "run", "--resume", "1", job)
	if code := r.wait(); code != 0 {
		t.Fatalf("resume exit %d: %s", code, r.stderr.String())
	}
	if got := contentOn(t, conn); got != want {
		t.Errorf("content differs from a clean run:\n%s", diffLines(want, got))
	}
	if extra := up.sb.Usage(cliKey).Billable - cleanPages; extra < 0 || extra > crashWorkers {
		t.Errorf("extra billable = %d", extra)
	}
	if d := up.duplicates(); len(d) > crashWorkers {
		t.Errorf("requests bought twice: %v", d)
	}
}

// A second process joins a running run: together they finish it, and no
// request is answered twice.
func TestTwoProcessesShareARun(t *testing.T) {
	t.Parallel()
	want := clean(t)
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := crashJob(t, up.url)
	second := joinAt(t, up, 3, db, job)
	first := startCrawler(t, db, "run", job)
	if code := first.wait(); code != 0 {
		t.Fatalf("first exit %d: %s", code, first.stderr.String())
	}
	if code := second().wait(); code != 0 {
		t.Fatalf("second exit %d: %s", code, second().stderr.String())
	}
	if d := up.duplicates(); len(d) != 0 {
		t.Errorf("fetched twice: %v", d)
	}
	if b := up.sb.Usage(cliKey).Billable; b != cleanPages {
		t.Errorf("billable = %d, want %d", b, cleanPages)
	}
	if got := content(t, db); got != want {
		t.Errorf("content differs from a clean run:\n%s", diffLines(want, got))
	}
	t.Logf("first: %s\nsecond: %s", strings.TrimSpace(first.stdout.String()), strings.TrimSpace(second().stdout.String()))
}

// Two processes on one run share its credit budget: together they buy
// exactly max_credits pages, not that many each.
func TestTwoProcessesShareTheBudget(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := writeJob(t, fmt.Sprintf(`name: shared-budget
api: {base_url: %s}
limits: {workers: 3, max_credits: 9}
seeds:
  shortvideo:
    profiles: [big_f400_g120, mid_f100_g50, small_f3_g3]
`, up.url))
	second := joinAt(t, up, 2, db, job)
	first := startCrawler(t, db, "run", job)
	firstCode := first.wait()
	secondCode := second().wait()
	if firstCode != exitSpent && secondCode != exitSpent {
		t.Errorf("exit codes %d and %d; one should report the spent budget (%d)", firstCode, secondCode, exitSpent)
	}
	if b := up.sb.Usage(cliKey).Billable; b != 9 {
		t.Errorf("billable = %d, want exactly the shared budget 9", b)
	}
	if d := up.duplicates(); len(d) != 0 {
		t.Errorf("fetched twice: %v", d)
	}
	if !strings.Contains(first.stderr.String()+second().stderr.String(), "budget") {
		t.Errorf("no budget message:\n%s\n%s", first.stderr.String(), second().stderr.String())
	}
}

// runSignalledAt runs `crawler run job` and sends it sig as the upstream
// receives its at-th request; it returns the process, ended, and its exit
// code.
func runSignalledAt(t *testing.T, up *upstream, db, job string, at int64, sig os.Signal) (*process, int) {
	t.Helper()
	var victim atomic.Pointer[os.Process]
	up.setTrigger(func(n int64) {
		if n == at {
			if p := victim.Load(); p != nil {
				_ = p.Signal(sig)
			}
		}
	})
	p := startCrawler(t, db, "run", job)
	victim.Store(p.cmd.Process)
	code := p.wait()
	up.setTrigger(nil)
	return p, code
}

// joinAt starts a second crawler joining run 1 when the upstream sees its
// n-th request; the returned function waits for that start and gives the
// process.
func joinAt(t *testing.T, up *upstream, n int64, db, job string) func() *process {
	var second *process
	var once sync.Once
	started := make(chan struct{})
	up.setTrigger(func(i int64) {
		if i == n {
			once.Do(func() {
				second = startCrawler(t, db, "run", "--resume", "1", job)
				close(started)
			})
		}
	})
	return func() *process {
		<-started
		return second
	}
}
