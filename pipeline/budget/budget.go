package budget

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/loop"
	"github.com/socialcrawl/crawler/sources"
)

// ErrExhausted means max_credits are all billed (or held by
// reservations that did not settle within the wait bound): the run stops
// cleanly and can be resumed with a larger budget.
var ErrExhausted = errors.New("credit budget exhausted (raise max_credits and resume)")

// TooDearError is ErrExhausted for one request: it costs more than the
// budget can still have left for it, though cheaper requests may fit.
// Only its task waits (for a larger budget); the run goes on with the
// others and stops on its budget once none fits.
type TooDearError struct {
	Credits, Left int64 // the request's price, and what is left at most
}

func (e *TooDearError) Error() string {
	return fmt.Sprintf("%s: a request of %d credits, %d left", ErrExhausted, e.Credits, e.Left)
}

func (e *TooDearError) Unwrap() error { return ErrExhausted }

// ErrStopping ends a wait for the budget when the run stops for another
// reason (a signal, another worker's error): nothing was sent.
var ErrStopping = errors.New("run stopping while waiting for the credit budget")

// Config is what a process's hold needs of the runner.
type Config struct {
	Pool  *pgxpool.Pool
	RunID int64
	Owner string // the process (crawl.credit_holds.owner)
	// Retry runs a statement again while the database is away; at a
	// stop, it gives up within a bound of its own (pipeline.StopLinger).
	Retry func(ctx context.Context, op func(context.Context) error) error
	Log   *slog.Logger
	// WaitMax bounds a wait for reservations to settle.
	WaitMax time.Duration
	// Stopping is closed when the run stops: waits end.
	Stopping <-chan struct{}
}

// Hold is a process's hold on its run's budget: what its requests reserve
// and its answers bill (see the package doc).
type Hold struct {
	cfg Config

	mu sync.Mutex
	// held is the hold as of the process's last statement on it.
	held int64
	// inFlight is what the requests sent and not answered are expected to
	// cost; billed is what answers cost that is not posted yet, usage the
	// per-endpoint counts not written yet.
	inFlight, billed int64
	// posted sums the billed credits the statements posted: LeftNow counts
	// those posted while its query was under way, which its figure of the
	// run's billed credits may lack.
	posted int64
	usage  map[string]*usageDelta
	// wanting sums the credits of requests waiting for the hold to grow.
	wanting int64
	asking  bool           // a statement on the hold is under way
	refills sync.WaitGroup // refills ahead under way (Close waits for them)
	changed chan struct{}  // closed (and replaced) when credits may be had
	// last is what the last statement said of the run's budget.
	last holdAnswer
	// used is when a request last took credits; void asks the next beat
	// to give back the spare credits (waiting for more, or idle).
	used time.Time
	void bool
}

// NewHold is the hold of process cfg.Owner on run cfg.RunID's budget,
// empty until its first request asks for credits.
func NewHold(cfg Config) *Hold { return &Hold{cfg: cfg} }

// usageDelta is what answers to one endpoint add to crawl.credit_usage.
type usageDelta struct {
	requests, free, rateLimited, errors, cached int
	billed, charged                             int64
	remaining                                   *int64
}

// Timing of the hold.
const (
	// holdBeat is how often a process posts its billed answers and renews
	// its hold, at the least.
	holdBeat = time.Second
	// holdDead is how old a hold's beat may be before the other processes
	// count all of it as spent (its process died or lost the database).
	holdDead = 15 * time.Second
	// creditBlock is how many requests' worth of credits a process asks to
	// spare beyond its waiting requests while the budget is far: the round
	// trip of a reservation is paid once per that many requests.
	creditBlock = 16
)

// spare is what the hold has beyond the requests in flight and the billed
// answers not posted (negative: answers cost more than they reserved).
func (b *Hold) spare() int64 { return b.held - b.billed - b.inFlight }

// holdAnswer is a statement's answer: what it granted, the hold after it,
// and the run's budget as it stood.
type holdAnswer struct {
	granted, held, billed, committed int64
	max                              *int64
	// deadHeld is what processes that stopped beating hold (spent);
	// othersInFlight what the live other processes have in flight.
	deadHeld, othersInFlight int64
}

// Parameters of the budget's statements (internal/db/queries/budget.sql).
type (
	holdParams struct {
		RunID    int64         `db:"run_id"`
		Owner    string        `db:"owner"`
		Billed   int64         `db:"billed"`
		Void     int64         `db:"void"`
		Want     int64         `db:"want"`
		Need     int64         `db:"need"`
		InFlight int64         `db:"in_flight"`
		Dead     time.Duration `db:"dead"`
	}
	usageRow struct {
		Endpoint    string `db:"endpoint"`
		Requests    int    `db:"requests"`
		Billed      int64  `db:"billed"`
		Free        int    `db:"free"`
		RateLimited int    `db:"rate_limited"`
		Errors      int    `db:"errors"`
		Charged     int64  `db:"credits_charged"`
		Remaining   *int64 `db:"credits_remaining"`
		Cached      int    `db:"cached"`
	}
	ownerArg struct {
		RunID int64         `db:"run_id"`
		Owner string        `db:"owner"`
		Dead  time.Duration `db:"dead"`
	}
	maxCreditsParams struct {
		RunID      int64  `db:"run_id"`
		MaxCredits *int64 `db:"max_credits"`
	}
)

var (
	holdCredits    = db.Prepare[holdParams]("HoldCredits")
	addCreditUsage = db.PrepareBulk[db.RunArg, usageRow]("AddCreditUsage")
	dropCreditHold = db.Prepare[db.OwnerArg]("DropCreditHold")
	admission      = db.Prepare[ownerArg]("AdmissionCredits")
)

// Reserve takes credits (what the request is expected to cost, at least 1)
// for the request of a page lease about to be sent; *r is the lease's
// reservation: a retry of a request whose answer was lost reuses it.
// Before it asks or waits, it calls before (nil: none), whose error it
// returns: the lease's previous page's commit is read first, and a commit
// that failed sends nothing more.
func (b *Hold) Reserve(ctx context.Context, r *int64, credits int64, before func() error) error {
	if *r > 0 {
		return nil
	}
	credits = max(credits, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	var deadline time.Time
	poll := 5 * time.Millisecond
	for {
		if b.spare() >= credits {
			b.inFlight += credits
			*r = credits
			b.used = time.Now()
			b.refillAheadLocked(ctx, credits)
			return nil
		}
		if before != nil {
			b.mu.Unlock()
			err := before()
			b.mu.Lock()
			if before = nil; err != nil {
				return err
			}
			continue
		}
		if b.asking {
			// Another request is asking for all the waiting ones.
			if err := b.waitLocked(ctx, credits, 0); err != nil {
				return err
			}
			continue
		}
		a, err := b.statementLocked(ctx, credits)
		if err != nil {
			return err
		}
		if a.granted > 0 || b.spare() >= credits {
			continue
		}
		// Nothing granted: spent, or full of reservations that may still
		// come back (requests in flight, the spare of other processes).
		if a.max == nil {
			return ErrExhausted
		}
		switch left := *a.max - a.billed - b.billed - a.deadHeld; {
		case left < 1:
			return ErrExhausted
		case left < credits:
			// Even if every reservation came back: cheaper requests may.
			return &TooDearError{Credits: credits, Left: left}
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(b.cfg.WaitMax)
			b.cfg.Log.Debug("credit budget full of reservations in flight; waiting", "billed", a.billed, "committed", a.committed, "max", *a.max)
		} else if now.After(deadline) {
			return fmt.Errorf("%w: %d credits held by requests that did not settle within %s", ErrExhausted, a.committed-a.billed, b.cfg.WaitMax)
		}
		// What this process spares goes back, so that the request is
		// asked for whole and no two processes wait on each other's spare.
		b.void = b.spare() > 0
		if err := b.waitLocked(ctx, credits, poll); err != nil {
			return err
		}
		poll = min(2*poll, 250*time.Millisecond)
	}
}

// refillAheadLocked asks for the next block in the background, b.mu held,
// when the spare has fallen under half a block of requests of credits and
// the budget is far: the requests go on taking credits meanwhile, and none
// waits for a statement's round trip (nor, first, for its previous page's
// commit) while credits are plenty. Near the budget, requests ask for what
// they lack when they lack it, as before.
func (b *Hold) refillAheadLocked(ctx context.Context, credits int64) {
	block := creditBlock * credits
	if b.asking || b.spare() >= block/2 || !b.far(block) {
		return
	}
	b.asking = true // no other statement until this one is answered
	b.refills.Add(1)
	go func() {
		defer b.refills.Done()
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, err := b.statementLocked(ctx, -block); err != nil {
			b.cfg.Log.Debug("credit hold refill failed", "err", err)
		}
	}()
}

// far says whether the run's budget, as of the last statement, leaves
// room for many blocks (or there is no budget).
func (b *Hold) far(block int64) bool {
	a := b.last
	return a.max == nil || *a.max-a.committed-a.deadHeld >= 8*block
}

// waitLocked waits, without b.mu, until credits may be had, d passes (0:
// no bound), the run stops or ctx ends.
func (b *Hold) waitLocked(ctx context.Context, credits int64, d time.Duration) error {
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	ch := b.changed
	b.wanting += credits
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.wanting -= credits
	}()
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-b.cfg.Stopping:
		return ErrStopping
	case <-ch:
	case <-timeout:
	}
	return nil
}

// wake tells the waiting requests that credits may be had; b.mu is held.
func (b *Hold) wake() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// statementLocked sends the process's statement on its hold, b.mu held
// (released during the round trip): it posts the billed answers and the
// usage noted so far, gives back the spare credits when b.void, and asks
// for need credits (0: none) for the waiting requests, with a block to
// spare. Several requests waiting share one statement. A negative need
// -block tops the spare up to block, no request waiting (refillAheadLocked).
func (b *Hold) statementLocked(ctx context.Context, need int64) (holdAnswer, error) {
	b.asking = true
	defer func() { b.asking = false; b.wake() }()
	p := holdParams{RunID: b.cfg.RunID, Owner: b.cfg.Owner, Billed: b.billed, InFlight: b.inFlight + b.billed, Dead: holdDead}
	switch {
	case need > 0:
		// The request's own shortfall must be granted; the other waiting
		// requests' and a block to spare are asked for on top.
		p.Need = max(need-b.spare(), 1)
		p.Want = p.Need + b.wanting + creditBlock*need
	case need < 0:
		p.Need = 1
		p.Want = max(-need-b.spare(), 1)
	}
	if b.void {
		p.Void = max(b.spare(), 0)
		b.void = false
		// Gone from the spare now: a request reserving during the round
		// trip must not take credits the database is giving back (if the
		// statement fails, the hold is only understated: the safe side).
		b.held -= p.Void
	}
	usage := b.takeUsage()
	b.mu.Unlock()
	var a holdAnswer
	// Not cut short by the stop of ctx (it posts what answers billed), but
	// within its deadline (Close's) and the retries' own bound at a stop.
	sctx, cancel := detached(ctx)
	defer cancel()
	err := b.cfg.Retry(sctx, func(ctx context.Context) error {
		var batch pgx.Batch
		holdCredits.Queue(&batch, p)
		if len(usage) > 0 {
			addCreditUsage.Queue(&batch, db.RunArg{RunID: b.cfg.RunID}, usage)
		}
		br := b.cfg.Pool.SendBatch(ctx, &batch)
		err := br.QueryRow().Scan(&a.granted, &a.held, &a.billed, &a.committed, &a.max, &a.deadHeld, &a.othersInFlight)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil && p.Billed == 0 && !pgconn.SafeToRetry(err) && db.Classify(err).Retryable() {
			// It may have been applied: counting the usage twice is
			// worse than losing it. Billed credits are sent again
			// (counted twice rather than not at all, the budget's safe
			// side), as is a grant (held twice: safe too).
			return backoff.Permanent(err)
		}
		return err
	})
	b.mu.Lock()
	if err != nil {
		if p.Billed > 0 {
			b.cfg.Log.Error("credit accounting lost for billed answers", "billed", p.Billed, "err", err)
		}
		return a, fmt.Errorf("credit hold: %w", err)
	}
	b.billed -= p.Billed
	b.posted += p.Billed
	b.held = a.held
	b.last = a
	return a, nil
}

// detached is ctx without its cancellation but with its deadline.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(d, dl)
	}
	return d, func() {}
}

// takeUsage returns the usage noted since the last statement, as rows, and
// starts anew; b.mu is held.
func (b *Hold) takeUsage() []usageRow {
	if len(b.usage) == 0 {
		return nil
	}
	rows := make([]usageRow, 0, len(b.usage))
	for _, e := range slices.Sorted(maps.Keys(b.usage)) {
		u := b.usage[e]
		rows = append(rows, usageRow{Endpoint: e, Requests: u.requests, Billed: u.billed, Free: u.free, RateLimited: u.rateLimited,
			Errors: u.errors, Charged: u.charged, Remaining: u.remaining, Cached: u.cached})
	}
	clear(b.usage)
	return rows
}

// Settle notes what an answer cost (its page lease's Settle): the
// request's reservation *r goes back to the spare, and the cost (what the
// answer says it charged, else what the request reserved: the route's
// price) is posted by the next statement on the hold.
func (b *Hold) Settle(r *int64, o sources.Outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	reserved := *r
	b.inFlight -= reserved
	*r = 0
	defer b.wake()
	cost := o.Cost()
	if o.Billed && !o.Credits.Charged.Valid {
		// The answer does not say what it cost: the route's price.
		cost = max(cost, reserved)
	}
	if b.usage == nil {
		b.usage = map[string]*usageDelta{}
	}
	u := b.usage[o.Endpoint]
	if u == nil {
		u = &usageDelta{}
		b.usage[o.Endpoint] = u
	}
	u.requests++
	switch {
	case o.NotSent:
		u.errors++
	case o.Billed:
		b.billed += cost
		u.billed += cost
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
		rem := o.Credits.Remaining.V
		u.remaining = &rem
	}
}

// Release gives back the reservation *r of a request whose answer never
// came, when its page is done with it: taken as not billed.
func (b *Hold) Release(r *int64) {
	if *r == 0 {
		return
	}
	b.mu.Lock()
	b.inFlight -= *r
	*r = 0
	b.wake()
	b.mu.Unlock()
}

// Beat posts what the process's answers cost and renews its hold every
// holdBeat until ctx ends, giving back its spare credits once no request
// took any for two beats.
func (b *Hold) Beat(ctx context.Context) {
	loop.Every(ctx, holdBeat, nil, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.asking {
			return
		}
		if b.inFlight == 0 && b.wanting == 0 && time.Since(b.used) > 2*holdBeat && b.spare() > 0 {
			b.void = true
		}
		if _, err := b.statementLocked(ctx, 0); err != nil && ctx.Err() == nil {
			b.cfg.Log.Debug("credit hold beat failed", "err", err)
		}
	})
}

// Close posts what is left to post and gives back the spare credits, at
// the process's end on the run (nothing is in flight any more).
func (b *Hold) Close(ctx context.Context) error {
	// A refill ahead answered after the void would leave its grant held.
	b.refills.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.void = true
	if _, err := b.statementLocked(ctx, 0); err != nil {
		return err
	}
	if b.held == 0 {
		if _, err := dropCreditHold.Exec(ctx, b.cfg.Pool, db.OwnerArg{RunID: b.cfg.RunID, Owner: b.cfg.Owner}); err != nil {
			return fmt.Errorf("drop credit hold: %w", err)
		}
	}
	return nil
}

// LeftNow is the run's credits left for admitting new work (nil:
// the run has no budget): max_credits less what is billed (posted or not),
// what the requests in flight of every process are expected to cost, and
// the holds of dead processes (spent). The spare credits live processes
// hold are not taken as spent: they are given back or spent on requests
// that count once sent. Other processes' figures are as of their last beat
// (at most holdBeat old); this process's are exact (its answers posted
// during the reading counted twice at worst).
func (b *Hold) LeftNow(ctx context.Context) (*int64, error) {
	var maxCredits *int64
	var billed, deadHeld, othersInFlight int64
	b.mu.Lock()
	posted := b.posted
	b.mu.Unlock()
	if err := admission.QueryRow(ctx, b.cfg.Pool, ownerArg{RunID: b.cfg.RunID, Owner: b.cfg.Owner, Dead: holdDead}).
		Scan(&maxCredits, &billed, &deadHeld, &othersInFlight); err != nil {
		return nil, fmt.Errorf("credits left: %w", err)
	}
	if maxCredits == nil {
		return nil, nil
	}
	b.mu.Lock()
	// A statement that posted billed answers while the query was under way
	// took them out of b.billed, and the query may have read the run's
	// billed credits before they landed: counted again (twice at worst,
	// the safe side), else a visit is admitted on credits already spent.
	left := *maxCredits - billed - deadHeld - othersInFlight - b.billed - (b.posted - posted) - b.inFlight
	b.mu.Unlock()
	return &left, nil
}

var setMaxCredits = db.Prepare[maxCreditsParams]("SetMaxCredits")

// SetMaxCredits sets (or with nil lifts) the credit budget of a run (in
// a transaction under way, when q is one).
func SetMaxCredits(ctx context.Context, q db.Querier, runID int64, max *int64) error {
	if _, err := setMaxCredits.Exec(ctx, q, maxCreditsParams{RunID: runID, MaxCredits: max}); err != nil {
		return fmt.Errorf("set max_credits of run %d: %w", runID, err)
	}
	return nil
}

// Credits is the credit accounting of a run.
type Credits struct {
	Max *int64
	// Committed is Billed plus what processes hold (Held).
	Committed int64
	Billed    int64
	Held      int64
	// Unknown is, of Held, what processes that died hold (no beat for
	// holdDead: kill -9, a lost machine, a stop with the database gone):
	// their requests in flight and their answers not posted yet, which
	// the upstream may have charged or not, and their spare. Counted as
	// spent; the upstream billed at most Billed + Unknown.
	Unknown int64
	// Remaining is the upstream account's balance its answers reported
	// (credits_remaining), nil when none did.
	Remaining *int64
}

var loadCredits = db.Prepare[deadArg]("LoadCredits")

type deadArg struct {
	RunID int64         `db:"run_id"`
	Dead  time.Duration `db:"dead"`
}

// LoadCredits reads the credit accounting of a run.
func LoadCredits(ctx context.Context, pool *pgxpool.Pool, runID int64) (Credits, error) {
	var c Credits
	err := loadCredits.QueryRow(ctx, pool, deadArg{RunID: runID, Dead: holdDead}).Scan(&c.Max, &c.Committed, &c.Billed, &c.Held, &c.Unknown, &c.Remaining)
	if err != nil {
		return c, fmt.Errorf("credits of run %d: %w", runID, err)
	}
	return c, nil
}
