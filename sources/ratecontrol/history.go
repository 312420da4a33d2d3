package ratecontrol

import "time"

// successRing holds the times of the latest successes: when their
// requests were sent, which is when the upstream's bucket counted them.
type successRing struct {
	t [2048]int64 // unix nanoseconds
	n int         // successes recorded so far
}

func (r *successRing) add(t time.Time) {
	r.t[r.n%len(r.t)] = t.UnixNano()
	r.n++
}

// insert records a success at t, which may be earlier than the latest
// ones (answers come back out of the order their requests were sent in):
// the ring stays in time order.
func (r *successRing) insert(t time.Time) {
	ns := t.UnixNano()
	// The lowest slot still kept once this one is in: a full ring drops
	// its oldest.
	lo := r.n - min(r.n, len(r.t))
	if r.n >= len(r.t) {
		lo++
	}
	// The ring is in time order: ns goes after the last slot at or before
	// it, found by bisection, and the later ones move up a slot by copy.
	// (A success can come tens of seconds after hundreds sent later: a
	// slot at a time, this was most of a simulation's CPU under -race.)
	i, j := lo, r.n
	for i < j {
		h := int(uint(i+j) >> 1)
		if r.t[h%len(r.t)] > ns {
			j = h
		} else {
			i = h + 1
		}
	}
	r.shiftUp(i)
	r.t[i%len(r.t)] = ns
	r.n++
}

// shiftUp moves the slots from i up to the latest one slot up, into the
// slot past the latest.
func (r *successRing) shiftUp(i int) {
	if i == r.n {
		return
	}
	p, q := i%len(r.t), r.n%len(r.t)
	if p < q {
		copy(r.t[p+1:q+1], r.t[p:q])
		return
	}
	// Across the end of the array: the part at its start first, then the
	// last slot to the first, then the part at its end.
	copy(r.t[1:q+1], r.t[:q])
	r.t[0] = r.t[len(r.t)-1]
	copy(r.t[p+1:], r.t[p:len(r.t)-1])
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

// burstWindow is a window of successes: n of them within w seconds. A
// bucket of rate R admits them only with a burst of n - R*w or more.
type burstWindow struct{ n, w float64 }

// burstBin is the resolution of a burstEnvelope: windows within one bin of
// length bound B alike to within R*burstBin (half a token at 100/s).
const burstBin = 5 * time.Millisecond

// burstEnvelope keeps, per bin of length up to burstSpan, the window of
// the most successes seen: what bounds the burst from below at any rate,
// for a rate read later (see measure). The zero value bounds nothing.
type burstEnvelope [burstSpan/burstBin + 1]burstWindow

// bound is the least burst that admits every window kept at rate.
func (e *burstEnvelope) bound(rate float64) float64 {
	best := 0.0
	for _, b := range e {
		if b.n > 0 {
			best = max(best, b.n-rate*b.w)
		}
	}
	return best
}

// add keeps b if it holds more successes than the window of its bin.
func (e *burstEnvelope) add(b burstWindow) {
	i := min(int(b.w/burstBin.Seconds()), len(e)-1)
	if b.n > e[i].n || (b.n == e[i].n && b.w < e[i].w) {
		e[i] = b
	}
}

// merge keeps o's windows too.
func (e *burstEnvelope) merge(o *burstEnvelope) {
	for _, b := range o {
		if b.n > 0 {
			e.add(b)
		}
	}
}

// burstAt is the largest lower bound n - rate*(t_j - t_i) of the upstream's
// burst over the windows [t_i, t_j] of successes in [since, upto] no longer
// than burstSpan (n of them in the window), and the envelope of those
// windows: in any window a bucket of that rate admits at most its burst
// plus rate times the window. Only short windows count, where the burst is
// seen (a full bucket emptied at once): over a long one, a rate a little
// under the true one would add the difference times the window, and
// successes from before a drop of the quota would count at the new, lower
// rate.
//
// It reads the successes at their arrival times as far as they are known
// (Controller.arr): the start's, sent together, arrived as their
// connections came up (see startSpread).
func (r *successRing) burstAt(rate float64, since, upto time.Time) (float64, burstEnvelope) {
	from, uptoNs := since.UnixNano(), upto.UnixNano()
	kept := min(r.n, len(r.t))
	best := 0.0
	var env burstEnvelope
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
			b := burstWindow{n: float64(i - j + 1), w: w.Seconds()}
			best = max(best, b.n-rate*b.w)
			env.add(b)
		}
	}
	return best, env
}

// startSpread reads when the start's requests arrived. Sent together
// with no bucket of ours, they may arrive spread out (each on a new
// connection), and the upstream admits the burst B and R per second of the
// spread: read at their send times, 16 requests sent at once to a bucket
// of burst 10 at 50/s, 15 admitted as their connections came up, showed a
// burst of 12-13, which every later read of the rate took as (B - 10)/w
// too many (47/s for 50, issue 34's workload 12). A success's answer time
// is its way there and its service, and the quickest success (ok) came
// the quickest way: one answered lat later arrived lat - ok after it, if
// the services took alike. A 429 is answered at once, without the
// service: the latest of the start's (late) bounds how late any of them
// arrived, which keeps answer times that only vary (longer than the
// spread, 2-4 s) from reading as a spread.
//
// Reading the first 429's answer time alone (how late it came after the
// quickest success) missed the successes that arrived after it as a token
// refilled, and the first 429 was often to a request sent again on a
// connection already up (no spread at all): B still read 13 for 10.
type startSpread struct {
	// oks are the start's successes (sent with no bucket of ours), until
	// a reaction reads them (done); ok is their shortest answer time.
	oks  []startAnswer
	ok   time.Duration
	late time.Duration
	done bool
}

type startAnswer struct {
	sent time.Time
	lag  time.Duration
}

// maxStartAnswers bounds startSpread.oks: a start with more workers reads
// the rest at their send times.
const maxStartAnswers = 256

// success keeps a start's success, sent at sent and answered lag later;
// it reports whether it did (else it is read at its send time).
func (sp *startSpread) success(sent time.Time, lag time.Duration) bool {
	if sp.done || len(sp.oks) >= maxStartAnswers {
		return false
	}
	sp.oks = append(sp.oks, startAnswer{sent, lag})
	if sp.ok == 0 || lag < sp.ok {
		sp.ok = lag
	}
	return true
}

// limited notes a 429 to one of the start's requests, answered lag after
// it was sent.
func (sp *startSpread) limited(lag time.Duration) {
	if !sp.done {
		sp.late = max(sp.late, lag)
	}
}

// flush records the start's successes in arr at their arrival times: each
// lag - ok after its send time, no later than the latest 429 among them.
func (sp *startSpread) flush(arr *successRing) {
	if sp.done {
		return
	}
	for _, a := range sp.oks {
		arr.insert(a.sent.Add(min(max(a.lag-sp.ok, 0), sp.late)))
	}
	sp.oks, sp.done = nil, true
}

// lagRing holds the answer times of the latest successes.
type lagRing struct {
	d [64]time.Duration
	n int
}

func (r *lagRing) add(d time.Duration) {
	r.d[r.n%len(r.d)] = d
	r.n++
}

// max is the longest of them (0: none): how long after a request was sent
// its success may still come.
func (r *lagRing) max() time.Duration {
	var m time.Duration
	for _, d := range r.d[:min(r.n, len(r.d))] {
		m = max(m, d)
	}
	return m
}
