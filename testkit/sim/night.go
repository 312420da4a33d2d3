package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	conns *conns         // the simulation's connections to db
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
	killed   int // workers of the processes killed with SIGKILL (tasks held, under the default concurrency)
	// abandoned are the credits the sandbox charged for answers their
	// client had given up on (World.BillAbandoned).
	abandoned int64
	deadHeld  int64 // what the processes killed still hold of the budget (spent)
	// cutOther counts the truncated answers the sandbox charged nothing
	// for, of endpoints the checkers do not follow (the crawler, unable
	// to read them, bills them at their price: 1).
	cutOther int64
	timedOut bool // the night did not end within NightTimeout: its processes were killed
	took     time.Duration
}

// tailLines is how much of a crawler's output a violation quotes.
var tailLines = 12

// NightTimeout bounds a night (its nights take seconds): past it, the
// night's processes are killed and the night is a liveness violation. A
// scenario of real kill timing has realKillsGrace more (the crawlers wait
// out a dead process's leases and hold).
var NightTimeout = time.Minute

const realKillsGrace = 30 * time.Second

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
	begin := time.Now()
	defer func() { res.took = time.Since(begin) }()
	outer := ctx
	timeout := NightTimeout
	if tl.s.RealKills {
		timeout += realKillsGrace
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
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
	err = tl.withConn(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM crawl.runs`).Scan(&before)
	})
	if err != nil {
		return nil, err
	}

	c := &crew{tl: tl, ctx: ctx, up: up, job: jobPath, before: before, workers: n.Workers, g: newGroup()}
	stop := make(chan struct{})
	defer close(stop) // after the night's last process
	go c.expireWhileRunning(stop)
	for i, pl := range n.Procs {
		how := startJoin
		if i == 0 {
			how = startFirst
		}
		up.at(int64(pl.StartAt), func() { c.launch(pl, how) })
	}
	c.g.closeWhenIdle()
	c.mu.Lock()
	res.exits, res.killed, err = c.exits, c.killed, c.err
	c.mu.Unlock()
	switch {
	case outer.Err() != nil:
		return nil, outer.Err()
	case ctx.Err() != nil:
		res.timedOut = true
		return res, nil
	case err != nil:
		return nil, err
	}
	// A run nobody finished (its last process was killed before it could)
	// is continued by the next start.
	for range 3 {
		var runs []runRow
		err := tl.withConn(ctx, func(conn *pgx.Conn) (err error) { runs, err = runsAfter(ctx, conn, before); return err })
		if err != nil {
			return nil, err
		}
		res.runs = runs
		if len(runs) == 0 || runs[len(runs)-1].state != "running" {
			break
		}
		p, err := tl.e.startCrawler(ctx, tl.e.dbURL(tl.db), c.args(runs[len(runs)-1].id)...)
		if err != nil {
			return nil, err
		}
		code := p.Wait()
		res.exits = append(res.exits, exit{args: p.args, code: code, tail: p.tail(tailLines)})
		if ctx.Err() != nil {
			res.timedOut = outer.Err() == nil
			return res, outer.Err()
		}
	}
	err = tl.withConn(ctx, func(conn *pgx.Conn) (err error) {
		if res.tasks, err = tasksOf(ctx, conn, res.runIDs()); err != nil {
			return err
		}
		res.deadHeld, err = heldAfter(ctx, conn, res.runIDs())
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, a := range up.sb.Arrivals(apiKey) {
		res.answered++
		res.billed += a.Credits
		if a.Abandoned {
			res.abandoned += a.Credits
		}
		if r, ok := requestOf(tl.s.World.Preset, tl.s.World.PageSize, n.Day, a); ok {
			res.requests = append(res.requests, r)
		} else if a.Truncated && a.Credits == 0 {
			res.cutOther++
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
	return exit{args: args, code: p.Wait(), tail: p.tail(8)}, nil
}
