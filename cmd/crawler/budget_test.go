package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/pgtest"
	"github.com/socialcrawl/crawler/internal/sandbox"
)

// kill -9 of the real binary mid-run with max_credits N, then a resume:
// the reservations the dead process held come back once its leases expire,
// so the run buys exactly N pages in all (the sandbox's billable counter)
// although the job needs more.
//
// The sandbox's latency keeps requests in flight when the process dies; a
// client that is gone is not charged for them, like the answers the
// crawler takes as unbilled. To make the count exact whatever the timing,
// the process is killed only once every answer the sandbox billed has been
// settled in the database (requests arriving meanwhile are held until the
// process is dead, and then find no client).
func TestKill9BudgetThenResumeSpendsExactlyMax(t *testing.T) {
	t.Parallel()
	const budget = 10 // the job needs cleanPages (19)
	up := newUpstreamWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: 150 * time.Millisecond}})
	db := pgtest.DB(t)
	job := writeJob(t, fmt.Sprintf(`name: crash-budget
api: {base_url: %s, max_retries: 2, timeout: 2s}
limits: {workers: 3, lease_timeout: 2s, max_credits: %d}
seeds:
  shortvideo:
    profiles: [big_f400_g120, mid_f100_g50, small_f3_g3]
`, up.url, budget))
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	billed := func() int64 {
		var n int64
		if err := conn.QueryRow(context.Background(), `SELECT coalesce(max(credits_billed), 0) FROM crawl.runs`).Scan(&n); err != nil {
			t.Error(err)
		}
		return n
	}

	var victim atomic.Pointer[os.Process]
	dead := make(chan struct{})
	var once sync.Once
	var connMu sync.Mutex
	up.setTrigger(func(n int64) {
		if n < 6 {
			return
		}
		once.Do(func() {
			defer close(dead)
			deadline := time.Now().Add(20 * time.Second)
			for {
				connMu.Lock()
				settled := billed() == up.sb.Usage(cliKey).Billable
				connMu.Unlock()
				if settled || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond) // polling another process's progress
			}
			_ = victim.Load().Signal(syscall.SIGKILL)
		})
		<-dead
	})
	p := startCrawler(t, db, "run", job)
	victim.Store(p.cmd.Process)
	if code := p.wait(); code != -int(syscall.SIGKILL) {
		t.Fatalf("first run exit %d, want SIGKILL: %s", code, p.stderr.String())
	}
	up.setTrigger(nil)
	before := up.sb.Usage(cliKey).Billable
	var held int64
	connMu.Lock()
	err = conn.QueryRow(context.Background(), `SELECT credits_committed - credits_billed FROM crawl.runs`).Scan(&held)
	connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed after %d billable requests, %d credits held by the dead process", before, held)
	if held == 0 {
		t.Fatal("the dead process held no reservation: the test did not exercise their return")
	}

	r := startCrawler(t, db, "run", "--resume", "1", job)
	if code := r.wait(); code != exitStopped {
		t.Fatalf("resume exit %d, want %d (budget spent): %s", code, exitStopped, r.stderr.String())
	}
	// The run's own ledger is exact (below). The upstream's count can be
	// higher by the answers it billed while the process was being killed
	// (after the settled check, before the signal landed): the crawler
	// never learnt of them, and the README bounds them by one per worker.
	if b := up.sb.Usage(cliKey).Billable; b < budget || b > budget+3 {
		t.Errorf("billable in all = %d, want max_credits %d (+ at most one per worker billed during the kill)", b, budget)
	}
	connMu.Lock()
	defer connMu.Unlock()
	var committed, got int64
	if err := conn.QueryRow(context.Background(), `SELECT credits_committed, credits_billed FROM crawl.runs`).Scan(&committed, &got); err != nil {
		t.Fatal(err)
	}
	if got != budget || committed != budget {
		t.Errorf("run billed %d, committed %d; want both %d", got, committed, budget)
	}
	// Every billed page was committed once: none was bought twice.
	var pages int64
	if err := conn.QueryRow(context.Background(), `SELECT sum(pages) FROM crawl.tasks`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != budget {
		t.Errorf("pages committed = %d, want %d", pages, budget)
	}
}
