package sources

import (
	"math"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// simUpstream is an upstream quota in virtual time: a token bucket of rate
// R and burst B per key that answers 429 with a Retry-After in whole
// seconds (at least 1), or a fixed pause for the header's other forms (a
// date, none or garbage, which the client turns into a back-off).
type simUpstream struct {
	lim   *rate.Limiter
	pause time.Duration // 0: Retry-After in whole seconds
}

func (u *simUpstream) arrive(t time.Time) (ok bool, retry time.Duration) {
	if u.lim.TokensAt(t) >= 1 {
		u.lim.AllowN(t, 1)
		return true, 0
	}
	if u.pause > 0 {
		return false, u.pause
	}
	wait := (1 - u.lim.TokensAt(t)) / float64(u.lim.Limit())
	return false, time.Duration(max(1, math.Ceil(wait))) * time.Second
}

// simRun is what a simulated crawl saw at the upstream.
type simRun struct {
	oks, limited []time.Time
}

func (r *simRun) count(ts []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// simWorker is one worker of the simulation: asking the control for
// leave, or waiting for an answer.
type simWorker struct {
	at       time.Time
	inflight bool
	ok       bool
	retry    time.Duration
}

// simulate runs workers against up through rc from t0 for d, in virtual
// time, with no sleeps: each request reaches the upstream 1 ms after it
// leaves and is answered latency after it leaves; a worker spends 2 ms on
// an answer before asking again. at(t) is called before each event, for
// scripted changes.
func simulate(rc *rateControl, up *simUpstream, t0 time.Time, workers int, latency, d time.Duration, at func(t time.Time)) *simRun {
	rc.now = func() time.Time { panic("the simulation passes its own clock") }
	ws := make([]simWorker, workers)
	for i := range ws {
		ws[i].at = t0
	}
	run := &simRun{}
	end := t0.Add(d)
	for {
		w := &ws[0]
		for i := range ws {
			if ws[i].at.Before(w.at) {
				w = &ws[i]
			}
		}
		now := w.at
		if !now.Before(end) {
			return run
		}
		if at != nil {
			at(now)
		}
		if w.inflight {
			w.inflight = false
			if w.ok {
				rc.mu.Lock()
				rc.hist.add(now)
				rc.mu.Unlock()
			} else {
				rc.mu.Lock()
				rc.throttledAt(now, w.retry)
				rc.mu.Unlock()
			}
			w.at = now.Add(2 * time.Millisecond)
			continue
		}
		if wait := rc.step(now); wait > 0 {
			w.at = now.Add(wait)
			continue
		}
		arrival := now.Add(time.Millisecond)
		w.ok, w.retry = up.arrive(arrival)
		if w.ok {
			run.oks = append(run.oks, arrival)
		} else {
			run.limited = append(run.limited, arrival)
		}
		w.inflight = true
		w.at = now.Add(latency)
	}
}

// Without a ceiling the first 429s install a bucket just under the quota,
// with the upstream's burst estimated, and the run then spends the whole
// quota with few 429s, whatever form the pause takes.
func TestRateControlFindsTheQuotaWithoutCeiling(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		pause time.Duration
	}{{"retry-after seconds", 0}, {"back-off 500ms", 500 * time.Millisecond}, {"back-off 250ms", 250 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			const R, B, T = 50.0, 10, 180 * time.Second
			t0 := time.Unix(1_000_000, 0)
			up := &simUpstream{lim: rate.NewLimiter(R, B), pause: c.pause}
			up.lim.AllowN(t0, 0)
			rc := newRateControl(0, 1)
			var installed time.Time
			run := simulate(rc, up, t0, 16, 5*time.Millisecond, T, func(now time.Time) {
				if installed.IsZero() && rc.limiter != nil {
					installed = now
					if len(run0(rc)) == 0 {
						t.Error("bucket installed before any 429")
					}
				}
			})
			if installed.IsZero() {
				t.Fatal("no bucket installed")
			}
			if len(run.limited) == 0 || installed.Before(run.limited[0]) {
				t.Errorf("bucket installed at %v, first 429 at %v", installed.Sub(t0), run.limited[0].Sub(t0))
			}
			frac := float64(len(run.oks)) / (R*T.Seconds() + B)
			late := run.count(run.limited, t0.Add(10*time.Second), t0.Add(T))
			per1000 := 1000 * float64(late) / float64(run.count(run.oks, t0.Add(10*time.Second), t0.Add(T))+late)
			t.Logf("achieved %.3f of the quota; bucket after %v; estimate %.2f/s, burst %.0f; 429s %d (%d after 10 s, %.2f per 1000)",
				frac, installed.Sub(t0), rc.known, rc.burst, len(run.limited), late, per1000)
			if frac < 0.95 {
				t.Errorf("achieved %.3f of the allowed rate, want >= 0.95", frac)
			}
			if per1000 > 5 {
				t.Errorf("%.2f 429s per 1000 after the first 10 s, want <= 5", per1000)
			}
			if math.Abs(rc.known-R)/R > 0.03 {
				t.Errorf("estimate %.2f, want within 3%% of %v", rc.known, R)
			}
			if rc.burst < B-2 || rc.burst > B+2 {
				t.Errorf("burst estimate %v, want %d +- 2", rc.burst, B)
			}
		})
	}
}

// run0 is a hook for the installed check: the 429 events seen (lastPause
// set, or pending).
func run0(rc *rateControl) []time.Time {
	if rc.lastPause.IsZero() {
		return nil
	}
	return []time.Time{rc.lastPause}
}

// The quota drops mid-run, then rises again, with no ceiling: the drop is
// followed within a few 429s and the rise is found by the next probe.
func TestRateControlFollowsAQuotaThatMoves(t *testing.T) {
	t.Parallel()
	const B = 10
	t0 := time.Unix(2_000_000, 0)
	up := &simUpstream{lim: rate.NewLimiter(50, B)}
	up.lim.AllowN(t0, 0)
	rc := newRateControl(0, 1)
	phase := 60 * time.Second
	var known [3]float64 // the estimate at the end of each phase
	run := simulate(rc, up, t0, 16, 5*time.Millisecond, 3*phase, func(now time.Time) {
		switch i := int(now.Sub(t0) / phase); {
		case i == 1 && up.lim.Limit() == 50:
			known[0] = rc.known
			up.lim.SetLimitAt(now, 20)
		case i == 2 && up.lim.Limit() == 20:
			known[1] = rc.known
			up.lim.SetLimitAt(now, 50)
		}
	})
	known[2] = rc.known
	for i, want := range []float64{50, 20, 50} {
		from, to := t0.Add(time.Duration(i)*phase), t0.Add(time.Duration(i+1)*phase)
		got := float64(run.count(run.oks, from.Add(20*time.Second), to)) / 40
		t.Logf("phase %d (R = %v): estimate %.2f, %.2f/s in its last 40 s, %d 429s", i, want, known[i], got, run.count(run.limited, from, to))
		if math.Abs(known[i]-want)/want > 0.04 {
			t.Errorf("phase %d: estimate %.2f, want within 4%% of %v", i, known[i], want)
		}
		// A rise is found only by the probe after the hold (15 s).
		if got < 0.92*want {
			t.Errorf("phase %d: %.2f/s in its last 40 s, want >= 92%% of %v", i, got, want)
		}
		if n := run.count(run.limited, from.Add(20*time.Second), to); n > 3*16 {
			t.Errorf("phase %d: %d 429s in its last 40 s", i, n)
		}
	}
}

// With a ceiling under the quota the rate stays at the ceiling and no 429
// comes; with one above it, the quota is found and the ceiling is never
// exceeded.
func TestRateControlRespectsTheCeiling(t *testing.T) {
	t.Parallel()
	for _, ceiling := range []float64{30, 75} {
		t0 := time.Unix(3_000_000, 0)
		up := &simUpstream{lim: rate.NewLimiter(50, 10)}
		up.lim.AllowN(t0, 0)
		rc := newRateControl(ceiling, 10)
		above := 0.0
		run := simulate(rc, up, t0, 16, 5*time.Millisecond, 120*time.Second, func(time.Time) {
			above = max(above, rc.currentLocked()-ceiling)
		})
		if above > 0 {
			t.Errorf("ceiling %v: the bucket's rate went %v above it", ceiling, above)
		}
		sent := float64(len(run.oks)+len(run.limited)) / 120
		t.Logf("ceiling %v: %.2f requests/s, %d 429s, estimate %.2f", ceiling, sent, len(run.limited), rc.known)
		if sent > ceiling*1.01+0.1 {
			t.Errorf("ceiling %v: sent %.2f/s", ceiling, sent)
		}
		if ceiling < 50 && len(run.limited) > 0 {
			t.Errorf("ceiling %v under the quota: %d 429s", ceiling, len(run.limited))
		}
		if ceiling > 50 && math.Abs(rc.known-50)/50 > 0.03 {
			t.Errorf("ceiling %v: estimate %.2f, want within 3%% of 50", ceiling, rc.known)
		}
	}
}

// A RateShare has the last word: a process given a share of the quota
// sends at it, before any 429 as after.
func TestRateControlShare(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(4_000_000, 0)
	up := &simUpstream{lim: rate.NewLimiter(50, 10)}
	up.lim.AllowN(t0, 0)
	rc := newRateControl(0, 1)
	rc.share = halfShare{}
	run := simulate(rc, up, t0, 16, 5*time.Millisecond, 60*time.Second, nil)
	sent := float64(len(run.oks)+len(run.limited)) / 60
	if len(run.limited) != 0 || sent < 24 || sent > 25.5 {
		t.Errorf("with a share of 25/s: %.2f requests/s, %d 429s", sent, len(run.limited))
	}
}

type halfShare struct{}

func (halfShare) Allowed(_ time.Time, want float64, _ QuotaEstimate) float64 { return min(want, 25) }
