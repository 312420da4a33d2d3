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

	"github.com/socialcrawl/crawler/internal/db"

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

// Parameters of the budget's statements (internal/db/queries/budget.sql).
type (
	// creditArg names the lease a credit is reserved for.
	creditArg struct {
		RunID  int64 `db:"run_id"`
		TaskID int64 `db:"task_id"`
		Token  int64 `db:"token"`
	}
	settleParams struct {
		RunID            int64  `db:"run_id"`
		TaskID           int64  `db:"task_id"`
		Token            int64  `db:"token"`
		Endpoint         string `db:"endpoint"`
		Billed           int    `db:"billed"`
		Free             int    `db:"free"`
		RateLimited      int    `db:"rate_limited"`
		Errors           int    `db:"errors"`
		CreditsCharged   int64  `db:"credits_charged"`
		CreditsRemaining *int64 `db:"credits_remaining"`
	}
	maxCreditsParams struct {
		RunID      int64  `db:"run_id"`
		MaxCredits *int64 `db:"max_credits"`
	}
)

var (
	reserveCredit         = db.Prepare[creditArg]("ReserveCredit")
	reclaimExpiredCredits = db.Prepare[runArg]("ReclaimExpiredCredits")
	reclaimStaleCredits   = db.Prepare[runArg]("ReclaimStaleCredits")
	settleCredit          = db.Prepare[settleParams]("SettleCredit")
	withdrawCredit        = db.Prepare[creditArg]("WithdrawCredit")
	setMaxCredits         = db.Prepare[maxCreditsParams]("SetMaxCredits")
	loadCredits           = db.Prepare[runArg]("LoadCredits")
)

// leaseLostCode is the SQLSTATE crawl.expect_lease raises when
// ReserveCredit took the budget for a lease that is gone.
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
			err := reserveCredit.QueryRow(ctx, b.pool, creditArg{RunID: b.runID, TaskID: lc.task.ID, Token: lc.task.Token}).Scan(&ok, &billed, &committed, &max)
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

// reclaimExpired gives back the reservations of the run's expired leases
// (ReclaimExpiredCredits) and wakes the workers waiting for the budget.
func (b *budget) reclaimExpired(ctx context.Context) error {
	var n int64
	if err := reclaimExpiredCredits.QueryRow(ctx, b.pool, runArg{b.runID}).Scan(&n); err != nil {
		return fmt.Errorf("reclaim credits of expired leases: %w", err)
	}
	if n > 0 {
		b.log.Info("credits reserved by expired leases given back", "credits", n)
		b.gaveBack()
	}
	return nil
}

// reclaimStale gives back credits held by tasks that no lease holds any
// more (a settle lost past the outage timeout), once per process and run.
func (b *budget) reclaimStale(ctx context.Context) error {
	var n int64
	if err := reclaimStaleCredits.QueryRow(ctx, b.pool, runArg{b.runID}).Scan(&n); err != nil {
		return fmt.Errorf("reclaim credits of ended leases: %w", err)
	}
	if n > 0 {
		b.log.Info("credits held by ended leases given back", "credits", n)
	}
	return nil
}

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
	sql, args := settleCredit.SQL(), settleCredit.Args(settleParams{RunID: b.runID, TaskID: t.ID, Token: t.Token,
		Endpoint: o.Endpoint, Billed: billed, Free: free, RateLimited: limited, Errors: errs,
		CreditsCharged: o.Credits.Charged.V, CreditsRemaining: remaining})
	if o.Withdrawn {
		// Never sent: give the reservation back, with nothing to record.
		sql, args = withdrawCredit.SQL(), withdrawCredit.Args(creditArg{RunID: b.runID, TaskID: t.ID, Token: t.Token})
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

// release gives back a reservation left unsettled when the lease goes on
// (a handler that finished without the answer of its last request).
func (b *budget) release(ctx context.Context, lc *leaseCredits) {
	if !lc.unsettled {
		return
	}
	lc.unsettled = false
	t := lc.task
	err := b.retry(context.WithoutCancel(ctx), func(ctx context.Context) error {
		_, err := withdrawCredit.Exec(ctx, b.pool, creditArg{RunID: b.runID, TaskID: t.ID, Token: t.Token})
		return err
	})
	if err != nil {
		b.log.Warn("could not give back a credit; it comes back when the lease ends", "task_id", t.ID, "err", err)
		return
	}
	b.gaveBack()
}

// SetMaxCredits sets (or with nil lifts) the credit budget of a run.
func SetMaxCredits(ctx context.Context, pool *pgxpool.Pool, runID int64, max *int64) error {
	if _, err := setMaxCredits.Exec(ctx, pool, maxCreditsParams{RunID: runID, MaxCredits: max}); err != nil {
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
	err := loadCredits.QueryRow(ctx, pool, runArg{runID}).Scan(&c.Max, &c.Committed, &c.Billed)
	if err != nil {
		return c, fmt.Errorf("credits of run %d: %w", runID, err)
	}
	return c, nil
}
