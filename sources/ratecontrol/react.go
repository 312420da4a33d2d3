package ratecontrol

import (
	"context"
	"log/slog"
	"math"
	"time"

	"golang.org/x/time/rate"
)

// react re-estimates the quota after the 429 e, at now (its pause over),
// and settles under it; it reports whether it measured.
func (rc *Controller) react(now time.Time, e throttleEvent) bool {
	rateSince, burstSince := rc.windows(e)
	// The upstream's bucket was full again when the pause ended, which
	// may be a while ago when the reaction waited for answers: the marks
	// are there, on the clock of the send times.
	resumed := now
	if rc.until.Before(now) {
		resumed = rc.until
	}
	// The shares changed since the last pause: the windows start there
	// (readShare), with the upstream's bucket maybe drained by the change
	// (shareMoved), and bound R from below only loosely (47/s for 50,
	// held a minute): a probe's read then says no more than the estimate
	// it started from.
	loose := e.probing && rc.quota.measured && rc.share.changed.After(rc.marks.lastPause) && rc.share.changed.Before(e.at)
	rc.marks.lastPause = resumed
	if e.drop {
		rc.marks.regime, rc.marks.dropped = resumed, resumed
	}
	first := !rc.quota.everMeasured
	est, ok := rc.reestimate(now, e, rateSince, burstSince)
	prev := rc.quota.rate
	if loose && ok {
		est = max(est, prev)
	}
	rc.noteDrop(e, est, ok, prev)
	// A first read is held briefly as maybe loose, unless our bucket held
	// the requests back from the last pause to the 429: then the rate
	// crossed R from a full upstream bucket, and the read is tight (its
	// second probe found the same, for a pause: 40 requests of 50/s).
	first = first && !e.bound
	rc.hold.length = rc.nextHold(now, e, est, ok, prev, first)
	rc.hold.loose = first && ok
	rc.settle(now, e, est, ok)
	if rc.log.Enabled(context.Background(), slog.LevelDebug) {
		rc.log.Debug("rate control: reaction to a 429",
			"sent_ago", now.Sub(e.at).Round(time.Millisecond), "rate_at_429", round2(e.rate), "probing", e.probing, "drop", e.drop,
			"estimate", round2(est), "measured", ok, "burst", round2(rc.quota.burst), "base", round2(rc.hold.base),
			"hold", rc.hold.length, "loose", rc.hold.loose, "following", rc.following(), "scale", rc.share.scale)
	}
	return ok
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// windows is how far back the windows measuring the rate and the burst
// may reach for the 429 e: never before the marks of an earlier drop.
func (rc *Controller) windows(e throttleEvent) (rateSince, burstSince time.Time) {
	since := e.at.Add(-estimateHorizon)
	if e.drop && rc.marks.lastPause.After(since) {
		// The quota dropped, maybe moments ago: windows reaching back
		// before the last pause would measure the old one.
		since = rc.marks.lastPause
	}
	// Burst windows may reach back as far again as the answers took: a
	// full bucket emptied at once (the start, or after a pause) was sent
	// that long before its successes were known.
	burstSince = since.Add(-e.lag)
	if rc.marks.dropped.After(burstSince) {
		burstSince = rc.marks.dropped
	}
	if rc.marks.regime.After(since) {
		since = rc.marks.regime // nor, on a probe, before the last drop
	}
	rateSince = since
	if rc.shared() && rc.marks.lastPause.After(since) {
		rateSince = rc.marks.lastPause // the followers were steady since then
	}
	return rateSince, burstSince
}

// reestimate is the new estimate of the quota after the 429 e: measured
// from the successes in the windows when they suffice (ok), else guessed
// from the rate the 429 came at; it grows the burst estimate with it.
func (rc *Controller) reestimate(now time.Time, e throttleEvent, rateSince, burstSince time.Time) (est float64, ok bool) {
	// Successes count at their send times: those sent up to the 429.
	est, burst, env, ok := rc.measure(e.at, e.at, rateSince, burstSince, !e.drop)
	if ok {
		rc.quota.everMeasured = true
		rc.quota.windows.merge(&env)
		if burst != rc.quota.burst {
			rc.quota.burst = burst
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
		// second before the 429, and with it (sent until the 429 came
		// back): the start's requests leave together, but each at its
		// own instant, and up to the 429's the guess read 5/s for 15
		// admitted at once (workload 12), a ramp a second longer.
		est = float64(rc.hist.count(e.at.Add(-time.Second), e.seen)) * rc.share.scale
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
	return max(est, rateFloor), ok
}

// noteDrop remembers a drop of the quota from prev to est (the 429 e came
// while not probing), so that the probes come soon, or forgets it once a
// probe finds the quota back. A first read (hold.loose) that was too high
// is no drop: taken for one (110/s for 100/s at 3 s answers), the probes
// jumped back to it every 5-9 s for a minute, a pause each.
func (rc *Controller) noteDrop(e throttleEvent, est float64, ok bool, prev float64) {
	if e.drop && e.at.Sub(rc.drop.unexpected) > estimateHorizon {
		rc.drop.before, rc.drop.unexpected = prev, e.at
	}
	switch {
	case e.drop && est < (1-sameQuota)*prev && !rc.hold.loose:
		// The quota dropped: it may come back as suddenly, so the probes
		// come soon, and space out as they find the same quota.
		rc.hold.first = holdAfterDrop
		rc.drop.high = max(rc.drop.high, prev, rc.drop.before)
		// The windows kept bound B more at the lower rate than they did
		// at the one they were read at: keep only the burst read.
		rc.quota.windows = burstEnvelope{}
		rc.quota.windows.add(burstWindow{n: rc.quota.burst})
	case e.probing && ok && rc.quota.measured && est > (1+sameQuota)*prev:
		rc.hold.first = holdMin // it rose
		if est >= (1-sameQuota)*rc.drop.high {
			rc.drop.high = 0
		}
	}
}

// nextHold is how long the rate settled under est is held: none when
// guessed, briefly when it is the first measured (first), longer each
// time a probe finds the same quota, and hold.first when it moved.
func (rc *Controller) nextHold(now time.Time, e throttleEvent, est float64, ok bool, prev float64, first bool) time.Duration {
	switch {
	case !ok:
		return 0
	case e.probing && prev > 0 && math.Abs(est-prev) <= sameQuota*prev:
		if rc.hold.first == holdAfterDrop && now.Sub(rc.marks.dropped) >= dropWatch {
			// Still the same quota a while after the drop: it is the
			// quota now, probed as rarely as any other.
			rc.hold.first, rc.drop.high = holdMin, 0
		}
		if rc.hold.first == holdAfterDrop {
			// A quota that dropped may come back: probe every few
			// seconds (a pause each, a few % of a low quota) rather
			// than find it a minute late.
			return holdAfterDrop
		}
		return min(2*max(rc.hold.length, rc.hold.first), holdMax)
	case first:
		// The first estimate measured: the requests left as the client's
		// slow start let them, in bunches and under the rate maybe, and
		// the 429 may be a bunch's (with no bucket of ours yet) or a
		// probe's held back by the requests in flight. The windows then
		// bound the rate from below only loosely (22.7/s for 40/s at
		// 500 ms answers; 74/s for 100/s at 3 s answers, from a probe
		// after a guess), held a minute: probe again soon, and hold as
		// long as usual once a probe finds the same quota. However long
		// the answers take: held four of them (a minute at 20 s), a
		// read of 46/s for 100/s cost 0.1 of the quota after the start
		// (workload 17); the probe's 429 comes back to what left before
		// it, not to this read (waitAnswers).
		return min(holdFirstRead, rc.hold.first)
	default:
		return rc.hold.first
	}
}

// settle takes est as the estimate and holds under it from now.
func (rc *Controller) settle(now time.Time, e throttleEvent, est float64, ok bool) {
	rc.quota.measured = ok
	rc.quota.rate = est
	rc.hold.base = rc.settled(est)
	rc.hold.end = now.Add(rc.hold.length)
	if rc.limiter == nil {
		// Our bucket starts now, empty (below).
		rc.limiter = newBucket(rate.Limit(rc.hold.base/rc.share.scale), rc.processBurst())
	}
	if !ok || !e.probing {
		// The new rate may still be above R. The upstream bucket refilled
		// during the pause, and ours did too: sending our burst at once
		// would empty theirs, and the next request above R would meet a 429
		// before anything could be measured. Starting from an empty bucket
		// keeps their B tokens as the margin, and the next 429 measures R.
		rc.emptyBucket(now)
	}
}

// measure estimates the upstream's rate and burst from the successes in
// [since, upto], with the 429 at at: the rate for the burst estimate
// (successRing.estimate), then the burst for that rate (successRing.burstAt,
// and the windows kept from earlier reads), until the burst stops
// growing; env is the windows of this read. Only a 429 that cannot be a
// drop (grow: a probe's, or one under a guess) reads the burst: after a
// drop of the quota, the rate is capped (reestimate) and what the
// successes say of the burst is unsure. Such a read starts from the least
// burst (api.burst, or 1) at the rate it reads: a window bounds B by
// n - R*w, more the lower R, and a first read's rate, a loose lower bound,
// overstated it for good when B only grew (17 for 10 after a first read
// of 46/s for 100/s at 20 s answers, which then held every later estimate
// 7% under R). ok is false when no window holds enough successes to
// measure.
func (rc *Controller) measure(at, upto, since, burstSince time.Time, grow bool) (est, burst float64, env burstEnvelope, ok bool) {
	burst = rc.quota.burst
	if grow {
		burst = rc.burstFloor()
	}
	rc.spread.flush(&rc.arr) // the start's answers are in
	others := rc.others()
	for range 8 {
		r, rok := rc.hist.estimate(at, upto, since, burst)
		if !rok {
			if ok {
				break // the burst grew past every window: see below
			}
			return est, burst, env, ok
		}
		est, ok = r+others, true
		if !grow {
			return est, burst, env, ok
		}
		// Leading other processes, n - R*w over this one's successes is
		// still a lower bound of B.
		var b float64
		b, env = rc.arr.burstAt(est, burstSince, upto)
		// The windows kept, at this rate, up to the burst read before:
		// a rate read lower than before reads no more of them than then.
		b = max(b, min(rc.quota.windows.bound(est), rc.quota.burst))
		if b < burst+burstSlack {
			return est, burst, env, ok
		}
		burst = math.Ceil(b - burstSlack)
	}
	// The rate and the burst did not settle: each lower rate read a larger
	// burst, until no window was left or the steps ran out. The successes
	// came in bunches under the rate (a client's slow start at answers of
	// a few hundred ms) and the 429 was a burst's, not the rate's: at 40/s
	// and 200 ms answers the estimate ran down to 12, held for a minute.
	// Not measured: the rate is guessed from what was admitted and probed
	// at once.
	return 0, rc.quota.burst, burstEnvelope{}, false
}

// burstFloor is the least the upstream's burst is taken to be: api.burst
// with a ceiling, else 1.
func (rc *Controller) burstFloor() float64 {
	if rc.limits.ceiling > 0 {
		return float64(rc.limits.burst)
	}
	return 1
}
