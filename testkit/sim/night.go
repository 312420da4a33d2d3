package sim

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// timeline is a database and the nights run on it: the scenario's main
// timeline, or a twin forked from it for one night.
type timeline struct {
	e     *Env
	s     *Scenario
	name  string // "main" or "twin"
	db    string
	cache *sandbox.Cache // the real preset's answer cache across nights
	dir   string
	// logLevel is the crawlers' --log-level.
	logLevel string
}

// nightResult is what a night did, as the checkers read it.
type nightResult struct {
	day      int64
	timeline string
	workers  int
	requests []request // the answers of the endpoints the checkers follow
	billed   int64     // credits the sandbox charged tonight, every endpoint
	answered int       // requests the sandbox answered
	runs     []runRow  // the runs worked tonight, as they ended
	tasks    []taskRow // their tasks
	exits    []exit
	killed   int  // workers of the processes killed with SIGKILL
	timedOut bool // the night did not end within NightTimeout: its processes were killed
}

// tailLines is how much of a crawler's output a violation quotes.
var tailLines = 12

// NightTimeout bounds a night (its nights take seconds): past it, the
// night's processes are killed and the night is a liveness violation.
var NightTimeout = time.Minute

// exit is how a crawler process ended.
type exit struct {
	args     []string
	code     int
	signaled string // the signal the simulation sent, if any
	tail     string // its last lines of output
}

// runNight runs one night of the timeline: a sandbox at the night's day,
// the job file, the processes (starts, signals and restarts as planned),
// until the night's run has ended.
func (tl *timeline) runNight(ctx context.Context, n Night) (*nightResult, error) {
	res := &nightResult{day: n.Day, timeline: tl.name, workers: n.Workers}
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, NightTimeout)
	defer cancel()
	up, err := startUpstream(sandboxConfig(tl.s, n.Day, tl.cache))
	if err != nil {
		return nil, err
	}
	defer up.close()
	dir := filepath.Join(tl.dir, fmt.Sprintf("%s-night%d", tl.name, n.Day))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	jobPath, err := writeJob(dir, tl.s, up.url, n.Workers)
	if err != nil {
		return nil, err
	}
	var before int64
	err = tl.withConn(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM crawl.runs`).Scan(&before)
	})
	if err != nil {
		return nil, err
	}

	g := newGroup()
	var mu sync.Mutex
	record := func(p *proc) {
		mu.Lock()
		defer mu.Unlock()
		res.exits = append(res.exits, exit{args: p.args, code: p.wait(), signaled: p.signalSent(), tail: p.tail(tailLines)})
	}
	runArgs := func(resume int64) []string {
		args := []string{"run", "--live", "off", "--log-level", tl.logLevel, "--progress", "0", "--grace", "2s"}
		if resume > 0 {
			args = append(args, "--resume", strconv.FormatInt(resume, 10))
		}
		return append(args, jobPath)
	}
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		firstErr = cmp.Or(firstErr, err)
	}
	// The leases of the processes killed lapse, as lease_timeout would
	// make them; again and again while the night goes on, since a batch a
	// process sent before it died may still commit a lease.
	var dead []int
	expire := func() error {
		mu.Lock()
		pids := slices.Clone(dead)
		mu.Unlock()
		if len(pids) == 0 {
			return nil
		}
		return tl.withConn(ctx, func(c *pgx.Conn) error {
			for _, pid := range pids {
				if err := expireLeases(ctx, c, pid); err != nil {
					return err
				}
			}
			return nil
		})
	}
	stopExpiring := make(chan struct{})
	defer close(stopExpiring) // after the night's last process
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopExpiring:
				return
			case <-t.C:
				if err := expire(); err != nil && ctx.Err() == nil {
					fail(err)
				}
			}
		}
	}()
	var start func(pl Proc, first bool)
	start = func(pl Proc, first bool) {
		// The first process starts the night's run; the others join it
		// (crawler run --resume ID, as the scale-out recipe does and as
		// the crawler's exit message says), so that a process starting
		// after the run ended does not start tomorrow's run tonight.
		var resume int64
		if !first {
			err := tl.withConn(ctx, func(c *pgx.Conn) error {
				return c.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM crawl.runs WHERE id > $1`, before).Scan(&resume)
			})
			if err != nil {
				fail(err)
				g.done()
				return
			}
		}
		p, err := tl.e.startCrawler(ctx, tl.e.dbURL(tl.db), runArgs(resume)...)
		if err != nil {
			fail(err)
			g.done()
			return
		}
		if pl.Signal != "" {
			up.at(int64(pl.KillAt), func() { p.signal(pl.Signal) })
		}
		go func() {
			defer g.done()
			code := p.wait()
			record(p)
			// Restarted only when the signal ended it: a process that had
			// finished the run when the signal came is not.
			sig := p.signalSent()
			if !(sig == "KILL" && code == -9 || sig == "TERM" && code == 3) {
				return
			}
			if sig == "KILL" {
				mu.Lock()
				res.killed += n.Workers
				dead = append(dead, p.cmd.Process.Pid)
				mu.Unlock()
				if err := expire(); err != nil {
					fail(err)
					return
				}
			}
			// The operator (or the scheduler) starts it again.
			if g.add() {
				start(Proc{}, false)
			}
		}()
	}
	for i, pl := range n.Procs {
		up.at(int64(pl.StartAt), func() {
			if g.add() {
				go start(pl, i == 0)
			}
		})
	}
	g.closeWhenIdle()
	if outer.Err() != nil {
		return nil, outer.Err()
	}
	if ctx.Err() != nil {
		res.timedOut = true
		return res, nil
	}
	if firstErr != nil {
		return nil, firstErr
	}
	// A run nobody finished (its last process was killed before it could)
	// is continued by the next start.
	for range 3 {
		var runs []runRow
		err := tl.withConn(ctx, func(c *pgx.Conn) (err error) { runs, err = runsAfter(ctx, c, before); return err })
		if err != nil {
			return nil, err
		}
		res.runs = runs
		if len(runs) == 0 || runs[len(runs)-1].state != "running" {
			break
		}
		p, err := tl.e.startCrawler(ctx, tl.e.dbURL(tl.db), runArgs(runs[len(runs)-1].id)...)
		if err != nil {
			return nil, err
		}
		p.wait()
		record(p)
		if ctx.Err() != nil {
			res.timedOut = outer.Err() == nil
			return res, outer.Err()
		}
	}
	err = tl.withConn(ctx, func(c *pgx.Conn) error {
		ids := make([]int64, len(res.runs))
		for i, r := range res.runs {
			ids[i] = r.id
		}
		res.tasks, err = tasksOf(ctx, c, ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, a := range up.sb.Arrivals(apiKey) {
		res.answered++
		res.billed += a.Credits
		if r, ok := requestOf(tl.s.World.Preset, tl.s.World.PageSize, n.Day, a); ok {
			res.requests = append(res.requests, r)
		}
	}
	return res, nil
}

// runIDs are the night's runs.
func (r *nightResult) runIDs() []int64 {
	ids := make([]int64, len(r.runs))
	for i, x := range r.runs {
		ids[i] = x.id
	}
	return ids
}

// prune runs crawler prune on the timeline's database.
func (tl *timeline) prune(ctx context.Context, pr *Prune) (exit, error) {
	args := []string{"prune", "--keep-runs", strconv.Itoa(pr.KeepRuns)}
	if pr.Snapshots {
		args = append(args, "--snapshots")
	}
	p, err := tl.e.startCrawler(ctx, tl.e.dbURL(tl.db), args...)
	if err != nil {
		return exit{}, err
	}
	return exit{args: args, code: p.wait(), tail: p.tail(8)}, nil
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
