package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/sources"
)

// ErrBudgetExhausted means the run's max_credits are all committed: the run
// stops cleanly and can be resumed with a larger budget.
var ErrBudgetExhausted = errors.New("credit budget exhausted (raise max_credits and resume)")

// budget reserves a credit in Postgres before every request that may be
// billed, so max_credits holds across workers and processes, and gives it
// back when the answer turns out free (errors, 404, the free private
// profile). It also keeps the per-endpoint accounting.
type budget struct {
	pool  *pgxpool.Pool
	runID int64
	retry func(ctx context.Context, op func(context.Context) error) error
	log   *slog.Logger
}

const reserveSQL = `
UPDATE crawl.runs SET credits_committed = credits_committed + 1
WHERE id = $1 AND (max_credits IS NULL OR credits_committed < max_credits)`

// reserve is the client's BeforeSend hook.
func (b *budget) reserve(ctx context.Context, _ string) error {
	return b.retry(ctx, func(ctx context.Context) error {
		tag, err := b.pool.Exec(ctx, reserveSQL, b.runID)
		if err != nil {
			return fmt.Errorf("reserve credit: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrBudgetExhausted
		}
		return nil
	})
}

const settleSQL = `
WITH run AS (
    UPDATE crawl.runs SET credits_committed = credits_committed - $3, credits_billed = credits_billed + $4
    WHERE id = $1
)
INSERT INTO crawl.credit_usage AS u (run_id, endpoint, requests, billed, free, rate_limited, errors, credits_charged, credits_remaining)
VALUES ($1, $2, 1, $4, $5, $6, $7, $8, $9)
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
	sql, args := settleSQL, []any{b.runID, o.Endpoint, refund, billed, free, limited, errs, o.Credits.Charged.V, remaining}
	if o.Withdrawn {
		// Never sent: give the reservation back, with nothing to record.
		sql, args = withdrawSQL, []any{b.runID}
	}
	err := b.retry(context.WithoutCancel(ctx), func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, sql, args...)
		if err != nil && refund > 0 && !pgconn.SafeToRetry(err) {
			// It may have been applied: applying a refund twice could let
			// the run overspend, so keep the reservation instead.
			return backoffPermanent(err)
		}
		return err
	})
	if err != nil {
		b.log.Error("credit accounting lost for one request", "endpoint", o.Endpoint, "status", o.Status, "err", err)
	}
}

const withdrawSQL = `UPDATE crawl.runs SET credits_committed = credits_committed - 1 WHERE id = $1`

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

// permanentError makes retryDB give up at once.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

func backoffPermanent(err error) error { return permanentError{err} }
