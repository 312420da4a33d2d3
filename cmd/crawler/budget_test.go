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

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// kill -9 of the real binary mid-run with max_credits N, then a resume:
// the credits the dead process held stay spent (whether its requests in
// flight were billed is unknown), so the upstream never bills more than N
// in all, the run's ledger is exact (committed = billed + the dead hold =
// N at most) and every billed page was committed once.
//
// The sandbox's latency keeps requests in flight when the process dies; a
// client that is gone is not charged for them, like the answers the
// crawler takes as unbilled. The process is killed once every answer the
// sandbox billed has been posted in the database and no other is on its
// way (requests arriving meanwhile are held until the process is dead, and
// then find no client), so that the run's billed count is exact too.
func TestKill9BudgetThenResumeSpendsExactlyMax(t *testing.T) {
	t.Parallel()
	// The job needs cleanPages (19).
	kill9Budget(t, kill9Case{budget: 10, workers: 3, latency: 150 * time.Millisecond, killAt: 6,
		seeds: "[big_f400_g120, mid_f100_g50, small_f3_g3]", minHeld: 1})
}

// The same far from the budget: the dead process held a block of spare
// credits besides its requests in flight; they stay spent too, and the
// resumed run still never makes the upstream bill more than max_credits.
func TestKill9WithBlockReservationsThenResumeSpendsExactlyMax(t *testing.T) {
	t.Parallel()
	kill9Budget(t, kill9Case{budget: 200, workers: 2, latency: 5 * time.Millisecond, killAt: 40,
		seeds: "[huge_f6000_g0, vast_f6000_g0]", maxPages: 200, minHeld: 3})
}

// ageDeadHolds ages the beat of every credit hold, all a killed process's,
// to holdLive short of holdDead (pipeline/budget, 15 s): a process that
// comes next still finds the hold live and waits for it to die, as after
// a kill, but a few seconds instead of 15 (virtual time: nothing but the
// beat's age tells a dead process's hold).
func ageDeadHolds(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), `UPDATE crawl.credit_holds SET beat_at = least(beat_at, now() - make_interval(secs => $1))`,
		(holdDead - holdLive).Seconds()); err != nil {
		t.Fatal(err)
	}
}

// holdDead is pipeline/budget's: how old a hold's beat may be before other
// processes count it as spent; holdLive what ageDeadHolds leaves of it.
const (
	holdDead = 15 * time.Second
	holdLive = 3 * time.Second
)

type kill9Case struct {
	budget, workers, killAt int
	latency                 time.Duration
	seeds                   string
	maxPages                int
	// minHeld is the least the dead process must hold for the test to
	// exercise what it is about.
	minHeld int64
}

func kill9Budget(t *testing.T, c kill9Case) {
	budget := int64(c.budget)
	up := newUpstreamWith(t, sandbox.Config{Faults: sandbox.Faults{Latency: c.latency}})
	db := pgtest.DB(t)
	pages := ""
	if c.maxPages > 0 {
		pages = fmt.Sprintf(", max_pages: %d", c.maxPages)
	}
	job := writeJob(t, fmt.Sprintf(`name: crash-budget
api: {base_url: %s, max_retries: 2, timeout: 2s}
limits: {workers: %d, lease_timeout: 2s, max_credits: %d%s}
seeds:
  shortvideo:
    profiles: %s
`, up.url, c.workers, budget, pages, c.seeds))
	conn := testConn(t, db)
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
		if n < int64(c.killAt) {
			return
		}
		once.Do(func() {
			defer close(dead)
			deadline := time.Now().Add(20 * time.Second)
			for {
				connMu.Lock()
				// No answer on its way that the database has not seen.
				settled := up.serving.Load() == 0 && billed() == up.sb.Usage(cliKey).Billable
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
	err := conn.QueryRow(context.Background(), `SELECT credits_committed - credits_billed FROM crawl.runs`).Scan(&held)
	connMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed after %d billable requests, %d credits held by the dead process", before, held)
	if held < c.minHeld {
		t.Fatalf("the dead process held %d credits, want at least %d: the test did not exercise their return", held, c.minHeld)
	}
	connMu.Lock()
	ageDeadHolds(t, conn)
	connMu.Unlock()

	r := startCrawler(t, db, "run", "--resume", "1", job)
	if code := r.wait(); code != exitSpent {
		t.Fatalf("resume exit %d, want %d (budget spent): %s", code, exitSpent, r.stderr.String())
	}
	if b := up.sb.Usage(cliKey).Billable; b > budget {
		t.Errorf("billable in all = %d, want at most max_credits %d", b, budget)
	}
	connMu.Lock()
	defer connMu.Unlock()
	var committed, got, holds int64
	if err := conn.QueryRow(context.Background(), `SELECT credits_committed, credits_billed, (SELECT coalesce(sum(held), 0) FROM crawl.credit_holds) FROM crawl.runs`).Scan(&committed, &got, &holds); err != nil {
		t.Fatal(err)
	}
	t.Logf("resumed: billed %d in all, the run billed %d, committed %d, the dead hold %d", up.sb.Usage(cliKey).Billable, got, committed, holds)
	if committed > budget || committed != got+holds || holds != held {
		t.Errorf("run billed %d, committed %d, holds %d; want committed = billed + the dead process's hold %d, at most %d", got, committed, holds, held, budget)
	}
	// The run's count is the upstream's but for answers billed while the
	// process was being killed (after the settled check, before the
	// signal landed), at most one per worker: the dead hold covers them.
	if b := up.sb.Usage(cliKey).Billable; got > b || b > got+int64(c.workers) {
		t.Errorf("run billed %d, the upstream %d", got, b)
	}
	// No page was committed without being bought.
	var committedPages int64
	if err := conn.QueryRow(context.Background(), `SELECT sum(pages) FROM crawl.tasks`).Scan(&committedPages); err != nil {
		t.Fatal(err)
	}
	if committedPages > up.sb.Usage(cliKey).Billable {
		t.Errorf("pages committed = %d of %d billed", committedPages, up.sb.Usage(cliKey).Billable)
	}
}
