package sim

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// crew runs a night's crawler processes on a timeline: starts them as the
// night's plan says, sends them their signals, expires the leases of those
// killed and starts them again, and records how each ended.
type crew struct {
	tl      *timeline
	ctx     context.Context // the night's: a process outliving it is killed
	up      *upstream
	job     string // the job file
	before  int64  // the runs before the night: the night's run is after
	workers int
	g       *group

	mu         sync.Mutex
	live       int   // processes running or about to start
	firstEnded bool  // the night's first process has exited
	dead       []int // pids killed with SIGKILL
	killed     int   // their workers (the tasks they held, under the default concurrency)
	exits      []exit
	err        error // the harness's first failure
}

// How a process starts: the first starts (or continues) the night's run
// with crawler run JOB; the others join it with crawler run --resume ID
// JOB once it exists, as the scale-out recipe does (a plain start racing
// the end of the run would start the next night's run tonight, as
// documented); a process started again after its signal continues (or
// joins) the night's run with --resume ID, or starts it with crawler run
// JOB when the signal came before it was created.
const (
	startFirst = iota
	startJoin
	startAgain
)

func (c *crew) args(resume int64) []string {
	args := []string{"run", "--live", "off", "--log-level", c.tl.logLevel, "--progress", "0", "--grace", "2s"}
	if resume > 0 {
		args = append(args, "--resume", strconv.FormatInt(resume, 10))
	}
	return append(args, c.job)
}

func (c *crew) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = cmp.Or(c.err, err)
}

func (c *crew) record(p *proc, code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exits = append(c.exits, exit{args: p.args, code: code, signaled: p.signalSent(), tail: p.tail(tailLines)})
}

// launch starts a process of the night, unless the night is over.
func (c *crew) launch(pl Proc, how int) {
	if !c.g.add() {
		return
	}
	c.mu.Lock()
	c.live++
	c.mu.Unlock()
	go c.start(pl, how)
}

func (c *crew) start(pl Proc, how int) {
	ended := func() {
		c.mu.Lock()
		c.live--
		c.firstEnded = c.firstEnded || how == startFirst
		c.mu.Unlock()
	}
	resume, err := c.resumeID(how)
	var p *proc
	if err == nil {
		p, err = c.tl.e.startCrawler(c.ctx, c.tl.e.dbURL(c.tl.db), c.args(resume)...)
	}
	if err != nil {
		c.fail(err)
		ended()
		c.g.done()
		return
	}
	if pl.Signal != "" {
		c.up.at(int64(pl.KillAt), func() { p.signal(pl.Signal) })
	}
	defer c.g.done()
	code := p.Wait()
	ended()
	c.record(p, code)
	// Started again only when the signal ended it: a process that had
	// finished the run when the signal came is not.
	sig := p.signalSent()
	if !(sig == "KILL" && code == -9 || sig == "TERM" && code == 3) {
		return
	}
	if sig == "KILL" {
		// What it may have bought and not committed: a page per task it
		// worked on, at most limits.workers; under the default
		// concurrency the tasks it held leased when it died (a lease it
		// took after them bought nothing).
		held := c.workers
		if held == 0 {
			n, err := c.leasedBy(p.Pid())
			if err != nil {
				c.fail(err)
				return
			}
			held = n
		}
		c.mu.Lock()
		c.killed += held
		c.dead = append(c.dead, p.Pid())
		c.mu.Unlock()
		if err := c.expire(); err != nil {
			c.fail(err)
			return
		}
	}
	c.launch(Proc{}, startAgain) // the operator (or the scheduler) starts it again
}

// resumeID is the run a process of kind how joins (0: crawler run JOB).
// A process started again continues the night's run when there is one,
// whoever ended it (crawler run JOB after another process finished it
// would start the next night's run tonight), else starts it.
func (c *crew) resumeID(how int) (int64, error) {
	for how != startFirst && c.ctx.Err() == nil {
		c.mu.Lock()
		alone, firstGone := c.live == 1, c.firstEnded
		c.mu.Unlock()
		var id int64
		err := c.tl.withConn(c.ctx, func(conn *pgx.Conn) error {
			return conn.QueryRow(c.ctx, `SELECT coalesce(max(id), 0) FROM crawl.runs WHERE id > $1`, c.before).Scan(&id)
		})
		if err != nil || id > 0 || firstGone || how == startAgain && alone {
			return id, err
		}
		time.Sleep(20 * time.Millisecond) // the first process is creating the run
	}
	return 0, nil
}

// leasedBy counts the tasks process pid holds leased.
func (c *crew) leasedBy(pid int) (int, error) {
	var n int
	err := c.tl.withConn(c.ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(c.ctx, `SELECT count(*) FROM crawl.tasks WHERE run_id > $1 AND state = 'leased'
			AND lease_owner LIKE '%:' || $2::text || ':%'`, c.before, strconv.Itoa(pid)).Scan(&n)
	})
	return n, err
}

// expire makes the leases of the processes killed lapse, as
// lease_timeout would, unless the scenario leaves that to the crawlers'
// own timing (Scenario.RealKills).
func (c *crew) expire() error {
	c.mu.Lock()
	pids := slices.Clone(c.dead)
	c.mu.Unlock()
	if len(pids) == 0 || c.tl.s.RealKills {
		return nil
	}
	return c.tl.withConn(c.ctx, func(conn *pgx.Conn) error {
		for _, pid := range pids {
			if err := expireLeases(c.ctx, conn, pid); err != nil {
				return err
			}
		}
		return nil
	})
}

// expireWhileRunning expires them again every half second until stop is
// closed: a batch a process sent before it died may still commit a lease.
func (c *crew) expireWhileRunning(stop <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if err := c.expire(); err != nil && c.ctx.Err() == nil {
				c.fail(err)
			}
		}
	}
}

// group counts a night's live processes. add refuses once the group is
// closed, which closeWhenIdle does when none is left, under the same lock:
// a trigger racing the last exit either starts its process before the
// night is over or not at all.
type group struct {
	mu      sync.Mutex
	cond    *sync.Cond
	running int
	closed  bool
}

func newGroup() *group {
	g := &group{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *group) add() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.running++
	return true
}

func (g *group) done() {
	g.mu.Lock()
	g.running--
	g.cond.Broadcast()
	g.mu.Unlock()
}

func (g *group) closeWhenIdle() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.running > 0 {
		g.cond.Wait()
	}
	g.closed = true
}
