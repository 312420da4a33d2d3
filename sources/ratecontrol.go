package sources

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateControl is the per-key gate every attempt passes: a pause shared by all
// workers after a 429, then a token bucket (api.rate, api.burst) whose rate
// adapts to the upstream's quota.
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
//   - Start at the ceiling (api.rate). With the quota configured exactly
//     (api.rate = R, api.burst = B) no 429 happens: our bucket never sends
//     more than theirs admits, and it holds a fifth of B (at least 1) less
//     than B, so that requests delayed on their way and arriving together
//     still find tokens upstream (see jitterMargin).
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
//     10 successes beyond B (so it is within 10% of R, in practice 1-2%). B
//     is taken to be api.burst: a smaller api.burst overestimates R, and the
//     next 429 corrects it.
//   - Settle at 99.5% of the estimate (never above the ceiling) and hold.
//   - Without enough successes to measure (the 429 came right after a
//     burst, e.g. at the start with a ceiling far above R), halve the rate
//     and probe at once, to measure on the way up.
//   - A 429 that comes while at or under the estimate (not probing) means the
//     quota dropped: the estimate then only counts windows since the last
//     pause and is capped at 85% of the rate the 429 came at; and since that
//     rate may still be above R, our bucket starts the next period empty,
//     leaving the upstream's B tokens as the margin that lets the next 429
//     come late enough to measure R. A drop is followed within two or three
//     429s, each costing a pause at the lower rate.
//   - After the hold, probe: the rate grows by 25% per second (time-based,
//     not per request, so the speed of discovery does not depend on the
//     number of workers) up to the ceiling, so a raised quota is found within
//     seconds once the probe starts. The next 429 ends the probe and
//     measures R again.
//   - The hold starts at 15 s and doubles, up to 2 minutes, each time a probe
//     finds the same quota (within 5%); it goes back to 15 s when the
//     estimate moved. In a steady quota, probing then costs about 0.7% of it
//     (one pause every 2 minutes) and a quota raised mid-run is found within
//     the hold: that is the trade-off, since only a 429 says where R is.
//
// Without a ceiling (api.rate 0) there is no bucket: a 429 only pauses.
type rateControl struct {
	mu      sync.Mutex
	until   time.Time // no request leaves before this instant
	ceiling float64   // 0: no bucket
	burst   int
	limiter *rate.Limiter

	// pending is the 429 event waiting for its pause to end.
	pending *throttleEvent
	// known is the latest estimate of the upstream's quota (0: no 429 seen
	// yet, the rate stays at the ceiling).
	known   float64
	base    float64       // the rate settled at after the last 429
	hold    time.Duration // how long base is held before probing
	holdEnd time.Time
	// lastPause is when the last reacted-to pause ended: the upstream
	// bucket was full again then.
	lastPause time.Time
	hist      successRing
}

// throttleEvent is a 429 as the controller reacts to it.
type throttleEvent struct {
	at      time.Time
	rate    float64 // the bucket's rate when it came
	probing bool    // the rate was above the estimate (or there was none)
}

// Tuning of rateControl; see its doc comment.
const (
	rateFloor       = 0.5                 // requests per second: the lowest rate the control sets
	settleFraction  = 0.995               // of the estimate
	dropCap         = 0.85                // of the rate an unexpected 429 came at
	probeGrowth     = 0.22314355131420976 // ln(1.25): +25% per second
	holdMin         = 15 * time.Second
	holdMax         = 120 * time.Second
	sameQuota       = 0.05 // relative change of the estimate still "the same quota"
	estimateHorizon = 10 * time.Second
	minWindow       = 20 * time.Millisecond
	// minExcess is the fewest successes beyond the burst a window needs
	// for its bound (n - B)/w to be within 1/minExcess of R.
	minExcess = 10
)

func newRateControl(ceiling float64, burst int) *rateControl {
	rc := &rateControl{ceiling: ceiling, burst: max(burst, 1), hold: holdMin}
	if ceiling > 0 {
		rc.limiter = rate.NewLimiter(rate.Limit(ceiling), max(1, rc.burst-jitterMargin(rc.burst)))
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

func (rc *rateControl) current() float64 {
	if rc.limiter == nil {
		return 0
	}
	return float64(rc.limiter.Limit())
}

// wait blocks until the shared pause is over and a token is available.
func (rc *rateControl) wait(ctx context.Context) error {
	for {
		rc.mu.Lock()
		now := time.Now()
		d := rc.until.Sub(now)
		if d <= 0 {
			rc.adjust(now)
		}
		rc.mu.Unlock()
		if d > 0 {
			if err := sleepCtx(ctx, d); err != nil {
				return err
			}
			continue
		}
		if rc.limiter == nil {
			return nil
		}
		if err := rc.limiter.Wait(ctx); err != nil {
			return err
		}
		rc.mu.Lock()
		paused := time.Now().Before(rc.until)
		rc.mu.Unlock()
		if !paused {
			return nil
		}
		// A 429 came while this worker waited for its token: the token is
		// spent; wait for the pause and take a fresh one, so that the
		// requests leaving when the pause ends stay within the burst.
	}
}

// paused reports whether a 429's pause is in force.
func (rc *rateControl) paused() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return time.Now().Before(rc.until)
}

// throttled records a 429: every worker pauses for d; the rate is adjusted
// when the pause ends.
func (rc *rateControl) throttled(d time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.throttledAt(time.Now(), d)
}

func (rc *rateControl) throttledAt(now time.Time, d time.Duration) {
	inPause := now.Before(rc.until)
	if until := now.Add(d); until.After(rc.until) {
		rc.until = until
	}
	if rc.limiter == nil || inPause {
		return // no bucket, or a request in flight when the pause began
	}
	cur := float64(rc.limiter.Limit())
	rc.pending = &throttleEvent{at: now, rate: cur, probing: rc.known == 0 || cur > rc.known}
}

// success records a successful attempt, for the quota estimate.
func (rc *rateControl) success() {
	if rc.limiter == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hist.add(time.Now())
}

// adjust applies a 429 whose pause has ended, then sets the bucket's rate
// for now (held or probing); rc.mu is held.
func (rc *rateControl) adjust(now time.Time) {
	if rc.limiter == nil {
		return
	}
	if rc.pending != nil && !now.Before(rc.until) {
		rc.react(now, *rc.pending)
		rc.pending = nil
	}
	if r := rc.target(now); math.Abs(r-float64(rc.limiter.Limit())) > 1e-9 {
		rc.limiter.SetLimitAt(now, rate.Limit(r))
	}
}

// react re-estimates the quota after the 429 e, at now (its pause over),
// and settles under it.
func (rc *rateControl) react(now time.Time, e throttleEvent) {
	since := e.at.Add(-estimateHorizon)
	if !e.probing && rc.lastPause.After(since) {
		// The quota dropped, maybe moments ago: windows reaching back
		// before the last pause would measure the old one.
		since = rc.lastPause
	}
	rc.lastPause = now
	est, ok := rc.hist.estimate(e.at, now, since, float64(rc.burst))
	if !ok {
		// Too few successes to measure (the 429 came right after a burst):
		// halve, and probe at once to measure on the way up.
		est = e.rate / 2
	}
	if !e.probing {
		est = min(est, e.rate*dropCap)
	}
	est = max(est, rateFloor)
	prev := rc.known
	switch {
	case !ok:
		rc.hold = 0
	case e.probing && prev > 0 && math.Abs(est-prev) <= sameQuota*prev:
		rc.hold = min(2*max(rc.hold, holdMin), holdMax)
	default:
		rc.hold = holdMin
	}
	rc.known = est
	rc.base = max(min(rc.ceiling, est*settleFraction), rateFloor)
	rc.holdEnd = now.Add(rc.hold)
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
}

// target is the bucket's rate at now: the ceiling until a 429 is seen, then
// the settled rate during the hold, then a probe growing exponentially.
func (rc *rateControl) target(now time.Time) float64 {
	if rc.known == 0 {
		return rc.ceiling
	}
	if now.Before(rc.holdEnd) {
		return rc.base
	}
	s := now.Sub(rc.holdEnd).Seconds()
	return min(rc.ceiling, rc.base*math.Exp(probeGrowth*s))
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
		if l := (float64(n) - burst) / w.Seconds(); l > est {
			est, ok = l, true
		}
	}
	return est, ok
}
