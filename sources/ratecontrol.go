package sources

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateControl is the per-key gate every attempt passes: a pause shared by all
// workers after a 429, then a token bucket whose rate and burst adapt to the
// upstream's quota. With api.rate set, the bucket starts at that ceiling
// and never goes above it; without it, there is no bucket until the first
// 429s have shown where the quota is.
//
// # Why not plain AIMD
//
// The upstream's quota is a token bucket too: R requests/s per key, burst B.
// A 429 costs much more than the request it refuses: every worker then waits
// for Retry-After (at least a second in its seconds form), while the upstream
// bucket refills only up to B, so one 429 wastes about R*pause - B requests of
// quota (40 of 50 at R = 50/s, B = 10). A controller that halves on a 429 and
// adds a step per success oscillates around R and pays that price every few
// seconds. This one aims at no 429 at all: it measures R when it meets it,
// settles just under it, and probes above it rarely.
//
// # The algorithm
//
//   - Start at the ceiling (api.rate), or with no bucket at all when there is
//     none. With the quota configured exactly (api.rate = R, api.burst = B)
//     no 429 happens: our bucket never sends more than theirs admits, and it
//     holds a fifth of B (at least 1) less than B, so that requests delayed
//     on their way and arriving together still find tokens upstream (see
//     jitterMargin).
//   - On a 429 every worker pauses for Retry-After. All 429s answered while a
//     pause is in effect are one event (requests that were already in
//     flight), and the reaction is computed when the pause ends, once the
//     answers to the requests sent before the 429 have come back.
//   - Measure the quota. In any window [s, t] the upstream admits at most
//     B + R*(t-s) requests, so (n - B)/(t-s), with n the successes in the
//     window, is a lower bound of R; over the window that starts when the
//     upstream bucket was last full and ends at the 429 (bucket empty) it is
//     within 1/(t-s) of R. The estimate is the largest of these bounds over
//     the windows ending at the 429, within the last 10 s, that hold at least
//     10 successes beyond B (so it is within 10% of R, in practice 1-2%).
//   - Measure the burst with it (see measure). Given R, every window of
//     successes bounds B from below by n - R*(t-s); a window in which a full
//     upstream bucket was emptied at once (the workers' first requests, or
//     theirs after a pause) reaches it. The estimate of B starts at api.burst
//     (1 without a ceiling) and only grows: the largest such bound at the
//     estimated R, rounded up (B is whole; the first answers of a burst are
//     read a few milliseconds apart), and R again at that B, until they
//     agree. Too small a B
//     overestimates R by (B - estimate)/(t-s), too large one underestimates
//     it by as much; our bucket's burst follows the estimate.
//   - Settle at 99.5% of the estimate (never above the ceiling) and hold.
//   - Without enough successes to measure (the 429 came right after a
//     burst, e.g. at the start with a ceiling far above R, or with no
//     ceiling at all), start from half the rate the 429 came at (without a
//     bucket: the successes of the second before the 429, per second) and
//     probe at once, to measure on the way up. Without a ceiling the first
//     such probe triples the rate every second rather than adding 25%, so
//     that an unknown quota is found within a few seconds: at R = 50/s,
//     B = 10 the first estimate comes about 3 s into the run, within 1-2%.
//   - A 429 that comes while at or under the estimate (not probing) means
//     the estimate was a little high or the quota dropped: the estimate then
//     only counts windows since the last pause (and never again windows
//     before this one), and is capped at 99% of the rate the 429 came at
//     (85% when too few successes measure it). If the quota dropped within
//     the windows, the rate is still above R: our bucket starts the next
//     period empty, leaving the upstream's B tokens as the margin, and the
//     next 429 comes soon and measures R since this pause. A drop is
//     followed within two 429s. For a minute after it (dropWatch) the
//     quota may come back as suddenly: a probe every 5 s jumps straight to
//     the estimate before the drop, which costs one pause at the low rate
//     (about R - B requests of quota) while it is still low, and finds a
//     quota that came back within seconds, without a ramp.
//   - After the hold, probe: the rate grows by 25% per second (time-based,
//     not per request, so the speed of discovery does not depend on the
//     number of workers) up to the ceiling, so a raised quota is found within
//     seconds once the probe starts. The next 429 ends the probe and
//     measures R again.
//   - The hold starts at 60 s and doubles, up to 2 minutes, each time a
//     probe finds the same quota (within 5%); it goes back to its start when
//     the estimate moved. Every probe costs a pause (R*pause - B requests
//     of quota, about 0.7% of it at one every 2 minutes): probing rarely
//     is what lets a run spend 95% of an unknown quota, and a quota raised
//     mid-run is found within the hold, a minute or two: that is the
//     trade-off, since only a 429 says where R is.
//
// A RateShare, when set, has the last word on the rate.
//
// # One quota, several processes
//
// With a QuotaSharer (package pipeline keeps it in PostgreSQL) the N live
// processes on a key act as one: a 429 of any of them pauses all (so the
// upstream bucket is full when the pause ends, as with one process), and
// one of them, the leader, runs the control above for the whole key. The
// others, followers, hold at their share of base (1/N each when equal;
// SharedQuota.Share) and adopt what the leader publishes (its estimate,
// burst and hold); the leader sends the rest of the target: its share
// while held and all of a probe's growth. Since the followers send at a
// rate it knows, the leader measures the key's quota as (its own
// successes - B)/w + what the followers send, over windows since the last
// pause (during which they were steady). When the leader dies, another
// takes over with the shared estimate.
type rateControl struct {
	mu      sync.Mutex
	now     func() time.Time // time.Now; a test's clock
	until   time.Time        // no request leaves before this instant
	ceiling float64          // 0: none
	// limiter is our bucket; nil until there is a rate to keep (a ceiling,
	// a 429, or a share).
	limiter *rate.Limiter
	share   RateShare

	// pending is the 429 event waiting for its pause to end.
	pending *throttleEvent
	// known is the latest estimate of the upstream's quota (0: no 429 seen
	// yet, the rate stays at the ceiling, or unlimited).
	known float64
	// measured is whether any 429 has been measured (not only guessed
	// from, as after a burst).
	measured bool
	// burst is the estimate of the upstream's burst B (at least 1);
	// configBurst is api.burst when there is a ceiling (0: none).
	burst       float64
	configBurst int
	base        float64       // the rate settled at after the last 429
	hold        time.Duration // how long base is held before probing
	// holdBase is the first hold after the estimate moved: holdMin, or
	// holdAfterDrop since the quota last dropped (until it rises).
	holdBase      time.Duration
	knownMeasured bool // known was measured, not guessed
	// regime is the end of the pause of the last 429 that came while not
	// probing (dropped), or when the processes sharing the key changed:
	// rate windows never reach back before it, burst windows not before
	// dropped.
	regime, dropped time.Time
	holdEnd         time.Time
	// lastPause is when the last reacted-to pause ended: the upstream
	// bucket was full again then.
	lastPause time.Time
	hist      successRing
	// high is the estimate before the quota last dropped (0: none, or
	// found again): a probe after a drop starts there.
	high float64
	// before is the estimate before the latest run of 429s that came
	// while not probing (the first of them may cut it only slightly),
	// unexpected when the first of them came.
	before     float64
	unexpected time.Time
	// sharer, when set, shares the quota with other processes; scale is
	// 1 over this process's share of it (1 without one: N with N equal
	// processes), leader whether this one runs the control, sharedVersion
	// the shared estimate adopted.
	sharer        QuotaSharer
	scale         float64
	leader        bool
	sharedVersion int64
}

// RateShare decides the rate this process may send at, given what its own
// rate control would use. Without one, a process takes all it measures.
// Several processes on one key will share the quota through one (the
// estimate of each, combined in the database, split by the live processes).
type RateShare interface {
	// Allowed returns the rate in requests/s this process may send at, at
	// now: want is what the process's own control would use (+Inf: no
	// bucket, no 429 seen and no ceiling), q its estimate of the key's
	// quota. It is called with the control's lock held before every
	// request, so it must not block: a shared implementation refreshes its
	// view in the background.
	Allowed(now time.Time, want float64, q QuotaEstimate) float64
}

// QuotaEstimate is what one process has measured of the key's quota.
type QuotaEstimate struct {
	Rate  float64 // requests/s; 0: not measured yet
	Burst float64 // at least 1
	// Measured is when Rate was last measured (at the end of a 429's
	// pause); zero when never.
	Measured time.Time
}

// SetRateShare makes s decide the rate this client sends at (see
// RateShare); nil goes back to the client's own estimate. Set it before
// the first request.
func (c *Client) SetRateShare(s RateShare) {
	c.control.mu.Lock()
	defer c.control.mu.Unlock()
	c.control.share = s
}

// QuotaSharer shares one key's quota between processes (see rateControl,
// "One quota, several processes"). Its methods are called with the
// control's lock held, so none may block: it reads and writes the shared
// state in the background.
type QuotaSharer interface {
	// View is the shared state as last read.
	View() SharedQuota
	// Publish hands over the leader's new estimate (Measured zero: a
	// guess, not yet measured), with when its hold ends and its length.
	Publish(q QuotaEstimate, probeAt time.Time, hold time.Duration)
	// Paused announces a 429 of this process: every process pauses for d.
	Paused(d time.Duration)
}

// SetQuotaSharer makes this client share its key's quota through s. Set
// it before the first request.
func (c *Client) SetQuotaSharer(s QuotaSharer) {
	c.control.mu.Lock()
	defer c.control.mu.Unlock()
	c.control.sharer = s
}

// SharedQuota is the view of a key's quota shared by the processes.
type SharedQuota struct {
	// Version changes each time an estimate is published; 0: none yet.
	Version int64
	Rate    float64 // requests/s for the whole key
	Burst   float64
	ProbeAt time.Time // when the hold of the estimate ends, on this clock
	Hold    time.Duration
	// Processes is how many live processes share the key (at least 1);
	// Share this one's part of the quota (its weight over their total);
	// Leader whether this one leads.
	Processes int
	Share     float64
	Leader    bool
	Measured  bool // Rate was measured, not guessed
}

// PauseShared pauses every worker of this client for d from now, as a 429
// of another process sharing the key did (QuotaSharer.Paused); the rate
// is re-estimated when the pause ends, as after a 429 of its own.
func (c *Client) PauseShared(d time.Duration) {
	c.control.mu.Lock()
	defer c.control.mu.Unlock()
	c.control.throttledAt(c.control.now(), d)
}

// throttleEvent is a 429 as the controller reacts to it.
type throttleEvent struct {
	at      time.Time
	rate    float64 // the bucket's rate when it came (0: no bucket)
	probing bool    // the rate was above the estimate (or there was none)
}

// Tuning of rateControl; see its doc comment.
const (
	rateFloor       = 0.5                 // requests per second: the lowest rate the control sets
	settleFraction  = 0.995               // of the estimate
	dropCap         = 0.85                // of the rate an unexpected 429 came at, unmeasured
	slightCap       = 0.99                // of the rate an unexpected 429 came at, measured
	maxRate         = 1e6                 // requests per second: a probe without a ceiling stops here
	probeGrowth     = 0.22314355131420976 // ln(1.25): +25% per second
	discoveryGrowth = 1.0986122886681098  // ln(3): x3 per second, before any estimate without a ceiling
	holdMin         = 60 * time.Second
	holdMax         = 120 * time.Second
	// holdAfterDrop is the hold for dropWatch after a drop: the quota may
	// come back, and a probe straight to the rate before the drop costs
	// only a pause at the low rate (about R - B requests of quota).
	holdAfterDrop = 5 * time.Second
	dropWatch     = 60 * time.Second
	// returnConfirm is how long a probe after a drop runs at the rate
	// before the drop, without a 429, to show the quota came back.
	returnConfirm   = time.Second
	sameQuota       = 0.05 // relative change of the estimate still "the same quota"
	estimateHorizon = 10 * time.Second
	// minWindow is the shortest window the rate is measured over: shorter,
	// answers read together and an uncertain burst weigh too much.
	minWindow = 250 * time.Millisecond
	// estimateLift places the estimate inside the interval the 429 leaves
	// R in: [(n - B)/w, (n - B + 1)/w) for the window since the upstream
	// bucket was last full (it was empty at the 429, with less than a token).
	estimateLift = 0.5
	// burstSlack: B is a whole number of tokens at least the bound
	// n - R*w, which the few milliseconds between the first answers of a
	// burst lower by R*w (a third of a token at 7 ms and 50/s): the bound
	// is rounded up, less this slack for an estimate of R a little low.
	burstSlack = 0.25
	// burstSpan is the longest window the burst is measured over.
	burstSpan = 250 * time.Millisecond
	// minExcess is the fewest successes beyond the burst a window needs
	// for its bound (n - B)/w to be within 1/minExcess of R.
	minExcess = 10
)

func newRateControl(ceiling float64, burst int) *rateControl {
	rc := &rateControl{now: time.Now, ceiling: ceiling, burst: 1, hold: holdMin, holdBase: holdMin, scale: 1}
	if ceiling > 0 {
		rc.configBurst = max(burst, 1)
		rc.burst = float64(rc.configBurst)
		rc.limiter = rate.NewLimiter(rate.Limit(ceiling), rc.bucketBurst())
	}
	return rc
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
func (rc *rateControl) bucketBurst() int {
	b := int(rc.burst + 1e-9)
	if rc.ceiling > 0 && b == rc.configBurst {
		return max(1, b-jitterMargin(b))
	}
	return max(1, b/2)
}

// current is our bucket's rate (0: no bucket).
func (rc *rateControl) current() float64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.currentLocked()
}

func (rc *rateControl) currentLocked() float64 {
	if rc.limiter == nil {
		return 0
	}
	return float64(rc.limiter.Limit())
}

// keyRate is the rate the key is sent at, as this process's control sees
// it: our bucket's, plus the followers' when leading (0: no bucket).
func (rc *rateControl) keyRate() float64 {
	cur := rc.currentLocked()
	if cur > 0 && rc.sharer != nil && rc.scale > 1 {
		cur += rc.others()
	}
	return cur
}

// others is the rate the followers send at, all together, as the leader
// sees it.
func (rc *rateControl) others() float64 {
	if rc.sharer == nil || rc.scale <= 1 || rc.known == 0 {
		return 0
	}
	return (rc.scale - 1) * rc.base / rc.scale
}

// processBurst is our bucket's burst: this process's part of bucketBurst.
func (rc *rateControl) processBurst() int {
	return max(1, int(float64(rc.bucketBurst())/rc.scale))
}

// wait blocks until the shared pause is over and a token is available.
func (rc *rateControl) wait(ctx context.Context) error {
	for {
		d := rc.step(rc.now())
		if d <= 0 {
			return nil
		}
		if err := sleepCtx(ctx, d); err != nil {
			return err
		}
	}
}

// step is one turn of wait at now: 0 when the request may leave (its token
// taken), else how long to wait before asking again. A token is taken only
// at the moment a request leaves, never reserved ahead: with reservations,
// workers queued at a low rate keep their places when the rate rises, and
// those that come later are let through at once, together, in a burst that
// empties the upstream's bucket; and a worker holding a reservation when a
// 429 comes would have to give it up. Each waiting worker instead wakes
// when the next token is due and takes it if no other worker did first.
func (rc *rateControl) step(now time.Time) time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if now.Before(rc.until) {
		return rc.until.Sub(now)
	}
	rc.adjust(now)
	if rc.limiter == nil || rc.limiter.AllowN(now, 1) {
		return 0
	}
	tok := rc.limiter.TokensAt(now)
	return max(time.Duration((1-tok)/float64(rc.limiter.Limit())*float64(time.Second)), time.Microsecond)
}

// paused reports whether a 429's pause is in force.
func (rc *rateControl) paused() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.now().Before(rc.until)
}

// throttled records a 429: every worker pauses for d; the rate is adjusted
// when the pause ends.
func (rc *rateControl) throttled(d time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.throttledAt(rc.now(), d) {
		if rc.sharer != nil {
			rc.sharer.Paused(d)
		}
	}
}

// throttledAt records a pause of d from now; it reports whether it starts
// a new 429 event (no pause was in force).
func (rc *rateControl) throttledAt(now time.Time, d time.Duration) bool {
	inPause := now.Before(rc.until)
	if until := now.Add(d); until.After(rc.until) {
		rc.until = until
	}
	if inPause {
		return false // a request in flight when the pause began
	}
	cur := rc.keyRate()
	rc.pending = &throttleEvent{at: now, rate: cur, probing: rc.known == 0 || cur > rc.known}
	return true
}

// success records a successful attempt, for the estimates.
func (rc *rateControl) success() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hist.add(rc.now())
}

// adjust applies a 429 whose pause has ended, then sets the bucket's rate
// for now (held or probing); rc.mu is held.
func (rc *rateControl) adjust(now time.Time) {
	if rc.sharer != nil {
		v := rc.sharer.View()
		n := 1.0
		if v.Processes > 1 {
			n = 1 / max(v.Share, 1e-3)
		}
		if math.Abs(n-rc.scale) > 0.01*rc.scale || v.Leader != rc.leader {
			// The followers' rate changes: the leader's windows start now.
			rc.scale, rc.leader, rc.regime = n, v.Leader, now
		}
		if v.Version != rc.sharedVersion {
			rc.sharedVersion = v.Version
			if !rc.leader || rc.known == 0 {
				rc.adopt(now, v)
			}
		}
	}
	if rc.pending != nil && !now.Before(rc.until) {
		e := *rc.pending
		rc.pending = nil
		if rc.sharer != nil && !rc.leader && rc.known > 0 {
			// A follower: the leader measures; the bucket starts empty.
			rc.lastPause, rc.regime = now, now
			if rc.limiter != nil {
				if tok := rc.limiter.TokensAt(now); tok >= 1 {
					rc.limiter.AllowN(now, int(tok))
				}
			}
		} else {
			measured := rc.react(now, e)
			if rc.sharer != nil && rc.leader {
				q := QuotaEstimate{Rate: rc.known, Burst: rc.burst}
				if measured || rc.knownMeasured {
					q.Measured = now
				}
				rc.sharer.Publish(q, rc.holdEnd, rc.hold)
			}
		}
	}
	rc.cameBack(now)
	r := rc.target(now)
	if rc.sharer != nil && rc.scale > 1 {
		switch {
		case rc.known == 0:
			r /= rc.scale // the ceiling is the key's (+Inf stays)
		case rc.leader:
			r -= rc.others()
		default:
			r = rc.base / rc.scale
		}
	}
	if rc.share != nil {
		r = rc.share.Allowed(now, r, QuotaEstimate{Rate: rc.known, Burst: rc.burst, Measured: rc.measuredAt()})
	}
	if math.IsInf(r, 1) || math.IsNaN(r) {
		if rc.limiter == nil {
			return
		}
		r = maxRate
	}
	r = min(max(r, rateFloor), maxRate)
	if rc.limiter == nil {
		rc.limiter = rate.NewLimiter(rate.Limit(r), rc.processBurst())
		return
	}
	if math.Abs(r-float64(rc.limiter.Limit())) > 1e-9 {
		rc.limiter.SetLimitAt(now, rate.Limit(r))
	}
	if b := rc.processBurst(); b != rc.limiter.Burst() {
		rc.limiter.SetBurstAt(now, b)
	}
}

// adopt takes the estimate another process published: its rate, burst and
// hold, so that the processes probe together.
func (rc *rateControl) adopt(now time.Time, v SharedQuota) {
	if v.Rate <= 0 {
		return
	}
	rc.known, rc.knownMeasured = v.Rate, v.Measured
	rc.measured = rc.measured || v.Measured
	if v.Burst > rc.burst {
		rc.burst = v.Burst
	}
	rc.base = max(min(rc.ceilingOrMax(), rc.known*settleFraction), rateFloor)
	rc.hold, rc.holdEnd = v.Hold, v.ProbeAt
	if rc.lastPause.IsZero() {
		rc.lastPause = now
	}
	if rc.limiter == nil {
		// Our bucket starts now, empty: the others are sending.
		rc.limiter = rate.NewLimiter(rate.Limit(rc.base/rc.scale), rc.processBurst())
		rc.limiter.AllowN(now, rc.limiter.Burst())
	}
}

// measuredAt is when the estimate was last measured (zero: never).
func (rc *rateControl) measuredAt() time.Time {
	if !rc.measured {
		return time.Time{}
	}
	return rc.lastPause
}

// react re-estimates the quota after the 429 e, at now (its pause over),
// and settles under it; it reports whether it measured.
func (rc *rateControl) react(now time.Time, e throttleEvent) bool {
	since := e.at.Add(-estimateHorizon)
	if !e.probing && rc.lastPause.After(since) {
		// The quota dropped, maybe moments ago: windows reaching back
		// before the last pause would measure the old one.
		since = rc.lastPause
	}
	burstSince := since
	if rc.dropped.After(burstSince) {
		burstSince = rc.dropped
	}
	if rc.regime.After(since) {
		since = rc.regime // nor, on a probe, before the last drop
	}
	rateSince := since
	if rc.sharer != nil && rc.scale > 1 && rc.lastPause.After(since) {
		rateSince = rc.lastPause // the followers were steady since then
	}
	rc.lastPause = now
	if !e.probing {
		rc.regime, rc.dropped = now, now
	}
	est, burst, ok := rc.measure(e.at, now, rateSince, burstSince, e.probing)
	if ok {
		rc.measured = true
		if burst > rc.burst {
			rc.burst = burst
			if rc.limiter != nil {
				rc.limiter.SetBurstAt(now, rc.processBurst())
			}
		}
	} else if e.rate > 0 {
		// Too few successes to measure (the 429 came right after a burst):
		// halve, and probe at once to measure on the way up.
		est = e.rate / 2
	} else {
		// No bucket yet: start from what the upstream admitted in the
		// second before the 429.
		est = float64(rc.hist.count(e.at.Add(-time.Second), now)) * rc.scale
	}
	if !e.probing {
		// Measured, the windows since the last pause (or over the last
		// 10 s) bound R from below, unless the quota dropped within them:
		// then the next 429 comes soon, and measures since this pause.
		// Guessed, the rate may still be far above R.
		if ok {
			est = min(est, e.rate*slightCap)
		} else {
			est = min(est, e.rate*dropCap)
		}
	}
	est = max(est, rateFloor)
	prev := rc.known
	if !e.probing && e.at.Sub(rc.unexpected) > estimateHorizon {
		rc.before, rc.unexpected = prev, e.at
	}
	switch {
	case !e.probing && est < (1-sameQuota)*prev:
		// The quota dropped: it may come back as suddenly, so the probes
		// come soon, and space out as they find the same quota.
		rc.holdBase = holdAfterDrop
		rc.high = max(rc.high, prev, rc.before)
	case e.probing && ok && rc.knownMeasured && est > (1+sameQuota)*prev:
		rc.holdBase = holdMin // it rose
		if est >= (1-sameQuota)*rc.high {
			rc.high = 0
		}
	}
	switch {
	case !ok:
		rc.hold = 0
	case e.probing && prev > 0 && math.Abs(est-prev) <= sameQuota*prev:
		if rc.holdBase == holdAfterDrop && now.Sub(rc.dropped) >= dropWatch {
			// Still the same quota a while after the drop: it is the
			// quota now, probed as rarely as any other.
			rc.holdBase, rc.high = holdMin, 0
		}
		if rc.holdBase == holdAfterDrop {
			// A quota that dropped may come back: probe every few
			// seconds (a pause each, a few % of a low quota) rather
			// than find it a minute late.
			rc.hold = holdAfterDrop
		} else {
			rc.hold = min(2*max(rc.hold, rc.holdBase), holdMax)
		}
	default:
		rc.hold = rc.holdBase
	}
	rc.knownMeasured = ok
	rc.known = est
	rc.base = max(min(rc.ceilingOrMax(), est*settleFraction), rateFloor)
	rc.holdEnd = now.Add(rc.hold)
	if rc.limiter == nil {
		// Our bucket starts now, empty (below).
		rc.limiter = rate.NewLimiter(rate.Limit(rc.base/rc.scale), rc.processBurst())
	}
	if !ok || !e.probing {
		// The new rate may still be above R. The upstream bucket refilled
		// during the pause, and ours did too: sending our burst at once
		// would empty theirs, and the next request above R would meet a 429
		// before anything could be measured. Starting from an empty bucket
		// keeps their B tokens as the margin, and the next 429 measures R.
		if tok := rc.limiter.TokensAt(now); tok >= 1 {
			rc.limiter.AllowN(now, int(tok))
		}
	}
	return ok
}

// measure estimates the upstream's rate and burst from the successes in
// [since, upto], with the 429 at at: the rate for the burst estimate
// (successRing.estimate), then the burst for that rate (successRing.burst),
// until the burst stops growing. It starts from the burst estimated so far,
// so the estimate of B only grows, and only on a probe: after a drop of the
// quota, the rate is capped (react) and what the successes say of the
// burst is unsure. ok is false when no window holds enough successes to
// measure.
func (rc *rateControl) measure(at, upto, since, burstSince time.Time, probing bool) (est, burst float64, ok bool) {
	burst = rc.burst
	others := rc.others()
	for range 8 {
		r, rok := rc.hist.estimate(at, upto, since, burst)
		if !rok {
			return est, burst, ok
		}
		est, ok = r+others, true
		if !probing {
			return est, burst, ok
		}
		// Leading other processes, n - R*w over this one's successes is
		// still a lower bound of B.
		b := rc.hist.burstAt(est, burstSince, upto)
		if b < burst+burstSlack {
			return est, burst, ok
		}
		burst = math.Ceil(b - burstSlack)
	}
	return est, burst, ok
}

func (rc *rateControl) ceilingOrMax() float64 {
	if rc.ceiling > 0 {
		return rc.ceiling
	}
	return maxRate
}

// target is the bucket's rate at now: the ceiling (or none, +Inf) until a
// 429 is seen, then the settled rate during the hold, then a probe growing
// exponentially.
func (rc *rateControl) target(now time.Time) float64 {
	if rc.known == 0 {
		if rc.ceiling == 0 {
			return math.Inf(1)
		}
		return rc.ceiling
	}
	if now.Before(rc.holdEnd) {
		return rc.base
	}
	if rc.jumping(now) {
		return min(rc.ceilingOrMax(), rc.high*settleFraction)
	}
	g := probeGrowth
	if rc.ceiling == 0 && !rc.measured {
		g = discoveryGrowth
	}
	s := now.Sub(rc.holdEnd).Seconds()
	return min(rc.ceilingOrMax(), rc.base*math.Exp(g*s))
}

// jumping reports whether the probe at now is one after a drop: straight
// to the estimate before it, and flat there, rather than a ramp.
func (rc *rateControl) jumping(now time.Time) bool {
	return rc.high > rc.base && rc.knownMeasured && rc.hold > 0 && !now.Before(rc.holdEnd)
}

// cameBack ends a probe after a drop that has run for returnConfirm
// without a 429 at the estimate before the drop, with the successes to
// show it (at least 90% of that rate, which the low quota could not
// admit): the quota came back, and the run holds at it without the pause
// a 429 would cost to measure it. A higher quota is left to the next
// probe.
func (rc *rateControl) cameBack(now time.Time) {
	if rc.pending != nil || !rc.jumping(now) {
		return
	}
	// Leading other processes, their part is sent at the rate they were
	// given (others) and only this one's successes are seen.
	w := now.Sub(rc.holdEnd)
	if w < returnConfirm || float64(rc.hist.count(rc.holdEnd, now))+rc.others()*w.Seconds() < 0.9*rc.high*w.Seconds() {
		return
	}
	rc.known, rc.high = rc.high, 0
	rc.base = max(min(rc.ceilingOrMax(), rc.known*settleFraction), rateFloor)
	rc.holdBase, rc.hold = holdMin, holdMin
	rc.holdEnd, rc.regime = now.Add(rc.hold), now
	if rc.sharer != nil && rc.leader {
		rc.sharer.Publish(QuotaEstimate{Rate: rc.known, Burst: rc.burst, Measured: now}, rc.holdEnd, rc.hold)
	}
}

// successRing holds the times of the latest successes.
type successRing struct {
	t [2048]int64 // unix nanoseconds
	n int         // successes recorded so far
}

func (r *successRing) add(t time.Time) {
	r.t[r.n%len(r.t)] = t.UnixNano()
	r.n++
}

// estimate is the largest lower bound (n - burst)/(at - s) of the upstream's
// rate over the windows starting at a success s in [since, at), where n
// counts the successes from s up to upto (answers to requests sent before
// the 429 may come after it). Only windows with at least minExcess
// successes beyond the burst count: their bound is within 1/(n - burst) of
// R, and long enough for the timing of the answers not to matter. ok is
// false without one.
func (r *successRing) estimate(at, upto, since time.Time, burst float64) (est float64, ok bool) {
	atNs, uptoNs, from := at.UnixNano(), upto.UnixNano(), since.UnixNano()
	kept := min(r.n, len(r.t))
	n := 0
	for i := 1; i <= kept; i++ {
		s := r.t[(r.n-i)%len(r.t)]
		if s > uptoNs {
			continue
		}
		if s < from {
			break
		}
		n++
		w := time.Duration(atNs - s)
		if w < minWindow {
			continue
		}
		if float64(n)-burst < minExcess {
			continue
		}
		if l := (float64(n) - burst + estimateLift) / w.Seconds(); l > est {
			est, ok = l, true
		}
	}
	return est, ok
}

// count is the number of successes in [from, to].
func (r *successRing) count(from, to time.Time) int {
	fromNs, toNs := from.UnixNano(), to.UnixNano()
	kept := min(r.n, len(r.t))
	n := 0
	for i := 1; i <= kept; i++ {
		s := r.t[(r.n-i)%len(r.t)]
		if s < fromNs {
			break
		}
		if s <= toNs {
			n++
		}
	}
	return n
}

// burstAt is the largest lower bound n - rate*(t_j - t_i) of the upstream's
// burst over the windows [t_i, t_j] of successes in [since, upto] no longer
// than burstSpan (n of them in the window): in any window a bucket of that
// rate admits at most its burst plus rate times the window. Only short
// windows count, where the burst is seen (a full bucket emptied at once):
// over a long one, a rate a little under the true one would add the
// difference times the window, and successes from before a drop of the
// quota would count at the new, lower rate.
func (r *successRing) burstAt(rate float64, since, upto time.Time) float64 {
	from, uptoNs := since.UnixNano(), upto.UnixNano()
	kept := min(r.n, len(r.t))
	best := 0.0
	for j := 1; j <= kept; j++ {
		tj := r.t[(r.n-j)%len(r.t)]
		if tj > uptoNs {
			continue
		}
		if tj < from {
			break
		}
		// Windows ending at t_j, from older successes back to burstSpan.
		for i := j; i <= kept; i++ {
			ti := r.t[(r.n-i)%len(r.t)]
			w := time.Duration(tj - ti)
			if ti < from || w > burstSpan {
				break
			}
			best = max(best, float64(i-j+1)-rate*w.Seconds())
		}
	}
	return best
}
