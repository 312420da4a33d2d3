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

// budget reserves credits in Postgres before the requests that may be
// billed, so max_credits holds across workers and processes, and keeps the
// per-endpoint accounting.
//
// A reservation belongs to the lease of the task that made it
// (crawl.tasks.credits_held): whatever a lease still holds when it ends
// (finished, released, or expired and taken over after its process died)
// goes back to the budget. So the run's committed credits are its billed
// credits plus the reservations of live leases, and only billed credits
// can end the run: a worker that finds the budget full of reservations that
// may still come back waits for them to settle.
//
// To keep the database off a page's critical path, a lease reserves credits
// in blocks (creditBlock, one round trip for that many requests) while the
// run is far from its budget, and one at a time near it (ReserveCredits),
// and spends them one request at a time without asking; an answer that
// turns out free (errors, 404, 429, the free private profile) leaves its
// credit to the lease's next request. What the answers cost is settled in
// the page's commit batch (SettleCredits after the fenced advance: both or
// neither), or by a statement of its own when the lease ends without a
// commit (the task fails or is released, or the lease is lost); a commit
// that ends the task gives the lease's spare credits back.
//
// A request whose answer never arrived (a timeout, a reset after sending,
// the process killed) is taken as not billed: the sandbox charges only the
// answers it delivers, and as far as is known so does the upstream. A retry
// of the same request reuses its reservation; the reservation comes back
// when the lease ends. A billed answer is recorded by the page's commit: if
// the process dies between the answer and the commit, the answer counts as
// lost, its credit comes back with the lease, and the page is bought again
// after the resume. Should the upstream have charged such requests, the run
// can overspend by them: at most one per worker at a crash.
type budget struct {
	pool  *pgxpool.Pool
	runID int64
	retry func(ctx context.Context, op func(context.Context) error) error
	log   *slog.Logger
	// waitMax bounds a wait for reservations to settle.
	waitMax time.Duration
	// workers is the number of workers of this process: a block is
	// reserved only while the run has blockFar(workers) credits left.
	workers int
	// stopping is closed when the run stops: waits end.
	stopping <-chan struct{}

	mu      sync.Mutex
	settled chan struct{} // closed (and replaced) when credits come back
}

// creditBlock is how many credits a lease reserves at once far from the
// budget: the database round trip of a reservation is paid once per that
// many requests.
const creditBlock = 16

// blockFar is how many credits must be left uncommitted for a block to be
// granted: far enough that the blocks the workers of several processes may
// hold at once cannot fill the budget with credits that wait for their
// lease's next pages.
func blockFar(workers int) int64 { return int64(creditBlock * max(workers, 1) * 4) }

// leaseCredits is what the budget knows of one lease in this process: the
// credits it holds and what its answers cost since the last settle. A
// task's requests and commits are sequential, so it needs no lock.
type leaseCredits struct {
	task *Task
	// held is what the lease holds in the database (crawl.tasks.credits_held)
	// as of its last statement: its spare credits, the one in use, and those
	// of billed answers not settled yet.
	held int64
	// validUntil: until then the lease cannot have expired, so its spare
	// credits are still its own; after it, the next request asks the
	// database (a lease that expired has its credits given back).
	validUntil time.Time
	// inFlight: the credits in use by a request whose answer has not been
	// settled (what it is expected to cost); the retry of a request whose
	// answer was lost reuses them.
	inFlight int64
	// billed counts the billed answers not settled yet; usage is what the
	// answers not settled yet add to crawl.credit_usage.
	billed int
	usage  usageDelta
	// carry is the settle of the last commit sent and not known to have
	// gone through (written but unread, or failed and to be retried): its
	// billed answers, which held still counts until it is read. A retry of
	// that commit carries exactly it again, whatever answers came since
	// (they wait in billed and usage for the next settle); when the lease
	// ends after a commit that failed for good, flush gives it back to
	// billed and usage (giveBack).
	carry *settleParams
}

// usageDelta is what answers to one endpoint add to crawl.credit_usage.
type usageDelta struct {
	endpoint                            string
	requests, free, rateLimited, errors int
	cached                              int
	charged                             int64
	remaining                           *int64
}

// spare is what the lease holds beyond the credits in use or billed.
func (lc *leaseCredits) spare() int64 {
	n := lc.held - int64(lc.billed)
	if lc.carry != nil {
		n -= int64(lc.carry.Billed)
	}
	return n - lc.inFlight
}

// pending reports answers not settled yet.
func (lc *leaseCredits) pending() bool { return lc.billed > 0 || lc.usage.endpoint != "" }

// settleArgs are the parameters of SettleCredits for what lc has pending;
// end gives back the lease's other credits.
func (lc *leaseCredits) settleArgs(runID int64, end bool) settleParams {
	u := lc.usage
	return settleParams{RunID: runID, TaskID: lc.task.ID, Token: lc.task.Token, End: end,
		Endpoint: u.endpoint, Requests: u.requests, Billed: lc.billed, Free: u.free, RateLimited: u.rateLimited,
		Errors: u.errors, CreditsCharged: u.charged, CreditsRemaining: u.remaining, Cached: u.cached}
}

// settled records that SettleCredits went through: the lease holds held.
// validUntil, when not zero, is how long the lease runs from then on.
func (lc *leaseCredits) settled(held int64, validUntil time.Time) {
	lc.billed, lc.usage = 0, usageDelta{}
	lc.held = held
	if !validUntil.IsZero() {
		lc.validUntil = validUntil
	}
}

// lost records that a settle went through but its answer was lost: what the
// lease holds is unknown, so its next request asks the database.
func (lc *leaseCredits) lost() {
	lc.billed, lc.usage = 0, usageDelta{}
	lc.validUntil = time.Time{}
}

// settleFor is what the commit being sent settles: the carried settle of
// an earlier attempt of it, or else everything pending, which moves into
// carry. end gives back the lease's other credits.
func (lc *leaseCredits) settleFor(runID int64, end bool) settleParams {
	if lc.carry == nil {
		a := lc.settleArgs(runID, end)
		lc.carry = &a
		lc.billed, lc.usage = 0, usageDelta{}
	}
	lc.carry.End = end
	return *lc.carry
}

// Outcomes of a sent commit for its lease's credits (received).
const (
	commitSettled = iota // the batch went through: the lease holds held
	commitFailed         // rolled back, or unknown: the carry stays for a retry
	commitApplied        // an earlier attempt had settled it: held unknown
)

// received applies the outcome of a sent commit, read by SentCommit.Wait.
func (lc *leaseCredits) received(held int64, outcome int) {
	switch outcome {
	case commitSettled:
		lc.held, lc.carry = held, nil
	case commitApplied:
		lc.carry, lc.validUntil = nil, time.Time{}
	}
}

// giveBack returns the carry of a commit that failed for good to billed and
// usage, for the lease's next settle (its end, as the task fails or the
// lease is lost: a billed answer still counts). Only pages of lists are
// sent ahead of their results, and a list's requests go to one endpoint;
// should another have come meanwhile, the carried counts go to its row
// (the credits stay exact).
func (lc *leaseCredits) giveBack() {
	u := lc.carry
	if u == nil {
		return
	}
	lc.carry = nil
	lc.billed += u.Billed
	if u.Endpoint == "" {
		return
	}
	if lc.usage.endpoint == "" {
		lc.usage.endpoint = u.Endpoint
	}
	lc.usage.requests += u.Requests
	lc.usage.free += u.Free
	lc.usage.rateLimited += u.RateLimited
	lc.usage.errors += u.Errors
	lc.usage.cached += u.Cached
	lc.usage.charged += u.CreditsCharged
	if u.CreditsRemaining != nil && lc.usage.remaining == nil {
		lc.usage.remaining = u.CreditsRemaining
	}
}

// awaitPrev reads the lease's unread commit, if any (await: the page
// lease's, nil when there is none), before a statement of the lease's own:
// the database must see the lease's statements in order, and what the
// lease holds must be known. It returns the commit's error.
func awaitPrev(await func() error) error {
	if await == nil {
		return nil
	}
	return await()
}

// takeSpare spends credits of the lease's spare ones on the next request,
// while the lease cannot have expired.
func (lc *leaseCredits) takeSpare(credits int64) bool {
	if lc.spare() >= credits && time.Now().Before(lc.validUntil) {
		lc.inFlight = credits
		return true
	}
	return false
}

// leaseCredits returns t's credits in this process, created at its first
// page.
func (t *Task) leaseCredits() *leaseCredits {
	if t.credits == nil {
		t.credits = &leaseCredits{task: t}
	}
	return t.credits
}

// Parameters of the budget's statements (internal/db/queries/budget.sql).
type (
	reserveParams struct {
		RunID  int64 `db:"run_id"`
		TaskID int64 `db:"task_id"`
		Token  int64 `db:"token"`
		Block  int64 `db:"block"` // credits asked for far from the budget
		Far    int64 `db:"far"`   // what must be left for a block
		Need   int64 `db:"need"`  // credits asked for near the budget
	}
	settleParams struct {
		RunID            int64  `db:"run_id"`
		TaskID           int64  `db:"task_id"`
		Token            int64  `db:"token"`
		End              bool   `db:"end"`
		Endpoint         string `db:"endpoint"`
		Requests         int    `db:"requests"`
		Billed           int    `db:"billed"`
		Free             int    `db:"free"`
		RateLimited      int    `db:"rate_limited"`
		Errors           int    `db:"errors"`
		CreditsCharged   int64  `db:"credits_charged"`
		CreditsRemaining *int64 `db:"credits_remaining"`
		Cached           int    `db:"cached"`
	}
	maxCreditsParams struct {
		RunID      int64  `db:"run_id"`
		MaxCredits *int64 `db:"max_credits"`
	}
)

var reserveCredits = db.Prepare[reserveParams]("ReserveCredits")

// reserve is called before each request of lease lc may be sent (its page
// lease's Reserve): the request spends credits (what its answer is
// expected to cost, at least 1) of the lease's spare ones, or a
// reservation asks the database for more. await reads the lease's unread
// commit (nil: none).
func (b *budget) reserve(ctx context.Context, lc *leaseCredits, credits int64, await func() error) error {
	if lc.inFlight > 0 {
		return nil // the retry of a request whose answer was lost reuses its credits
	}
	credits = max(credits, 1)
	if lc.takeSpare(credits) {
		return nil
	}
	// Asking the database: the previous page's commit must be read first
	// (its settle and this reservation both change what the lease holds),
	// and a commit that failed sends nothing more.
	if err := awaitPrev(await); err != nil {
		return err
	}
	if lc.takeSpare(credits) {
		return nil
	}
	block := int64(creditBlock)
	if t := lc.task; t.MaxPages > 0 {
		// A list reserves no more than the pages it may still have.
		block = max(1, min(block, int64(t.MaxPages-t.Pages)))
	}
	arg := reserveParams{RunID: b.runID, TaskID: lc.task.ID, Token: lc.task.Token, Block: block * credits, Far: blockFar(b.workers),
		Need: credits - max(lc.spare(), 0)}
	var deadline time.Time
	poll := 5 * time.Millisecond
	for {
		var ok int
		var held, billed, committed int64
		var validS float64
		var maxCredits *int64
		var sent time.Time
		err := b.retry(ctx, func(ctx context.Context) error {
			sent = time.Now()
			err := reserveCredits.QueryRow(ctx, b.pool, arg).Scan(&ok, &held, &validS, &billed, &committed, &maxCredits)
			if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == db.LeaseLostCode {
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
			lc.held = held
			lc.validUntil = sent.Add(time.Duration(validS * 0.9 * float64(time.Second)))
			if lc.spare() < credits {
				// Not enough yet (a dear request near the budget takes
				// its credits in steps), or the lease's credits were given
				// back meanwhile (it expired): ask again.
				arg.Need = credits - max(lc.spare(), 0)
				continue
			}
			lc.inFlight = credits
			return nil
		case maxCredits == nil || billed+arg.Need > *maxCredits:
			return ErrBudgetExhausted
		}
		// Full of reservations that may still come back: wait for them.
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(b.waitMax)
			b.log.Debug("credit budget full of reservations in flight; waiting", "billed", billed, "held", committed-billed, "max", *maxCredits)
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

var reclaimExpiredCredits = db.Prepare[runArg]("ReclaimExpiredCredits")

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

var reclaimStaleCredits = db.Prepare[runArg]("ReclaimStaleCredits")

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

// settle notes what an answer cost in lease lc's credits (its page lease's
// Settle), for the page's commit (or the end of the lease) to settle. An
// answer that was not billed leaves its credit to the lease's next
// request. await reads the lease's unread commit (nil: none).
func (b *budget) settle(ctx context.Context, lc *leaseCredits, o sources.Outcome, await func() error) {
	lc.inFlight = 0
	if o.Withdrawn {
		return // never sent: nothing to record
	}
	if lc.usage.endpoint != "" && lc.usage.endpoint != o.Endpoint {
		// One usage row per settle: record the other endpoint's first.
		b.flush(ctx, lc, await)
	}
	u := &lc.usage
	u.endpoint = o.Endpoint
	u.requests++
	switch {
	case o.NotSent:
		u.errors++
	case o.Billed:
		lc.billed += int(o.Cost())
	case o.Free:
		u.free++
	case o.Status == 429:
		u.rateLimited++
	default:
		u.errors++
	}
	if o.Cached {
		u.cached++
	}
	u.charged += o.Credits.Charged.V
	if o.Credits.Remaining.Valid {
		r := o.Credits.Remaining.V
		u.remaining = &r
	}
}

var settleCredits = db.Prepare[settleParams]("SettleCredits")

// flush settles what lc has pending by a statement of its own: the lease
// ends without a commit (its task fails or is released, or it was lost),
// or its answers went to two endpoints. A billed answer counts even when
// the lease is gone. The credits the lease still holds go back when the
// lease ends. await reads the lease's unread commit (nil: none, as when
// the lease ends: the runner read it).
func (b *budget) flush(ctx context.Context, lc *leaseCredits, await func() error) {
	if lc == nil {
		return
	}
	// A commit still unread goes first; what a failed one carried is
	// settled here (a billed answer counts even when the lease is gone).
	_ = awaitPrev(await)
	lc.giveBack()
	if !lc.pending() {
		return
	}
	arg := lc.settleArgs(b.runID, false)
	var held int64
	err := b.retry(context.WithoutCancel(ctx), func(ctx context.Context) error {
		err := settleCredits.QueryRow(ctx, b.pool, arg).Scan(&held)
		if err != nil && arg.Billed == 0 && !pgconn.SafeToRetry(err) {
			// It may have been applied: counting the usage twice is worse
			// than losing it. A billed answer is retried (counted twice
			// rather than not at all, the budget's safe side).
			return backoff.Permanent(err)
		}
		return err
	})
	if err != nil {
		b.log.Error("credit accounting lost for a lease's answers", "task_id", lc.task.ID, "billed", arg.Billed, "err", err)
		lc.lost()
		return
	}
	lc.settled(held, time.Time{})
}

// release frees the credit of a request whose answer never came when the
// handler finished without it: it is taken as not billed and stays the
// lease's for its next request.
func (b *budget) release(_ context.Context, lc *leaseCredits) {
	lc.inFlight = 0
}

var setMaxCredits = db.Prepare[maxCreditsParams]("SetMaxCredits")

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
	// Remaining is the upstream account's balance its answers reported
	// (credits_remaining), nil when none did.
	Remaining *int64
}

var loadCredits = db.Prepare[runArg]("LoadCredits")

// LoadCredits reads the credit accounting of a run.
func LoadCredits(ctx context.Context, pool *pgxpool.Pool, runID int64) (Credits, error) {
	var c Credits
	err := loadCredits.QueryRow(ctx, pool, runArg{runID}).Scan(&c.Max, &c.Committed, &c.Billed, &c.Remaining)
	if err != nil {
		return c, fmt.Errorf("credits of run %d: %w", runID, err)
	}
	return c, nil
}
