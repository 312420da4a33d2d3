package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/testkit/childproc"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// The same `crawler run JOB` after kill -9 (at several points) or SIGTERM
// continues the interrupted run: the database equals a clean run's (one
// run, done), and at most the requests in flight are bought again.
func TestRerunAfterKill(t *testing.T) {
	t.Parallel()
	want := clean(t)
	type stop struct {
		name string
		at   int64
		sig  syscall.Signal
		code int
	}
	for _, s := range []stop{
		{"kill9_at_request_2", 2, syscall.SIGKILL, -int(syscall.SIGKILL)},
		{"kill9_at_request_9", 9, syscall.SIGKILL, -int(syscall.SIGKILL)},
		{"kill9_at_request_17", 17, syscall.SIGKILL, -int(syscall.SIGKILL)},
		{"sigterm_at_request_6", 6, syscall.SIGTERM, exitStopped},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t)
			db := pgtest.DB(t)
			job := crashJobLease(t, up.url, "3s")
			p, code := runSignalledAt(t, up, db, job, s.at, s.sig)
			if code != s.code {
				t.Fatalf("first run exit %d, want %d: %s", code, s.code, p.stderr.String())
			}
			r := startCrawler(t, db, "run", job) // the same command
			if code := r.wait(); code != 0 {
				t.Fatalf("rerun exit %d: %s", code, r.stderr.String())
			}
			if !strings.Contains(r.stdout.String(), "run 1: job \"crash-test\" ") {
				t.Errorf("rerun did not work on run 1: %s", r.stdout.String())
			}
			if got := content(t, db); got != want {
				t.Errorf("content after %s + rerun differs from a clean run:\n%s", s.name, diffLines(want, got))
			}
			extra := up.sb.Usage(cliKey).Billable - cleanPages
			t.Logf("%s: %d extra billable requests; rerun said %q", s.name, extra, strings.TrimSpace(r.stdout.String()))
			if extra < 0 || extra > crashWorkers {
				t.Errorf("extra billable = %d, want 0..%d", extra, crashWorkers)
			}
		})
	}
}

// Two overlapping `crawler run JOB`, started together or the second while
// the first works: one run in crawl.runs, which the second joins; no page
// bought twice.
func TestOverlappingRunsShareOneRun(t *testing.T) {
	t.Parallel()
	want := clean(t)
	for _, at := range []int64{0, 3} {
		t.Run(fmt.Sprintf("second_at_request_%d", at), func(t *testing.T) {
			t.Parallel()
			overlap(t, want, at)
		})
	}
}

func overlap(t *testing.T, want string, at int64) {
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := crashJob(t, up.url)
	// Request at (1 when both start together) waits until both
	// processes have chosen their run, so the first's run is surely in progress
	// then: without the wait the first may finish 19 pages before the
	// second has started, and the second rightly starts a new run.
	outA := &watchWriter{want: "started", seen: make(chan struct{})}
	outB := &watchWriter{want: "started", seen: make(chan struct{})}
	var b *process
	started := make(chan struct{})
	var once sync.Once
	up.setTrigger(func(n int64) {
		if n != max(at, 1) {
			return
		}
		once.Do(func() {
			if at > 0 {
				b = startCrawlerOut(t, db, outB, "run", job)
				close(started)
			}
			deadline := time.After(time.Minute)
			for _, w := range []*watchWriter{outA, outB} {
				select {
				case <-w.seen:
				case <-deadline:
					t.Error("the processes did not choose their run within a minute")
				}
			}
		})
	})
	a := startCrawlerOut(t, db, outA, "run", job)
	if at == 0 {
		b = startCrawlerOut(t, db, outB, "run", job)
		close(started)
	}
	ca := a.wait()
	<-started
	cb := b.wait()
	if ca != 0 || cb != 0 {
		t.Fatalf("exit codes %d, %d:\n%s\n%s", ca, cb, a.stderr.String(), b.stderr.String())
	}
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	var runs int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM crawl.runs`).Scan(&runs); err != nil || runs != 1 {
		t.Errorf("%d runs (%v), want 1", runs, err)
	}
	if bill := up.sb.Usage(cliKey).Billable; bill != cleanPages {
		t.Errorf("billable = %d, want %d", bill, cleanPages)
	}
	if d := up.duplicates(); len(d) != 0 {
		t.Errorf("pages bought twice: %v", d)
	}
	if got := contentOn(t, conn); got != want {
		t.Errorf("content differs from a clean run:\n%s", diffLines(want, got))
	}
	t.Logf("a: %s\nb: %s", strings.TrimSpace(outA.String()), strings.TrimSpace(outB.String()))
}

// A run that finished is not continued: the same command starts a new run
// (tomorrow's harvest) and buys the job again.
func TestRerunAfterDoneIsNewRun(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := crashJob(t, up.url)
	for i := 1; i <= 2; i++ {
		p := startCrawler(t, db, "run", job)
		if code := p.wait(); code != 0 {
			t.Fatalf("run %d exit %d: %s", i, code, p.stderr.String())
		}
		if want := fmt.Sprintf("run %d: job \"crash-test\" started", i); !strings.Contains(p.stdout.String(), want) {
			t.Errorf("start %d: no %q in %q", i, want, p.stdout.String())
		}
	}
	if n := countRuns(t, db); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
	if bill := up.sb.Usage(cliKey).Billable; bill != 2*cleanPages {
		t.Errorf("billable = %d, want %d", bill, 2*cleanPages)
	}
}

// --new-run starts a fresh run over an interrupted one, which is marked
// abandoned; --new-run with --resume is refused.
func TestNewRunFlag(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	job := crashJob(t, up.url)
	p, code := runSignalledAt(t, up, db, job, 4, syscall.SIGTERM)
	if code != exitStopped {
		t.Fatalf("exit %d, want %d: %s", code, exitStopped, p.stderr.String())
	}
	r := startCrawler(t, db, "run", "--new-run", job)
	if code := r.wait(); code != 0 {
		t.Fatalf("--new-run exit %d: %s", code, r.stderr.String())
	}
	if !strings.Contains(r.stdout.String(), "run 1: abandoned: superseded by run 2 (--new-run)") {
		t.Errorf("stdout %q", r.stdout.String())
	}
	var states string
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `SELECT string_agg(state, ',' ORDER BY id) FROM crawl.runs`).Scan(&states); err != nil {
		t.Fatal(err)
	}
	if states != "abandoned,done" {
		t.Errorf("run states %s, want abandoned,done", states)
	}
	res := invoke(t, map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}, "run", "--new-run", "--resume", "1", job)
	if res.code != exitUsage || !strings.Contains(res.stderr, "exclude each other") {
		t.Errorf("--new-run --resume: exit %d %q", res.code, res.stderr)
	}
}

func countRuns(t *testing.T, db string) int {
	t.Helper()
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM crawl.runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// watchWriter is a process's stdout that closes seen once want was written.
type watchWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startCrawlerOut is startCrawler with stdout going to out (p.stdout stays
// empty).
func startCrawlerOut(t *testing.T, dbURL string, out io.Writer, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(childproc.Crawler(t), args...)}
	p.cmd.Env = []string{"DATABASE_URL=" + dbURL, "CRAWLER_API_KEY=" + cliKey, "PATH=" + os.Getenv("PATH")}
	p.cmd.Stdout, p.cmd.Stderr = out, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}
