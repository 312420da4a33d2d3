package ratecontrol

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// Sharer shares one key's quota between processes (see the package doc,
// "One quota, several processes"). Its methods are called with the
// controller's lock held, so none may block: it reads and writes the
// shared state in the background.
type Sharer interface {
	// View is the shared state as last read.
	View() SharedQuota
	// Publish hands over the leader's new estimate (Measured zero: a
	// guess, not yet measured), with when its hold ends and its length.
	Publish(q Estimate, probeAt time.Time, hold time.Duration)
	// Paused announces a 429 of this process: every process pauses for d.
	Paused(d time.Duration)
}

// Estimate is what one process has measured of the key's quota.
type Estimate struct {
	Rate  float64 // requests/s; 0: not measured yet
	Burst float64 // at least 1
	// Measured is when Rate was last measured (at the end of a 429's
	// pause); zero when never.
	Measured time.Time
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

// sharing is this process's part in a shared quota.
type sharing struct {
	sharer Sharer // nil: the quota is this process's alone
	// scale is 1 over this process's share of the quota (1 without a
	// sharer: N with N equal processes).
	scale   float64
	leader  bool  // whether this process runs the control
	version int64 // the shared estimate adopted
	// changed is when this process last saw the shares or the leader
	// change; excused when a 429 was last put down to it (shareMoved).
	changed, excused time.Time
}

// SetSharer makes this controller share its key's quota through s. Set it
// before the first request.
func (rc *Controller) SetSharer(s Sharer) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.share.sharer = s
}

// shared reports whether other processes send on the key too.
func (rc *Controller) shared() bool { return rc.share.sharer != nil && rc.share.scale > 1 }

// following reports whether this process follows a leader's estimate
// rather than measuring one.
func (rc *Controller) following() bool {
	return rc.share.sharer != nil && !rc.share.leader && rc.quota.rate > 0
}

// readShare takes in the sharer's view at now: a change of this process's
// share or role restarts the leader's windows, and a new estimate is
// adopted unless this process leads with one of its own.
func (rc *Controller) readShare(now time.Time) {
	if rc.share.sharer == nil {
		return
	}
	v := rc.share.sharer.View()
	n := 1.0
	if v.Processes > 1 {
		n = 1 / max(v.Share, 1e-3)
	}
	if math.Abs(n-rc.share.scale) > 0.01*rc.share.scale || v.Leader != rc.share.leader {
		// The followers' rate changes: the leader's windows start now.
		rc.share.scale, rc.share.leader, rc.marks.regime = n, v.Leader, now
		rc.share.changed = now
	}
	if v.Version != rc.share.version {
		rc.share.version = v.Version
		if !rc.share.leader || rc.quota.rate == 0 {
			rc.adopt(now, v)
		}
	}
}

// adopt takes the estimate another process published: its rate, burst and
// hold, so that the processes probe together.
func (rc *Controller) adopt(now time.Time, v SharedQuota) {
	if v.Rate <= 0 {
		return
	}
	rc.quota.rate, rc.quota.measured = v.Rate, v.Measured
	rc.quota.everMeasured = rc.quota.everMeasured || v.Measured
	if v.Burst > rc.quota.burst {
		rc.quota.burst = v.Burst
	}
	rc.hold.base = rc.settled(rc.quota.rate)
	rc.hold.length, rc.hold.end = v.Hold, v.ProbeAt
	if rc.marks.lastPause.IsZero() {
		rc.marks.lastPause = now
	}
	if rc.limiter == nil {
		// Our bucket starts now, empty: the others are sending.
		rc.limiter = newBucket(rate.Limit(rc.hold.base/rc.share.scale), rc.processBurst())
		rc.limiter.AllowN(now, rc.limiter.Burst())
	}
}

// publish hands the estimate to the other processes at now when leading
// them; measured is whether it was measured (else a guess).
func (rc *Controller) publish(now time.Time, measured bool) {
	if rc.share.sharer == nil || !rc.share.leader {
		return
	}
	q := Estimate{Rate: rc.quota.rate, Burst: rc.quota.burst}
	if measured {
		q.Measured = now
	}
	rc.share.sharer.Publish(q, rc.hold.end, rc.hold.length)
}

// keyRate is the rate the key is sent at, as this process's control sees
// it: our bucket's, plus the followers' when leading (0: no bucket).
func (rc *Controller) keyRate() float64 {
	cur := rc.currentLocked()
	if cur > 0 && rc.shared() {
		cur += rc.others()
	}
	return cur
}

// others is the rate the followers send at, all together, as the leader
// sees it.
func (rc *Controller) others() float64 {
	if !rc.shared() || rc.quota.rate == 0 {
		return 0
	}
	return (rc.share.scale - 1) * rc.hold.base / rc.share.scale
}

// processRate is this process's part of the key's rate r: all of it when
// the quota is not shared.
func (rc *Controller) processRate(r float64) float64 {
	if !rc.shared() {
		return r
	}
	switch {
	case rc.quota.rate == 0:
		return r / rc.share.scale // the ceiling is the key's (+Inf stays)
	case rc.share.leader:
		return r - rc.others()
	default:
		return rc.hold.base / rc.share.scale
	}
}

// shareMoved reports whether the 429 e may be the shares' moving rather
// than the quota's: this process saw the shares change after shareSettle
// before it (up to now, its reaction: the view is read when requests
// leave, not during the pause). The processes read a change at different
// instants (a joiner sends its part from its own heartbeat, the others cut
// theirs at the notification, a database round trip or a heartbeat
// later), and meanwhile the key is sent above its rate: a 429 then says
// nothing of the quota. Taken for a drop, it halved a measured estimate (its windows
// restart at the change, too short to measure) and set the probes every
// 5 s of a drop for a minute: 0.88 of R·T+B at 2 processes (bench
// workload 14).
func (rc *Controller) shareMoved(e throttleEvent) bool {
	if rc.share.sharer == nil || rc.share.changed.IsZero() || rc.share.changed.Before(e.at.Add(-shareSettle)) {
		return false
	}
	// One a while: shares that keep moving (weights changing at every
	// heartbeat) must not hide a drop of the quota.
	if !rc.share.excused.IsZero() && e.at.Sub(rc.share.excused) < estimateHorizon {
		return false
	}
	rc.share.excused = e.at
	return true
}
