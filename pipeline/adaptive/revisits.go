package adaptive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/revisit"
)

// Config is what a process's revisits need of the runner.
type Config struct {
	Pool  *pgxpool.Pool
	Job   *jobfile.Job
	RunID int64
	Owner string // the process's lease owner prefix
	// Poll is how often, at most, the view of the other processes' visits
	// is read again (the runner's poll interval).
	Poll time.Duration
	// Retry runs a statement again while the database is away.
	Retry   func(ctx context.Context, op func(context.Context) error) error
	Credits Credits
	Log     *slog.Logger
}

// Credits are what a visit is weighed against (*budget.Hold).
type Credits interface {
	// LeftNow is the run's credits left for admitting new work (nil: the
	// run has no budget).
	LeftNow(ctx context.Context) (*int64, error)
}

// Revisits are a process's side of its run's revisits: the log of the
// visits its workers end and, for an adaptive job, the spend order.
type Revisits struct {
	cfg    Config
	order  *spendOrder // nil: not adaptive
	visits *visitLog
}

// Start prepares run cfg.RunID's revisits in this process: the run's
// visits are to be recorded (revisit_pending), the spend order (adaptive
// jobs) and the recording of ended visits.
func Start(ctx context.Context, cfg Config) (*Revisits, error) {
	r := &Revisits{cfg: cfg}
	err := cfg.Retry(ctx, func(ctx context.Context) (err error) {
		if _, err = setRevisitPending.Exec(ctx, cfg.Pool, db.RunArg{RunID: cfg.RunID}); err != nil || !cfg.Job.Reuse.Adaptive {
			return err
		}
		r.order, err = loadSpendOrder(ctx, cfg.Pool, cfg.RunID, cfg.Owner, cfg.Poll)
		return err
	})
	if err != nil {
		return nil, err
	}
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.visits = &visitLog{pool: cfg.Pool, job: cfg.Job.Name, runID: cfg.RunID, log: cfg.Log, kick: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go r.visits.loop(lctx)
	return r, nil
}

// Visit is what the schedule said of a task it lets through.
type Visit struct {
	// FullWalk: the list is walked to its end; stop_at_seen does not cut
	// it.
	FullWalk bool
	// bought counts the pages of a visit the order admitted (nil
	// otherwise), read by other workers weighing theirs.
	bought *atomic.Int64
}

// Bought counts a page the visit bought, billed once its commit lands:
// other workers weighing a visit against the budget count it from now.
func (v Visit) Bought() {
	if v.bought != nil {
		v.bought.Add(1)
	}
}

// Verdict is what the run's schedule says of a task before it is fetched.
type Verdict struct {
	// Skip: the task ends skipped with Outcome for Reason, saving Saved
	// credits, a profile expanding to its lists from stored data (when
	// they cannot be read, it is visited instead: Admit).
	Skip    bool
	Outcome kinds.Outcome
	Reason  string
	Saved   int
	// Visit is what a visit the schedule lets through needs (not Skip).
	Visit Visit
	high  float64 // the visit's cost at most
}

// Decide applies the run's schedule to t before it is fetched: a task the
// schedule skips is to end skipped with the decision's reason, a list it
// wants whole is marked so. A visit the schedule chose for its yield, or
// one it skipped for the budget or found unreached, is made if the
// credits left cover it (spendOrder); one the second look admitted, or
// one made whatever the budget (max_age), is made. Tasks of an adaptive
// run's kinds it schedules are decided, before their first page; others
// are visited. The error is the database's.
func (r *Revisits) Decide(ctx context.Context, log *slog.Logger, t *kinds.Task) (Verdict, error) {
	if r == nil || !r.cfg.Job.Reuse.Adaptive || t.Pages > 0 || !Scheduled(t.Kind) {
		return Verdict{}, nil
	}
	var (
		d           revisit.Decision
		full, again bool
		found       bool
		yield, cost float32
		high        float32
	)
	err := r.cfg.Retry(ctx, func(ctx context.Context) error {
		err := revisitDecision.QueryRow(ctx, r.cfg.Pool, revisitDecisionParams{RunID: r.cfg.RunID, Kind: t.Kind, Key: t.Key}).
			Scan(&d.Visit, &full, &d.Reason, &yield, &cost, &high, &again)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // found stays false
		}
		found = err == nil
		return err
	})
	d.Yield, d.Cost, d.CostHigh = float64(yield), float64(cost), float64(high)
	if err != nil || !found {
		return Verdict{}, err // not found: never visited, explored
	}
	reason, outcome := d.Reason, kinds.OutcomeSkippedAdaptive
	if d.Reason == revisit.ReasonBudget {
		outcome = kinds.OutcomeSkippedBudget // the schedule ran out of credits before it
	}
	var v Verdict
	switch {
	case again:
		r.order.admitted(t, d.CostHigh, &v.Visit) // the second look counted it
		v.Visit.FullWalk = full
		return v, nil
	case d.Reason == revisit.ReasonNew || d.Reason == revisit.ReasonMaxAge:
		r.order.take(t, d.CostHigh, nil, &v.Visit) // whatever the budget
		v.Visit.FullWalk = full
		return v, nil
	case d.Visit || d.Reason == revisit.ReasonBudget || d.Reason == revisit.ReasonUnreached:
		left, err := r.cfg.Credits.LeftNow(ctx)
		if err != nil {
			// max_credits still caps the spend: visit it.
			log.Warn("could not weigh a visit against the credits left; visited", "task_id", t.ID, "err", err)
		}
		fits, ahead, scheduled := r.order.take(t, d.CostHigh, left, &v.Visit)
		if !fits && scheduled {
			// Others' visits may have ended since this process last
			// looked: look again before skipping it.
			fits, ahead = r.retake(ctx, t, d.CostHigh, left, &v.Visit)
		}
		if fits || !scheduled {
			v.Visit.FullWalk = full
			return v, nil
		}
		reason = fmt.Sprintf("%s: %d credits left, %.0f kept for the visits ranked higher or under way", revisit.ReasonBudget, max(*left, 0), math.Ceil(ahead))
		outcome = kinds.OutcomeSkippedBudget
	}
	return Verdict{Skip: true, Outcome: outcome, Saved: int(math.Ceil(d.Cost)), high: d.CostHigh,
		Reason: fmt.Sprintf("adaptive: %s: expected %.2f new per %.1f credits", reason, d.Yield, d.Cost)}, nil
}

// Admit visits t after all, which v skipped (its lists cannot be found
// without a fetch): its visit counts as under way.
func (r *Revisits) Admit(t *kinds.Task, v Verdict) Visit {
	var visit Visit
	r.order.admitted(t, v.high, &visit)
	return visit
}

// Ended is the end of t's work in this process: its visit is no longer
// under way (spendOrder), and is recorded if it was one.
func (r *Revisits) Ended(t *kinds.Task) {
	if r == nil {
		return
	}
	r.order.end(t.ID)
	if Scheduled(t.Kind) {
		r.visits.add(t.ID)
	}
}

// End stops recording as visits end and records what this process
// queued; when the run ended (final is its state, not "running": no other
// process works on it; "" when it could not be recorded) it records the
// run whole and, for a job that makes no schedule, the earlier runs of the
// job left unrecorded.
func (r *Revisits) End(ctx context.Context, final string) {
	if r == nil {
		return
	}
	l := r.visits
	l.stop()
	<-l.done
	var err error
	for ids := l.take(); len(ids) > 0 && err == nil; ids = l.take() {
		err = l.record(ctx, ids)
	}
	if err == nil && final != "running" && final != "" {
		err = recordRun(ctx, func(ctx context.Context, f func(pgx.Tx) error) error { return pgx.BeginFunc(ctx, l.pool, f) }, l.job, l.runID)
		if err == nil && !r.cfg.Job.Reuse.Adaptive {
			err = pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error { return recordUnfinished(ctx, tx, l.job, l.runID) })
		}
	}
	if err != nil {
		r.cfg.Log.Warn("could not record what the run saw of the items it revisits; the job's next run will", "err", err)
	}
}
