package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/sources"
)

// ErrBudgetExhausted means max_credits are all billed (or held by
// reservations that did not settle within the wait bound): the run stops
// cleanly and can be resumed with a larger budget.
var ErrBudgetExhausted = errors.New("credit budget exhausted (raise max_credits and resume)")

// errRunStopping ends a wait for the budget when the run stops for another
// reason (a signal, another worker's error): nothing was sent.
var errRunStopping = errors.New("run stopping while waiting for the credit budget")

// budget reserves a credit in Postgres before every request that may be
// billed, so max_credits holds across workers and processes, and gives it
// back when the answer turns out free (errors, 404, the free private
// profile). It also keeps the per-endpoint accounting.
//
// A reservation belongs to the lease of the task that made it
// (crawl.tasks.credits_held): whatever a lease still holds when it ends
// (finished, released, or expired and taken over after its process died)
// goes back to the budget. So the run's committed credits are its billed
// credits plus the reservations of live leases, and only billed credits
// can end the run: a worker that finds the budget full of reservations that
// may still come back waits for them to settle.
//
// A request whose answer never arrived (a timeout, a reset after sending,
// the process killed) is taken as not billed: the sandbox charges only the
// answers it delivers, and as far as is known so does the upstream. A retry
// of the same request reuses its reservation; the reservation comes back
// when the lease ends. Should the upstream have charged such a request
// anyway, the run can overspend by the requests whose answers were lost,
// at most one per worker at a crash.
type budget struct {
	pool  *pgxpool.Pool
	runID int64
	retry func(ctx context.Context, op func(context.Context) error) error
	log   *slog.Logger
	// waitMax bounds a wait for reservations to settle.
	waitMax time.Duration
	// stopping is closed when the run stops: waits end.
	stopping <-chan struct{}

	mu      sync.Mutex
	settled chan struct{} // closed (and replaced) when credits come back
}

// leaseKey carries a *leaseCredits in the context of a task's requests.
type leaseKey struct{}

// leaseCredits is what the budget knows of one lease in this process.
// A task's requests are sequential, so it needs no lock.
type leaseCredits struct {
	task *Task
	// unsettled: the last reservation's answer never arrived; the next
	// attempt reuses it.
	unsettled bool
}

func withLease(ctx context.Context, t *Task) (context.Context, *leaseCredits) {
	lc := &leaseCredits{task: t}
	return context.WithValue(ctx, leaseKey{}, lc), lc
}

// reserveSQL takes a credit for a lease in one statement: the run's counter
// (the budget check, serialised on the run's row) and the lease's. When the
// lease is gone but the budget was taken, crawl.expect_lease aborts the
// statement, so neither write happens. On failure it says what the budget
// holds, to tell a spent budget from one full of reservations in flight.
const reserveSQL = `
WITH r AS (
    UPDATE crawl.runs SET credits_committed = credits_committed + 1
    WHERE id = $1 AND (max_credits IS NULL OR credits_committed < max_credits)
    RETURNING 1
), t AS (
    UPDATE crawl.tasks SET credits_held = credits_held + 1
    WHERE id = $2 AND lease_token = $3 AND state = 'leased' AND EXISTS (SELECT 1 FROM r)
    RETURNING 1
)
SELECT CASE WHEN (SELECT count(*) FROM r) = 0 THEN 0 ELSE crawl.expect_lease((SELECT count(*) FROM t)) END,
       x.credits_billed, x.credits_committed, x.max_credits
FROM crawl.runs x WHERE x.id = $1`

// leaseLostCode is the SQLSTATE crawl.expect_lease raises.
const leaseLostCode = "CR002"

// reserve is the client's BeforeSend hook.
func (b *budget) reserve(ctx context.Context, _ string) error {
	lc, _ := ctx.Value(leaseKey{}).(*leaseCredits)
	if lc == nil {
		return errors.New("reserve credit: request outside a lease")
	}
	if lc.unsettled {
		return nil // the retry of a request whose answer was lost reuses its credit
	}
	var deadline time.Time
	poll := 5 * time.Millisecond
	for {
		var ok int
		var billed, committed int64
		var max *int64
		err := b.retry(ctx, func(ctx context.Context) error {
			err := b.pool.QueryRow(ctx, reserveSQL, b.runID, lc.task.ID, lc.task.Token).Scan(&ok, &billed, &committed, &max)
			if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == leaseLostCode {
				return backoff.Permanent(ErrLeaseLost)
			}
			if err != nil {
				return fmt.Errorf("reserve credit: %w", err)
			}
			return nil
		})
		switch {
		case err != nil:
			return err
		case ok == 1:
			lc.unsettled = true
			return nil
		case max == nil || billed >= *max:
			return ErrBudgetExhausted
		}
		// Full of reservations that may still come back: wait for them.
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(b.waitMax)
			b.log.Debug("credit budget full of reservations in flight; waiting", "billed", billed, "held", committed-billed, "max", *max)
		} else if now.After(deadline) {
			return fmt.Errorf("%w: %d credits held by requests that did not settle within %s", ErrBudgetExhausted, committed-billed, b.waitMax)
		}
		if err := b.wait(ctx, poll); err != nil {
			return err
		}
		poll = min(2*poll, 250*time.Millisecond)
		// Reservations of leases that expired (their process died) come
		// back here too, since waiting workers hold leases and may be the
		// only ones left to notice.
		if err := b.retry(ctx, func(ctx context.Context) error { return b.reclaimExpired(ctx) }); err != nil {
			return err
		}
	}
}

// wait sleeps until credits come back in this process, d passes, the run
// stops or ctx ends.
func (b *budget) wait(ctx context.Context, d time.Duration) error {
	b.mu.Lock()
	if b.settled == nil {
		b.settled = make(chan struct{})
	}
	ch := b.settled
	b.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-b.stopping:
		return errRunStopping
	case <-ch:
	case <-t.C:
	}
	return nil
}

// gaveBack wakes the workers waiting for the budget.
func (b *budget) gaveBack() {
	b.mu.Lock()
	if b.settled != nil {
		close(b.settled)
		b.settled = nil
	}
	b.mu.Unlock()
}

// reclaimExpiredSQL gives back the reservations of the run's expired leases
// (their process died or lost the database). The task stays leased until it
// is rescued; if its owner was alive after all and its answer is billed,
// settleSQL still counts it.
const reclaimExpiredSQL = `
WITH o AS (
    SELECT id, run_id, credits_held FROM crawl.tasks
    WHERE run_id = $1 AND state = 'leased' AND lease_expires_at < now() AND credits_held > 0
    FOR UPDATE
), ended AS (
    UPDATE crawl.tasks t SET credits_held = 0 FROM o WHERE t.id = o.id
    RETURNING o.run_id, o.credits_held AS held
)` + giveBackSQL + `
SELECT coalesce(sum(held), 0) FROM ended`

// giveBackSQL is the CTE that returns the credits held by the leases in
// CTE ended (run_id, held) to their runs' budgets.
const giveBackSQL = `, given AS (
    UPDATE crawl.runs r SET credits_committed = r.credits_committed - x.held
    FROM (SELECT run_id, sum(held) AS held FROM ended GROUP BY run_id) x
    WHERE r.id = x.run_id AND x.held > 0
)`

func (b *budget) reclaimExpired(ctx context.Context) error {
	var n int64
	if err := b.pool.QueryRow(ctx, reclaimExpiredSQL, b.runID).Scan(&n); err != nil {
		return fmt.Errorf("reclaim credits of expired leases: %w", err)
	}
	if n > 0 {
		b.log.Info("credits reserved by expired leases given back", "credits", n)
		b.gaveBack()
	}
	return nil
}

// reclaimStaleSQL gives back credits held by tasks that no lease holds any
// more (a settle lost past the outage timeout), once per process and run.
const reclaimStaleSQL = `
WITH o AS (
    SELECT id, run_id, credits_held FROM crawl.tasks
    WHERE run_id = $1 AND credits_held > 0 AND state <> 'leased'
    FOR UPDATE
), ended AS (
    UPDATE crawl.tasks t SET credits_held = 0 FROM o WHERE t.id = o.id
    RETURNING o.run_id, o.credits_held AS held
)` + giveBackSQL + `
SELECT coalesce(sum(held), 0) FROM ended`

// reclaimStale runs reclaimStaleSQL.
func (b *budget) reclaimStale(ctx context.Context) error {
	var n int64
	if err := b.pool.QueryRow(ctx, reclaimStaleSQL, b.runID).Scan(&n); err != nil {
		return fmt.Errorf("reclaim credits of ended leases: %w", err)
	}
	if n > 0 {
		b.log.Info("credits held by ended leases given back", "credits", n)
	}
	return nil
}

// settleSQL settles a lease's reservation: billed, it becomes a billed
// credit; otherwise it is given back. When the lease no longer holds it
// (given back when the lease expired), a billed answer still counts.
const settleSQL = `
WITH t AS (
    UPDATE crawl.tasks SET credits_held = credits_held - 1
    WHERE id = $9 AND lease_token = $10 AND credits_held > 0
    RETURNING 1
), run AS (
    UPDATE crawl.runs SET credits_committed = credits_committed + $3 - (SELECT count(*) FROM t),
                          credits_billed = credits_billed + $3
    WHERE id = $1
)
INSERT INTO crawl.credit_usage AS u (run_id, endpoint, requests, billed, free, rate_limited, errors, credits_charged, credits_remaining)
VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $8)
ON CONFLICT (run_id, endpoint) DO UPDATE SET
    requests          = u.requests + 1,
    billed            = u.billed + EXCLUDED.billed,
    free              = u.free + EXCLUDED.free,
    rate_limited      = u.rate_limited + EXCLUDED.rate_limited,
    errors            = u.errors + EXCLUDED.errors,
    credits_charged   = u.credits_charged + EXCLUDED.credits_charged,
    credits_remaining = COALESCE(EXCLUDED.credits_remaining, u.credits_remaining)`

// settle is the client's AfterResponse hook: it gives back the reservation
// of an answer that was not billed and records the outcome.
func (b *budget) settle(ctx context.Context, o sources.Outcome) {
	lc, _ := ctx.Value(leaseKey{}).(*leaseCredits)
	if lc == nil {
		b.log.Error("credit settled outside a lease", "endpoint", o.Endpoint)
		return
	}
	lc.unsettled = false
	refund, billed, free, limited, errs := 0, 0, 0, 0, 0
	switch {
	case o.Withdrawn, o.NotSent:
		refund, errs = 1, 1
	case o.Billed:
		billed = 1
	case o.Free:
		refund, free = 1, 1
	case o.Status == 429:
		refund, limited = 1, 1
	default:
		refund, errs = 1, 1
	}
	var remaining *int64
	if o.Credits.Remaining.Valid {
		remaining = &o.Credits.Remaining.V
	}
	t := lc.task
	sql, args := settleSQL, []any{b.runID, o.Endpoint, billed, free, limited, errs, o.Credits.Charged.V, remaining, t.ID, t.Token}
	if o.Withdrawn {
		// Never sent: give the reservation back, with nothing to record.
		sql, args = withdrawSQL, []any{b.runID, t.ID, t.Token}
	}
	err := b.retry(context.WithoutCancel(ctx), func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, sql, args...)
		if err != nil && refund > 0 && !pgconn.SafeToRetry(err) {
			// It may have been applied: the lease's count makes a second
			// refund a no-op, but the usage would be counted twice; the
			// reservation comes back when the lease ends anyway.
			return backoff.Permanent(err)
		}
		return err
	})
	if err != nil {
		b.log.Error("credit accounting lost for one request", "endpoint", o.Endpoint, "status", o.Status, "err", err)
		return
	}
	if refund > 0 {
		b.gaveBack()
	}
}

// withdrawSQL gives back a reservation whose request was never sent.
const withdrawSQL = `
WITH t AS (
    UPDATE crawl.tasks SET credits_held = credits_held - 1
    WHERE id = $2 AND lease_token = $3 AND credits_held > 0
    RETURNING 1
)
UPDATE crawl.runs SET credits_committed = credits_committed - (SELECT count(*) FROM t) WHERE id = $1`

// release gives back a reservation left unsettled when the lease goes on
// (a handler that finished without the answer of its last request).
func (b *budget) release(ctx context.Context, lc *leaseCredits) {
	if !lc.unsettled {
		return
	}
	lc.unsettled = false
	t := lc.task
	err := b.retry(context.WithoutCancel(ctx), func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, withdrawSQL, b.runID, t.ID, t.Token)
		return err
	})
	if err != nil {
		b.log.Warn("could not give back a credit; it comes back when the lease ends", "task_id", t.ID, "err", err)
		return
	}
	b.gaveBack()
}

const setBudgetSQL = `UPDATE crawl.runs SET max_credits = $2 WHERE id = $1`

// SetMaxCredits sets (or with nil lifts) the credit budget of a run.
func SetMaxCredits(ctx context.Context, pool *pgxpool.Pool, runID int64, max *int64) error {
	if _, err := pool.Exec(ctx, setBudgetSQL, runID, max); err != nil {
		return fmt.Errorf("set max_credits of run %d: %w", runID, err)
	}
	return nil
}

// Credits is the credit accounting of a run.
type Credits struct {
	Max       *int64
	Committed int64
	Billed    int64
}

// LoadCredits reads the credit accounting of a run.
func LoadCredits(ctx context.Context, pool *pgxpool.Pool, runID int64) (Credits, error) {
	var c Credits
	err := pool.QueryRow(ctx, `SELECT max_credits, credits_committed, credits_billed FROM crawl.runs WHERE id = $1`, runID).
		Scan(&c.Max, &c.Committed, &c.Billed)
	if err != nil {
		return c, fmt.Errorf("credits of run %d: %w", runID, err)
	}
	return c, nil
}
