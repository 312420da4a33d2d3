package ratecontrol

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// adjust applies a 429 whose pause has ended, then sets the bucket's rate
// for now (held or probing); rc.mu is held.
func (rc *Controller) adjust(now time.Time) {
	rc.readShare(now)
	rc.endPause(now)
	rc.cameBack(now)
	rc.setRate(now, rc.processRate(rc.target(now)))
}

// endPause reacts to the pending 429 once its pause is over: a follower
// only empties its bucket (the leader measures), any other re-estimates.
func (rc *Controller) endPause(now time.Time) {
	if rc.pending == nil || now.Before(rc.until) {
		return
	}
	e := *rc.pending
	if now.Before(e.at.Add(e.lag)) || (rc.lags.n == 0 && e.sent > 0 && now.Before(e.at.Add(maxLag))) {
		// Answers take longer than the pause: the successes of the
		// requests sent before the 429 are not all in. Until they are,
		// half the rate it came at, from an empty bucket.
		rc.waitAnswers(now, e)
		return
	}
	rc.pending, rc.interim = nil, 0
	if rc.following() {
		rc.marks.lastPause, rc.marks.regime = now, now
		if rc.limiter != nil {
			rc.emptyBucket(now)
		}
		return
	}
	if e.drop && rc.shareMoved(e) {
		// The shares moved, not the quota: the estimate stands, and the
		// rate resumes from an empty bucket, the upstream's full.
		rc.marks.lastPause = now
		if rc.until.Before(now) {
			rc.marks.lastPause = rc.until
		}
		if rc.limiter != nil {
			rc.emptyBucket(now)
		}
		return
	}
	measured := rc.react(now, e)
	rc.publish(now, measured || rc.quota.measured)
}

// waitAnswers holds the key at an interim rate, from the end of the 429
// e's pause until the answers to the requests sent before it are in (or
// the first answer, when none came yet): the rate held before a probe
// that met the 429 (or, from the first read, a cut of what left before
// the 429 if higher), a cut of the rate an unexpected one came at, or,
// with no estimate yet, half the rate requests were let through just
// before it.
func (rc *Controller) waitAnswers(now time.Time, e throttleEvent) {
	if rc.interim > 0 {
		return
	}
	switch {
	case rc.quota.measured && e.probing && rc.hold.loose:
		// A probe from the first read, which may be a loose lower bound
		// (46/s for 100/s at 20 s answers): what left in the second
		// before the 429, cut as an unexpected 429 cuts, if higher. Back
		// at the read for the answer time the reaction waits, the run
		// spent 27 s at 0.46 of the quota.
		rc.interim = max(rc.hold.base, e.sent*rc.share.scale*dropCap)
	case rc.quota.measured && e.probing:
		rc.interim = rc.hold.base // the probe found the quota: back to under it
	case rc.quota.measured:
		rc.interim = e.rate * dropCap
	default:
		r := e.sent
		if e.rate > 0 {
			r = min(r, e.rate)
		}
		rc.interim = r * rc.share.scale / 2
	}
	rc.interim = max(rc.interim, rateFloor)
	if rc.limiter == nil {
		rc.limiter = newBucket(rate.Limit(rc.interim/rc.share.scale), rc.processBurst())
	}
	rc.emptyBucket(now)
}

// emptyBucket takes every whole token left in our bucket at now.
func (rc *Controller) emptyBucket(now time.Time) {
	if tok := rc.limiter.TokensAt(now); tok >= 1 {
		rc.limiter.AllowN(now, int(tok))
	}
}

// setRate sets our bucket to r requests/s at now, within [rateFloor,
// maxRate], creating it if needed; +Inf with no bucket leaves none.
func (rc *Controller) setRate(now time.Time, r float64) {
	if math.IsInf(r, 1) || math.IsNaN(r) {
		if rc.limiter == nil {
			return
		}
		r = maxRate
	}
	r = min(max(r, rateFloor), maxRate)
	if rc.limiter == nil {
		rc.limiter = newBucket(rate.Limit(r), rc.processBurst())
		return
	}
	if math.Abs(r-float64(rc.limiter.Limit())) > 1e-9 {
		rc.limiter.SetLimitAt(now, rate.Limit(r))
	}
	if b := rc.processBurst(); b != rc.limiter.Burst() {
		rc.limiter.SetBurstAt(now, b)
	}
}

func (rc *Controller) ceilingOrMax() float64 {
	if rc.limits.ceiling > 0 {
		return rc.limits.ceiling
	}
	return maxRate
}

// settled is the rate held under the estimate est.
func (rc *Controller) settled(est float64) float64 {
	return max(min(rc.ceilingOrMax(), est*settleFraction), rateFloor)
}

// target is the key's rate at now: the ceiling (or none, +Inf) until a
// 429 is seen, then the settled rate during the hold, then a probe growing
// exponentially.
func (rc *Controller) target(now time.Time) float64 {
	if rc.interim > 0 {
		return rc.interim
	}
	if rc.quota.rate == 0 {
		if rc.limits.ceiling == 0 {
			return math.Inf(1)
		}
		return rc.limits.ceiling
	}
	if now.Before(rc.hold.end) {
		return rc.hold.base
	}
	if rc.jumping(now) {
		return min(rc.ceilingOrMax(), rc.drop.high*settleFraction)
	}
	// Never more than probeLead times what left in the last second: requests held
	// back by something else (how many may be in flight) would pile up
	// behind a pause and leave together, a burst the upstream's bucket
	// refuses well under its rate.
	sent := float64(rc.sends.count(now.Add(-time.Second), now)) * rc.share.scale
	return min(rc.probeRate(now), max(probeLead*sent, rc.hold.base))
}

// probeRate is the key's rate on a probe at now, growing from the hold's
// end, before the bound to what left in the last second.
func (rc *Controller) probeRate(now time.Time) float64 {
	g := probeGrowth
	if rc.limits.ceiling == 0 && !rc.quota.everMeasured {
		g = discoveryGrowth
	} else if rc.shared() {
		g = sharedProbeGrowth
	}
	s := now.Sub(rc.hold.end).Seconds()
	return min(rc.ceilingOrMax(), rc.hold.base*math.Exp(g*s))
}

// jumping reports whether the probe at now is one after a drop: straight
// to the estimate before it, and flat there, rather than a ramp.
func (rc *Controller) jumping(now time.Time) bool {
	return rc.drop.high > rc.hold.base && rc.quota.measured && rc.hold.length > 0 && !now.Before(rc.hold.end)
}

// cameBack ends a probe after a drop that has run for returnConfirm
// without a 429 at the estimate before the drop, with the successes to
// show it (at least 90% of that rate, which the low quota could not
// admit): the quota came back, and the run holds at it without the pause
// a 429 would cost to measure it. A higher quota is left to the next
// probe.
func (rc *Controller) cameBack(now time.Time) {
	if rc.pending != nil || !rc.jumping(now) {
		return
	}
	// Leading other processes, their part is sent at the rate they were
	// given (others) and only this one's successes are seen.
	// Successes count at their send times: the latest answers are not in.
	seen := now.Add(-rc.lags.max())
	w := seen.Sub(rc.hold.end)
	if w < returnConfirm {
		return
	}
	// More than the quota after the drop admits too (its rate and burst):
	// with the estimate before the drop a few percent above it (an
	// overestimate, from a 429 of bunched requests), 90% of that one the
	// low quota admits, and every probe "found" it back, held a minute
	// and met 429s (0.82 of R·T+B at 40/s and 500 ms answers).
	admitted := float64(rc.hist.count(rc.hold.end, seen)) + rc.others()*w.Seconds()
	if admitted < 0.9*rc.drop.high*w.Seconds() || admitted <= rc.quota.rate*w.Seconds()+rc.quota.burst {
		return
	}
	rc.quota.rate, rc.drop.high = rc.drop.high, 0
	rc.hold.base = rc.settled(rc.quota.rate)
	rc.hold.first, rc.hold.length = holdMin, holdMin
	rc.hold.end, rc.marks.regime = now.Add(rc.hold.length), now
	rc.publish(now, true)
}
