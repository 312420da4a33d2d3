package ratecontrol

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Controller is one key's gate (see the package doc). It is safe for
// concurrent use by all the workers of a client.
type Controller struct {
	mu      sync.Mutex
	now     func() time.Time // time.Now; a test's clock
	until   time.Time        // no request leaves before this instant
	pending *throttleEvent   // the 429 event waiting for its pause to end
	// limiter is our bucket; nil until there is a rate to keep (a ceiling,
	// a 429, or an estimate another process shared).
	limiter *bucket
	hist    successRing // the successes, at their send times
	// arr is hist with the start's successes at their arrival times, as
	// far as the answer times show them (spread): what the burst is read
	// from.
	arr    successRing
	sends  successRing // every request let through, when it was
	lags   lagRing     // the successes' answer times
	spread startSpread // when the start's requests arrived
	// interim is the key's rate while a 429's reaction waits for the
	// answers to the requests sent before it (0: none).
	interim float64
	// free is when a request last left that no other had waited for
	// (or with no bucket): our bucket did not hold the sends back then;
	// held is whether one waited for a token since the last left.
	free time.Time
	held bool
	// queue is the workers waiting for a token, first come first served:
	// only its head sleeps until the next token is due (see wait).
	queue waitQueue

	limits limits
	quota  quota
	hold   holding
	marks  marks
	drop   dropMemory
	share  sharing
	log    *slog.Logger // each reaction to a 429, at debug level
}

// limits is what the job file sets (api.rate, api.burst).
type limits struct {
	ceiling float64 // requests/s; 0: none
	burst   int     // api.burst when there is a ceiling; 0: none
}

// quota is what the controller knows of the upstream's quota.
type quota struct {
	// rate is the latest estimate (0: no 429 seen yet, the rate stays at
	// the ceiling, or unlimited).
	rate float64
	// burst is the estimate of the upstream's burst B (at least 1);
	// windows the windows of successes it was read from (see measure).
	burst   float64
	windows burstEnvelope
	// measured is whether rate was measured, not guessed (as after a
	// burst); everMeasured whether any 429 has been measured.
	measured, everMeasured bool
}

// holding is the rate settled at and how long it is held before probing.
type holding struct {
	base   float64       // the rate settled at after the last 429
	length time.Duration // how long base is held before probing
	// first is the first hold after the estimate moved: holdMin, or
	// holdAfterDrop since the quota last dropped (until it rises).
	first time.Duration
	end   time.Time // when the hold ends and the probe starts
	// loose is whether base is under the first estimate measured, which
	// may be a loose lower bound (see nextHold).
	loose bool
}

// marks are the instants the measurement windows reach back to.
type marks struct {
	// lastPause is when the last reacted-to pause ended: the upstream
	// bucket was full again then.
	lastPause time.Time
	// regime is the end of the pause of the last 429 that came while not
	// probing (dropped), or when the processes sharing the key changed:
	// rate windows never reach back before it, burst windows not before
	// dropped.
	regime, dropped time.Time
}

// dropMemory is what a drop of the quota leaves behind, for a probe that
// finds it came back.
type dropMemory struct {
	// high is the estimate before the quota last dropped (0: none, or
	// found again): a probe after a drop starts there.
	high float64
	// before is the estimate before the latest run of 429s that came
	// while not probing (the first of them may cut it only slightly),
	// unexpected when the first of them came.
	before     float64
	unexpected time.Time
}

// throttleEvent is a 429 as the controller reacts to it.
type throttleEvent struct {
	at      time.Time
	rate    float64 // the bucket's rate when it came (0: no bucket)
	probing bool    // the rate was above the estimate (or there was none)
	// drop is whether it may say the quota dropped: it came while not
	// probing, under an estimate that was measured. Under a guess it is
	// part of finding the quota, as a probe's is: it cuts the guess but
	// leaves no marks that keep later windows from the start's burst.
	drop bool
	// lag is how long answers were taking when it came: the reaction waits
	// that long after it, for the successes of the requests sent before it.
	lag time.Duration
	// sent is the rate requests were let through in the second before it.
	sent float64
	// seen is when it was answered: the pause started then.
	seen time.Time
	// bound is whether our bucket held the sends back all the way from
	// the end of the last pause (see react), with no other process.
	bound bool
}

// New returns the controller of a key with the ceiling api.rate (0: none)
// and api.burst.
func New(ceiling float64, burst int) *Controller {
	rc := &Controller{now: time.Now, quota: quota{burst: 1}, hold: holding{length: holdMin, first: holdMin}, share: sharing{scale: 1},
		log: slog.New(slog.DiscardHandler)}
	rc.limits.ceiling = ceiling
	if ceiling > 0 {
		rc.limits.burst = max(burst, 1)
		rc.quota.burst = float64(rc.limits.burst)
		rc.limiter = newBucket(rate.Limit(ceiling), rc.bucketBurst())
	}
	return rc
}

// SetLogger logs each reaction to a 429 (the estimate, the burst, the
// hold, the rate settled at) to l at debug level: what a run's rate
// control did, for a user asking why a run went slower than its quota.
func (rc *Controller) SetLogger(l *slog.Logger) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.log = l
}

// jitterMargin is how many tokens our bucket holds less than the
// upstream's: requests leave when our bucket allows, but the upstream counts
// them when they arrive, and a request delayed on its way (a new
// connection, a late goroutine) arrives together with the next ones. At a
// rate equal to the upstream's, its bucket then stays this many tokens
// above empty, which absorbs a delay of margin/R (40 ms at 50/s, B = 10).
func jitterMargin(burst int) int { return max(1, burst/5) }

// bucketBurst is our bucket's burst for the estimate of the upstream's:
// api.burst less jitterMargin, or half a measured burst. A measured burst
// may be too large (answers read together look like a burst), and a
// bucket of ours larger than the upstream's would meet a 429 at the end of
// every pause; a smaller one costs nothing once the rate is settled.
func (rc *Controller) bucketBurst() int {
	b := int(rc.quota.burst + 1e-9)
	if rc.limits.ceiling > 0 && b == rc.limits.burst {
		return max(1, b-jitterMargin(b))
	}
	return max(1, b/2)
}

// processBurst is our bucket's burst: this process's part of bucketBurst.
func (rc *Controller) processBurst() int {
	return max(1, int(float64(rc.bucketBurst())/rc.share.scale))
}

// Current is our bucket's rate in requests/s (0: no bucket).
func (rc *Controller) Current() float64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.currentLocked()
}

// Steady is the rate this process sends at, requests/s, leaving aside the
// interim of a 429's reaction (its wait for answers, during which it is
// the rate requests left at before the 429): the rate held under a
// measured estimate, or a probe's above it, or the ceiling before any 429
// (0: no bucket). What the requests in flight are sized for: a wait of a few
// answer times is no reason to shed them.
func (rc *Controller) Steady() float64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	cur := rc.currentLocked()
	if rc.interim > 0 && rc.pending != nil && !(rc.quota.measured && rc.pending.probing) {
		// What left before the 429, not the wait's rate. Not after a
		// probe's 429 under a measured estimate: what left then was above
		// the quota (the 429 says so), and the held rate below is what the
		// reaction comes back near (sized on what left, the limit peaked at
		// 1.9 x what 20/s needs at 3 s answers).
		cur = rc.pending.sent
	}
	if rc.quota.measured {
		cur = max(cur, rc.processRate(rc.hold.base))
	}
	if now := rc.now(); rc.pending == nil && rc.interim == 0 && rc.quota.rate > 0 && !now.Before(rc.hold.end) && !rc.jumping(now) {
		// A probe: its rate, not the bound to four times what left in the
		// last second, which the requests in flight hold back at long
		// answer times (sized on it, they would hold it back further: at
		// 20 s answers, 0.66 of the quota, issue 34).
		cur = max(cur, rc.processRate(rc.probeRate(now)))
	}
	return cur
}

// Loose reports whether the rate held is under the first estimate
// measured, which may be a loose lower bound of the quota (see nextHold):
// the requests in flight should not hold back the probe from it.
func (rc *Controller) Loose() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.hold.loose
}

func (rc *Controller) currentLocked() float64 {
	if rc.limiter == nil {
		return 0
	}
	return float64(rc.limiter.Limit())
}

// Wait blocks until the shared pause is over and a token is available.
func (rc *Controller) Wait(ctx context.Context) error { return rc.wait(ctx, false) }

// WaitRetry is Wait for a request the upstream refused with a 429: once
// the pause is over it leaves at once, ahead of the bucket (see
// stepRetryLocked), rather than queue behind the requests that waited out
// the pause with it at the rate after it.
func (rc *Controller) WaitRetry(ctx context.Context) error { return rc.wait(ctx, true) }

// wait lets the request leave when a token is due. The workers waiting
// for one queue first come first served, and only the head sleeps until
// the next token is due; when it leaves, the next takes its place. Each
// asking at every token instead (woken together, all but one to find it
// taken), 500 of them cost 16% of a core at 100/s and 2,000 of them 73%
// (20 s answers at 100/s keep some 400-500 waiting): on a loaded machine
// their wake-ups come late, and the requests leave in bunches that the
// upstream's bucket refuses. A retry goes ahead of the queue (WaitRetry).
func (rc *Controller) wait(ctx context.Context, retry bool) error {
	if retry {
		return rc.sleepUntilStep(ctx, true)
	}
	w, head := rc.enqueue()
	if w == nil {
		return nil
	}
	if !head {
		select {
		case <-w:
		case <-ctx.Done():
			rc.dequeue(w)
			return ctx.Err()
		}
	}
	err := rc.sleepUntilStep(ctx, false)
	rc.dequeue(w)
	return err
}

// sleepUntilStep takes a token, sleeping until one is due: for a retry,
// or for the queue's head.
func (rc *Controller) sleepUntilStep(ctx context.Context, retry bool) error {
	for {
		rc.mu.Lock()
		d := rc.stepRetryLocked(rc.now(), retry, !retry)
		rc.mu.Unlock()
		if d <= 0 {
			return nil
		}
		if err := Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// waitQueue is the workers waiting for a token, oldest first; each is
// told on its channel when it becomes the head.
type waitQueue []chan struct{}

// enqueue lets the request leave at once (w nil) when no other waits and
// a token is there; else it joins the queue, as its head or not.
func (rc *Controller) enqueue() (w chan struct{}, head bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.queue) == 0 && rc.stepRetryLocked(rc.now(), false, false) <= 0 {
		return nil, false
	}
	w = make(chan struct{}, 1)
	rc.queue = append(rc.queue, w)
	return w, len(rc.queue) == 1
}

// dequeue takes w out of the queue; when it was the head, the next
// becomes the head.
func (rc *Controller) dequeue(w chan struct{}) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, x := range rc.queue {
		if x != w {
			continue
		}
		rc.queue = append(rc.queue[:i], rc.queue[i+1:]...)
		if i == 0 && len(rc.queue) > 0 {
			rc.queue[0] <- struct{}{}
		}
		return
	}
}

// SetClock makes the controller read the time from now rather than
// time.Now: for callers that keep their own time, as a simulation in
// virtual time does (package concurrency's, which runs its limiter with
// this control). Set it before the first request.
func (rc *Controller) SetClock(now func() time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.now = now
}

// Take is one turn of Wait without sleeping, at the controller's clock: 0
// when a request may leave now (its token taken), else how long to wait
// before asking again.
func (rc *Controller) Take() time.Duration { return rc.step(rc.now()) }

// step is one turn of Wait for a first attempt, as Take.
func (rc *Controller) step(now time.Time) time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.stepRetryLocked(now, false, false)
}

// stepRetryLocked is one turn of Wait at now, under rc.mu: 0 when the
// request may leave (its token taken), else how long to wait before
// asking again; queued is whether it waited in the queue (see left). A
// token is taken only at the moment a request leaves, never reserved
// ahead: with reservations, workers queued at a low rate keep their
// places when the rate rises, and those that come later are let through
// at once, together, in a burst that empties the upstream's bucket; and a
// worker holding a reservation when a 429 comes would have to give it up.
// The queue's head instead wakes when the next token is due and takes it
// (see wait).
//
// The wait it asks for is never longer than napMax: the rate it is
// computed at may change meanwhile (the shared estimate adopted, a hold
// ending), and only a turn applies the change.
//
// A retry (of a request refused by a 429) leaves as soon as the pause is
// over, borrowing its token from the bucket (which then goes below empty,
// by less than its burst plus one token, and holds the next requests back
// until it is paid): the pause was for the upstream's bucket to refill, so
// a request retried at its end finds a token there, and the retried item
// comes back within the pause and one round trip, not after the requests
// that waited with it (issue 34: 2-6 s late at an interim rate of
// 0.5-1/s). The rate over a second is unchanged.
//
// The debt is checked before the token is taken, so a bucket with a
// fraction of a token left can go to its burst plus that fraction below
// empty: less than burst + 1 tokens. Checked after, a retry at api.burst 1
// would wait a whole token more after every capped 429 (TestRecoveryAfter-
// Repeated429s' bound); one request of debt beyond the burst is the price
// of the retried item coming back within the pause and one round trip.
func (rc *Controller) stepRetryLocked(now time.Time, retry, queued bool) time.Duration {
	if now.Before(rc.until) {
		return rc.until.Sub(now)
	}
	rc.adjust(now)
	if rc.limiter == nil || rc.limiter.AllowN(now, 1) {
		rc.left(now, queued)
		return 0
	}
	if retry && rc.limiter.TokensAt(now) > -float64(rc.limiter.Burst()) {
		rc.limiter.ReserveN(now, 1) // in debt: paid by the next requests
		rc.sends.add(now)           // ahead of the bucket: no sign it held none back
		return 0
	}
	rc.held = true
	tok := rc.limiter.TokensAt(now)
	return min(max(time.Duration((1-tok)/float64(rc.limiter.Limit())*float64(time.Second)), time.Microsecond), napMax)
}

// left records a request let through at now; queued is whether it
// waited in the queue for a token (our bucket held it back).
func (rc *Controller) left(now time.Time, queued bool) {
	rc.sends.add(now)
	if rc.limiter == nil || (!rc.held && !queued) {
		rc.free = now
	}
	rc.held = false
}

// Sleep waits d, or until ctx is done (its error then).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Paused reports whether a 429's pause is in force.
func (rc *Controller) Paused() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.now().Before(rc.until)
}

// Throttled records a 429 to a request sent at sent: every worker pauses
// for d from now (those of the other processes sharing the key too); the
// rate is adjusted when the pause ends. The upstream's bucket was empty
// when the request arrived: the estimates measure up to then.
func (rc *Controller) Throttled(sent time.Time, d time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.throttledSent(rc.now(), sent, d) {
		rc.logPause("a 429", d)
		if rc.share.sharer != nil {
			rc.share.sharer.Paused(d)
		}
	}
}

func (rc *Controller) logPause(why string, d time.Duration) {
	if e := rc.pending; e != nil && rc.log.Enabled(context.Background(), slog.LevelDebug) {
		rc.log.Debug("rate control: pause", "of", why, "for", d, "rate", round2(e.rate), "probing", e.probing, "drop", e.drop,
			"estimate", round2(rc.quota.rate), "following", rc.following(), "scale", rc.share.scale)
	}
}

// Pause pauses every worker for d from now, as a 429 of another process
// sharing the key did (Sharer.Paused); the rate is re-estimated when the
// pause ends, as after a 429 of this one.
func (rc *Controller) Pause(d time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.throttledAt(rc.now(), d) {
		rc.logPause("another process's 429", d)
	}
}

// throttledAt records a pause of d from now, of a 429 come now; it reports
// whether it starts a new 429 event (no pause was in force).
func (rc *Controller) throttledAt(now time.Time, d time.Duration) bool {
	return rc.throttledSent(now, now, d)
}

// throttledSent records a pause of d from now, of a 429 to a request sent
// at sent; it reports whether it starts a new 429 event.
func (rc *Controller) throttledSent(now, sent time.Time, d time.Duration) bool {
	inPause := now.Before(rc.until)
	if rc.limiter == nil {
		rc.spread.limited(max(now.Sub(sent), 0)) // sent with no bucket: the start's
	}
	if until := now.Add(d); until.After(rc.until) {
		rc.until = until
	}
	if inPause {
		return false // a request in flight when the pause began
	}
	if rc.pending != nil {
		// The reaction to the last 429 waits for the answers to the
		// requests sent before it, and the interim rate met the quota
		// (or requests arrived bunched, the upstream's burst is small):
		// cut as an unexpected 429 cuts, down to half the rate the first
		// came at; the reaction still measures up to that 429.
		floor := rateFloor
		if rc.pending.rate > 0 {
			floor = max(floor, rc.pending.rate/2)
		}
		rc.interim = max(rc.interim*dropCap, floor)
		return true
	}
	at := sent
	if at.After(now) {
		at = now
	}
	cur := rc.keyRate()
	probing := rc.quota.rate == 0 || cur > rc.quota.rate
	rc.pending = &throttleEvent{at: at, rate: cur, probing: probing, drop: !probing && rc.quota.measured,
		lag: min(rc.lags.max(), maxLag), sent: float64(rc.sends.count(at.Add(-time.Second), at)), seen: now,
		bound: !rc.marks.lastPause.IsZero() && rc.free.Before(rc.marks.lastPause) && !rc.shared()}
	return true
}

// Success records a successful attempt answered now, for the estimates.
func (rc *Controller) Success() { rc.SuccessAt(rc.now()) }

// SuccessAt records a successful attempt whose request was sent at sent
// (before its answer): the upstream's bucket counted it on arrival, so the
// estimates count it there, however long the answer took.
func (rc *Controller) SuccessAt(sent time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.successAt(rc.now(), sent)
}

func (rc *Controller) successAt(now, sent time.Time) {
	lag := max(now.Sub(sent), 0)
	rc.hist.insert(sent)
	if rc.limiter != nil || !rc.spread.success(sent, max(lag, time.Nanosecond)) {
		rc.arr.insert(sent)
	}
	rc.lags.add(lag)
}
