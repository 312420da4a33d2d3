package ratecontrol

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
)

// feed records successes admitted by an upstream bucket of rate r and burst
// b that starts full at t0 and is drained by a client sending faster than r
// for d: b at once, then one every 1/r. It returns the instant the bucket is
// empty, when the next request would be refused.
func feed(rc *Controller, t0 time.Time, r float64, b int, d time.Duration) time.Time {
	for range b {
		rc.successAt(t0, t0)
	}
	step := time.Duration(float64(time.Second) / r)
	end := t0.Add(d)
	for t := t0.Add(step); !t.After(end); t = t.Add(step) {
		rc.successAt(t, t)
	}
	return end
}

func near(got, want, tol float64) bool { return got >= want-tol && got <= want+tol }

// sending records requests leaving at r a second in the second before at,
// and returns at.
func sending(rc *Controller, at time.Time, r float64) time.Time {
	step := time.Duration(float64(time.Second) / r)
	for t := at.Add(-time.Second + step); !t.After(at); t = t.Add(step) {
		rc.sends.add(t)
	}
	return at
}

func TestRateControlStartsAtCeiling(t *testing.T) {
	t.Parallel()
	rc := New(50, 10)
	rc.adjust(time.Now().Add(time.Minute))
	if got := rc.Current(); got != 50 {
		t.Errorf("rate = %v, want the ceiling 50 while no 429 is seen", got)
	}
	if none := New(0, 0); none.Current() != 0 || none.limiter != nil {
		t.Error("no ceiling must mean no bucket")
	}
}

// A 429 after a few seconds against a 50/s bucket: the estimate is 50 to
// within 1/window, the rate settles just under it and holds, then probes.
func TestRateControlSettlesUnderTheQuota(t *testing.T) {
	t.Parallel()
	rc := New(80, 10)
	t0 := time.Now()
	at := feed(rc, t0, 50, 10, 3*time.Second)
	rc.throttledAt(at, time.Second)
	rc.throttledAt(at.Add(time.Millisecond), time.Second) // in flight: the same event
	if rc.pending == nil || !rc.pending.at.Equal(at) {
		t.Fatalf("pending event %+v, want the first 429", rc.pending)
	}
	if want := at.Add(time.Millisecond + time.Second); !rc.until.Equal(want) {
		t.Errorf("pause until %v, want %v", rc.until, want)
	}
	end := rc.until
	rc.adjust(end)
	if rc.pending != nil {
		t.Fatal("event not applied when the pause ended")
	}
	if !near(rc.quota.rate, 50, 0.5) {
		t.Errorf("estimate %v, want 50 +- 0.5", rc.quota.rate)
	}
	if got := rc.Current(); got > 50 || got < 48.5 {
		t.Errorf("settled at %v, want just under 50", got)
	}
	base := rc.Current()
	if rc.hold.length != holdFirstRead {
		t.Errorf("held %v, want %v: the first estimate measured", rc.hold.length, holdFirstRead)
	}
	if got := rc.target(end.Add(rc.hold.length - time.Millisecond)); got != base {
		t.Errorf("during the hold: %v, want %v", got, base)
	}
	// A probe grows while requests leave at its rate, and no faster than
	// probeLead times what leaves.
	if got := rc.target(sending(rc, end.Add(rc.hold.length+time.Second), base)); !near(got, base*1.25, 0.01) {
		t.Errorf("1 s into the probe: %v, want %v", got, base*1.25)
	}
	if got := rc.target(sending(rc, end.Add(rc.hold.length+time.Minute), 80)); got != 80 {
		t.Errorf("probe capped at %v, want the ceiling 80", got)
	}
	if got := rc.target(sending(rc, end.Add(rc.hold.length+2*time.Minute), 5)); got != base {
		t.Errorf("with 5 requests a second leaving: %v, want the held %v", got, base)
	}
}

// The first estimate measured is held briefly (holdFirstRead: it may be a
// loose lower bound); probes that find the same quota hold longer each
// time, up to holdMax; a different quota resets the hold.
func TestRateControlHoldGrowsWhileTheQuotaStays(t *testing.T) {
	t.Parallel()
	rc := New(100, 10)
	now := time.Now()
	var holds []time.Duration
	for i := range 5 {
		r := 50.0
		if i == 4 {
			r = 30 // the quota moved
		}
		now = feed(rc, now.Add(time.Second), r, 10, 2*time.Second)
		rc.limiter.SetLimitAt(now, 60) // probing, above the estimate
		rc.throttledAt(now, time.Second)
		now = now.Add(time.Second)
		rc.adjust(now)
		holds = append(holds, rc.hold.length)
	}
	want := []time.Duration{holdFirstRead, min(2*holdMin, holdMax), min(4*holdMin, holdMax), min(8*holdMin, holdMax), holdMin}
	if fmt.Sprint(holds) != fmt.Sprint(want) {
		t.Errorf("holds %v, want %v", holds, want)
	}
}

// A 429 while at or under the estimate: either the estimate was a little
// high (the successes since the last pause then measure R, and the rate
// settles under it and under the rate the 429 came at), or the quota
// dropped (the next 429 comes soon and measures since that pause). After a
// drop the next probe comes within holdAfterDrop.
func TestRateControlCutsOnUnexpected429(t *testing.T) {
	t.Parallel()
	rc := New(100, 10)
	now := feed(rc, time.Now(), 50, 10, 3*time.Second)
	rc.throttledAt(now, time.Second)
	now = now.Add(time.Second)
	rc.adjust(now)
	before := rc.Current()
	// Held under the estimate, but the upstream admits only 48/s.
	now = feed(rc, now, 48, 10, 5*time.Second)
	rc.throttledAt(now, time.Second)
	if rc.pending.probing {
		t.Fatal("a 429 during the hold is not a probe")
	}
	now = now.Add(time.Second)
	rc.adjust(now)
	if got := rc.Current(); got > before*slightCap || !near(got, 48*settleFraction, 0.3) {
		t.Errorf("after an unexpected 429 at 48/s: %v, want %v (and <= %v)", got, 48*settleFraction, before*slightCap)
	}
	if rc.hold.length != holdMin {
		t.Errorf("hold %v, want %v after the estimate moved a little", rc.hold.length, holdMin)
	}
	// The quota drops to 20/s: the next 429 measures it since the pause.
	now = feed(rc, now, 20, 10, 2*time.Second)
	rc.throttledAt(now, time.Second)
	now = now.Add(time.Second)
	rc.adjust(now)
	if got := rc.Current(); !near(got, 20*settleFraction, 0.5) {
		t.Errorf("after the drop to 20/s: %v, want %v", got, 20*settleFraction)
	}
	if rc.hold.length != holdAfterDrop {
		t.Errorf("hold %v, want %v after a drop", rc.hold.length, holdAfterDrop)
	}
}

func TestRateControlWithoutSuccessesHalves(t *testing.T) {
	t.Parallel()
	rc := New(40, 5)
	now := time.Now()
	rc.throttledAt(now, time.Second)
	rc.adjust(now.Add(time.Second))
	if got := rc.Current(); got != 40*settleFraction/2 {
		t.Errorf("rate %v, want half the ceiling (x%v)", got, settleFraction)
	}
}

// The steady rate, which sizes the requests in flight, leaves aside the
// interim of a reaction waiting for answers: the rate held before it.
func TestSteadyLeavesTheInterimAside(t *testing.T) {
	t.Parallel()
	rc := New(0, 1)
	t0 := time.Unix(9_000_000, 0)
	at := feed(rc, t0, 50, 10, 3*time.Second)
	rc.throttledAt(at, time.Second)
	rc.adjust(at.Add(time.Second))
	held := rc.hold.base
	if rc.now = func() time.Time { return at.Add(2 * time.Second) }; rc.Steady() != held || rc.Current() != held {
		t.Fatalf("steady %v, current %v, want the held %v", rc.Steady(), rc.Current(), held)
	}
	// A probe's 429 while answers take 3 s: the interim is the held rate;
	// an unexpected one cuts the interim, and steady stays at the held.
	now := at.Add(2 * time.Second)
	rc.successAt(now.Add(3*time.Second), now) // answers take 3 s
	rc.throttledSent(now, now, time.Second)
	rc.mu.Lock()
	rc.adjust(now.Add(1500 * time.Millisecond))
	interim := rc.interim
	rc.mu.Unlock()
	rc.now = func() time.Time { return now.Add(1500 * time.Millisecond) }
	if interim == 0 || rc.Current() != interim || rc.Steady() != held {
		t.Errorf("waiting for answers: interim %v, current %v, steady %v, want the interim and the held %v", interim, rc.Current(), rc.Steady(), held)
	}
}

// The workers waiting for a token leave first come first served, and one
// that gives up hands the head on: the others still leave, in order. The
// controller's clock stands still until every waiter is queued (none can
// leave early, however slow the machine), then moves a token at a time.
func TestWaitQueueFirstComeFirstServed(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	clock := time.Unix(7_000_000, 0)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	rc := New(10, 1)
	rc.SetClock(now)
	if err := rc.Wait(context.Background()); err != nil { // the burst's token
		t.Fatal(err)
	}
	queued := func() int {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(rc.queue)
	}
	const n = 5
	done := make(chan int, n)
	errs := make([]error, n)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	for i := range n {
		ctx := context.Background()
		if i == 1 {
			ctx = ctx2
		}
		go func() {
			errs[i] = rc.Wait(ctx)
			done <- i
		}()
		for queued() != i+1 {
			runtime.Gosched()
		}
	}
	cancel2()
	order := []int{<-done}
	for len(order) < n {
		mu.Lock()
		clock = clock.Add(100 * time.Millisecond) // a token
		mu.Unlock()
		order = append(order, <-done)
	}
	if errs[1] == nil {
		t.Errorf("the waiter whose context ended got a token")
	}
	if fmt.Sprint(order) != "[1 0 2 3 4]" {
		t.Errorf("left in the order %v, want [1 0 2 3 4] (the one that gave up, then first come first served)", order)
	}
	if q := queued(); q != 0 {
		t.Errorf("%d still queued", q)
	}
}

// viewSharer is a Sharer whose view the test sets.
type viewSharer struct{ v SharedQuota }

func (s *viewSharer) View() SharedQuota                          { return s.v }
func (s *viewSharer) Publish(Estimate, time.Time, time.Duration) {}
func (s *viewSharer) Paused(time.Duration)                       {}

// A request waiting for a token asks again within napMax, so a rate
// changed meanwhile applies that soon: a follower of two at the leader's
// guess of 1/s (0.5/s its part) would otherwise sleep 2 s for its token,
// and the leader, counting it at its part of the new estimate, read the
// key's rate 26% high (bench workload 14).
func TestWaitAppliesANewRateWithinNapMax(t *testing.T) {
	t.Parallel()
	clock := time.Unix(8_000_000, 0)
	s := &viewSharer{v: SharedQuota{Version: 1, Rate: 1, Burst: 10, Processes: 2, Share: 0.5, Hold: time.Minute, ProbeAt: clock.Add(time.Minute)}}
	rc := New(0, 1)
	rc.SetClock(func() time.Time { return clock })
	rc.SetSharer(s)
	d := rc.Take() // the worker sleeps d, then asks again
	if d <= 0 {
		t.Fatalf("at 0.5/s from an empty bucket: wait %v", d)
	}
	s.v.Version, s.v.Rate, s.v.ProbeAt = 2, 100, clock.Add(time.Minute) // the leader's estimate, meanwhile
	changed := clock
	for ; d > 0; d = rc.Take() {
		clock = clock.Add(d)
		if clock.Sub(changed) > time.Second {
			break
		}
	}
	if got := clock.Sub(changed); got > napMax+50*time.Millisecond {
		t.Errorf("the request left %v after the new estimate, want within %v and a token at its new rate", got, napMax+50*time.Millisecond)
	}
	if r := rc.Current(); math.Abs(r-49.75) > 0.01 {
		t.Errorf("rate %v, want 49.75 (half of 99.5%% of 100)", r)
	}
}
