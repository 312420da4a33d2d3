package sim

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Options of Run.
type Options struct {
	// Log receives the scenario and a line per night; nil: nothing.
	Log io.Writer
	// CrawlerLog is the crawlers' --log-level (default warn); their last
	// lines are in the violations of exits and liveness.
	CrawlerLog string
	// Keep keeps the main timeline's database after the seed (its name is
	// logged), to look into.
	Keep bool
}

// Result is what a seed's simulation found.
type Result struct {
	Scenario   *Scenario
	Violations []Violation
	// Answered counts the requests the sandboxes answered, twins included.
	Answered int
	Elapsed  time.Duration
	// Twins counts the twin nights by kind (TwinTiming, TwinPrune);
	// Compared those whose tasks and purchases were compared, their
	// outcome not hanging on timing (a prune twin's schedule always is).
	Twins, Compared map[string]int
	// Abandoned are the credits charged for answers their client gave up
	// on (World.BillAbandoned); OverByAbandoned the nights they took over
	// max_credits (the bound docs/budget.md gives).
	Abandoned       int64
	OverByAbandoned int
	// Estimated are the done adaptive nights that left credits unspent only
	// because a skipped visit's cost at most did not fit (by design),
	// EstimatedLeft the credits they left.
	Estimated     int
	EstimatedLeft int64
}

// Replay is the command that runs seed again under profile, verbosely.
func Replay(seed int64, profile string) string {
	return fmt.Sprintf("go run ./tools/simulate -profile %s -seed %d -v", profile, seed)
}

// Run simulates seed under profile p: its database (a copy of the
// migrated template), then every night in order, each checked when it
// ends. An error is the harness's own failure (the server went away, a
// file could not be written); what the crawler got wrong is in
// Result.Violations.
func (e *Env) Run(ctx context.Context, seed int64, p Profile, opts Options) (*Result, error) {
	begin := time.Now()
	s, err := Generate(seed, p)
	if err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	logf("%s", strings.TrimRight(s.String(), "\n"))
	res := &Result{Scenario: s}
	chk := newChecker(s)
	dir := filepath.Join(e.dir, fmt.Sprintf("seed%d-%s", seed, randomHex()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := e.freshDB(ctx, fmt.Sprint(seed))
	if err != nil {
		return nil, err
	}
	if opts.Keep {
		logf("database %s kept", db)
	} else {
		defer e.release(context.WithoutCancel(ctx), db)
	}
	defer func() {
		res.Twins, res.Compared = chk.twins, chk.compared
		res.Abandoned, res.OverByAbandoned = chk.abandoned, chk.overBy
		res.Estimated, res.EstimatedLeft = chk.estimated, chk.estimatedLeft
	}()
	main := &timeline{e: e, s: s, name: "main", db: db, conns: &conns{url: e.dbURL(db)}, cache: sandbox.NewCache(), dir: dir, logLevel: cmp.Or(opts.CrawlerLog, "warn")}
	defer main.conns.close() // before the drop
	for _, n := range s.Nights {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		vs, answered, err := main.night(ctx, chk, n, logf)
		res.Violations = append(res.Violations, vs...)
		res.Answered += answered
		if err != nil {
			return res, fmt.Errorf("night %d: %w", n.Day, err)
		}
		if slices.ContainsFunc(vs, func(v Violation) bool { return v.Invariant == InvLiveness }) {
			break // the night's state is whatever the killed processes left
		}
	}
	res.Elapsed = time.Since(begin)
	return res, nil
}

// night runs night n on the main timeline and its twin, if any, and
// checks both.
func (tl *timeline) night(ctx context.Context, chk *checker, n Night, logf func(string, ...any)) ([]Violation, int, error) {
	var out []Violation
	if n.Day > 0 {
		if err := tl.withConn(ctx, func(c *pgx.Conn) error { return AgeDB(ctx, c) }); err != nil {
			return nil, 0, err
		}
	}
	var twin *timeline
	fork := func() (err error) { twin, err = tl.fork(ctx); return err }
	if n.Twin == TwinPrune {
		if err := fork(); err != nil {
			return nil, 0, err
		}
	}
	if twin != nil {
		defer twin.drop(ctx)
	}
	if n.Prune != nil {
		ex, err := tl.prune(ctx, n.Prune)
		if err != nil {
			return nil, 0, err
		}
		if ex.code != 0 {
			out = append(out, Violation{Night: n.Day, Timeline: tl.name, Invariant: InvExit,
				Detail: fmt.Sprintf("crawler %s exited %d: %s", strings.Join(ex.args, " "), ex.code, ex.tail)})
		}
	}
	if n.Twin == TwinTiming {
		if err := fork(); err != nil {
			return nil, 0, err
		}
		defer twin.drop(ctx)
	}
	started := time.Now()
	r, err := tl.runNight(ctx, n)
	if err != nil {
		return out, 0, err
	}
	answered := r.answered
	vs, err := chk.night(ctx, tl, r)
	if err != nil {
		return out, answered, err
	}
	out = append(out, vs...)
	logf("night %d: %s", n.Day, r.summary(chk.s, len(vs)))
	if twin == nil || r.timedOut {
		return out, answered, nil
	}
	// The twin starts later than its night by the night's length: its
	// database is made older by as much, so that its schedule reads the
	// ages its night read (ages are the database clock's: a yield per
	// credit moves with them, and two visits near the budget line that
	// cross in those seconds swapped between a night and its prune twin,
	// seed 333).
	if err := twin.withConn(ctx, func(c *pgx.Conn) error { return ageDBBy(ctx, c, time.Since(started)) }); err != nil {
		return out, answered, fmt.Errorf("twin: %w", err)
	}
	tn := Night{Day: n.Day, Workers: 1, Procs: []Proc{{}}}
	tr, err := twin.runNight(ctx, tn)
	if err != nil {
		return out, answered, fmt.Errorf("twin: %w", err)
	}
	answered += tr.answered
	vs, err = chk.night(ctx, twin, tr)
	if err != nil {
		return out, answered, err
	}
	out = append(out, vs...)
	if tr.timedOut {
		return out, answered, nil
	}
	var plans [2][]string
	for i, x := range []struct {
		tl *timeline
		r  *nightResult
	}{{tl, r}, {twin, tr}} {
		err := x.tl.withConn(ctx, func(c *pgx.Conn) (err error) { plans[i], err = planOf(ctx, c, x.r.runIDs()); return err })
		if err != nil {
			return out, answered, err
		}
	}
	tvs := chk.twin(n.Twin, r, tr, plans[0], plans[1])
	out = append(out, tvs...)
	logf("night %d twin (%s): %s", n.Day, n.Twin, tr.summary(chk.s, len(vs)+len(tvs)))
	return out, answered, nil
}

// fork copies the timeline's database and answer cache: the same night
// can then be run twice from the same state.
func (tl *timeline) fork(ctx context.Context) (*timeline, error) {
	tl.conns.close()
	db, err := tl.e.cloneDB(ctx, "twin", tl.db)
	if err != nil {
		return nil, err
	}
	t := *tl
	t.name, t.db, t.conns, t.cache = "twin", db, &conns{url: tl.e.dbURL(db)}, tl.cache.Clone()
	return &t, nil
}

// drop closes a twin's connections and drops its database.
func (tl *timeline) drop(ctx context.Context) {
	tl.conns.close()
	_ = tl.e.dropDB(context.WithoutCancel(ctx), tl.db)
}

// summary is a night in one line.
func (r *nightResult) summary(s *Scenario, violations int) string {
	var runs []string
	for _, x := range r.runs {
		st := fmt.Sprintf("run %d %s", x.id, x.state)
		if x.reason != "" {
			st += fmt.Sprintf(" (%.60s)", x.reason)
		}
		runs = append(runs, st)
	}
	budget := "no budget"
	if s.Job.Budget > 0 {
		budget = fmt.Sprintf("budget %d", s.Job.Budget)
	}
	if r.abandoned > 0 {
		budget += fmt.Sprintf(", %d for answers abandoned", r.abandoned)
	}
	return fmt.Sprintf("%d answers, %d credits charged (%s), %d tasks, %s; %s; %d violations (%.1fs)",
		r.answered, r.billed, budget, len(r.tasks), strings.Join(runs, ", "), r.describe(), violations, r.took.Seconds())
}
