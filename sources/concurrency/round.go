package concurrency

import (
	"math"
	"slices"
	"time"
)

// round is a stretch of about one answer time run at one limit: the
// requests that took their slot in it, their answers, and the slots held
// over it.
type round struct {
	start, end time.Time // end zero while open
	limit      int
	epoch      int // the controller's epoch when it opened
	acquired   int // slots taken in the round
	out        int // of them, not given back yet
	heldSum    int // slots held just after each of them was taken
	peak       int // the most of them
	// lastAcquired is when the latest of them was taken.
	lastAcquired time.Time
	answers      []answer
	oks, fails   int
	// queued and busy sum the Queued and Latency of the round's samples,
	// seconds: the share of their time spent waiting to be sent.
	queued, busy float64
	evaluated    bool
	// What ready counted at its latest call, so that a call counts only
	// what changed since (it is asked at every slot taken or given back
	// while the round waits for its answers, and scanning them all each
	// time was most of the simulations' CPU under -race): of the first
	// scanned answers, within answered within exp(withinAge) (log
	// seconds); over holds the others' log answer times, a min-heap.
	scanned, within int
	withinAge       float64
	over            []float64
}

// answer is one OK sample: its endpoint's index and log answer time.
type answer struct {
	ep  int
	lat float64 // ln(seconds)
}

// load is the mean number of slots held as the round's requests took
// theirs: the load each of them met (the queue it found upstream, when the
// load is beyond the knee), whatever the slots held before were doing.
func (r *round) load() float64 {
	if r.acquired == 0 {
		return 0
	}
	return float64(r.heldSum) / float64(r.acquired)
}

// used reports whether the round's slots were used: at some point nearly
// all its limit was held (with fewer lists than the limit, or a runner
// that does not keep enough going, it was not, and is no reason to grow).
func (r *round) used() bool { return float64(r.peak) >= appLimited*float64(r.limit) }

// waiting is the share of its samples' time spent waiting to be sent.
func (r *round) waiting() float64 {
	if r.queued+r.busy <= 0 {
		return 0
	}
	return r.queued / (r.queued + r.busy)
}

// ready reports whether r's answers are in at now: all of them; or all
// but a censored share, when even the latest request taken is out longer
// than the median answer time (so every answer still out is longer than
// the median, and counting them as longer than any leaves the median
// exact: the requests taken late in a round are not the slow ones); or
// after the wait for them is over.
func (r *round) ready(now time.Time, median float64) bool {
	if r.out == 0 {
		return true
	}
	wait := time.Duration(evalWait * median * float64(time.Second))
	if !now.Before(r.end.Add(max(wait, minRound))) {
		return true
	}
	if r.out > int(censored*float64(r.acquired)) {
		return false
	}
	age := now.Sub(r.lastAcquired).Seconds()
	if age < median/2 {
		return false // cheap test first: nothing to read yet
	}
	// The median with the answers out counted as longer than any is
	// within age when more than half of all answered within age.
	return 2*r.answeredWithin(math.Log(age)) > len(r.answers)+r.out
}

// answeredWithin is how many of r's answers took la (log seconds) or less.
// The round closed, la only grows between calls (the age of its latest
// request): the answers counted within stay so, the others wait in a
// min-heap for la to reach them, and each new answer is looked at once.
func (r *round) answeredWithin(la float64) int {
	if la < r.withinAge {
		r.scanned, r.within, r.over = 0, 0, r.over[:0] // the clock went back: afresh
	}
	r.withinAge = la
	for _, a := range r.answers[r.scanned:] {
		if a.lat <= la {
			r.within++
		} else {
			r.over = heapPush(r.over, a.lat)
		}
	}
	r.scanned = len(r.answers)
	for len(r.over) > 0 && r.over[0] <= la {
		r.over = heapPop(r.over)
		r.within++
	}
	return r.within
}

// heapPush adds x to the min-heap h.
func heapPush(h []float64, x float64) []float64 {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

// heapPop removes the least of the min-heap h.
func heapPop(h []float64) []float64 {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && h[l] < h[m] {
			m = l
		}
		if r < n && h[r] < h[m] {
			m = r
		}
		if m == i {
			return h
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// levels are the round's answer times on the endpoints' common scale: each
// log answer time less its endpoint's typical one (norm), the answers still
// out counted as longer than any; sorted (nil for no round).
func (r *round) levels(norm []float64) []float64 {
	if r == nil {
		return nil
	}
	ys := make([]float64, len(r.answers), len(r.answers)+r.out)
	for i, a := range r.answers {
		ys[i] = a.lat - norm[a.ep]
	}
	for range r.out {
		ys = append(ys, math.Inf(1))
	}
	slices.Sort(ys)
	return ys
}

// median is the median of sorted ys; ok is false when it is not finite.
func median(ys []float64) (float64, bool) {
	m := len(ys)
	if m == 0 {
		return 0, false
	}
	v := ys[m/2]
	if m%2 == 0 {
		v = (ys[m/2-1] + ys[m/2]) / 2
	}
	return v, !math.IsInf(v, 0) && !math.IsNaN(v)
}

// spread is a robust standard deviation of sorted ys about their median
// (1.4826 times the median absolute deviation), the answers still out
// left aside.
func spread(ys []float64) float64 {
	var fin []float64
	for _, y := range ys {
		if !math.IsInf(y, 1) {
			fin = append(fin, y)
		}
	}
	m, ok := median(fin)
	if !ok {
		return 0
	}
	dev := make([]float64, len(fin))
	for i, y := range fin {
		dev[i] = math.Abs(y - m)
	}
	slices.Sort(dev)
	d, _ := median(dev)
	return 1.4826 * d
}

// medianLatency is the median of the round's answer times, seconds (0:
// none).
func (r *round) medianLatency() float64 {
	if len(r.answers) == 0 {
		return 0
	}
	ls := make([]float64, len(r.answers))
	for i, a := range r.answers {
		ls[i] = a.lat
	}
	slices.Sort(ls)
	return math.Exp(ls[len(ls)/2])
}

// meanLatency is the mean of the round's answer times, seconds (0: none).
func (r *round) meanLatency() float64 {
	if len(r.answers) == 0 {
		return 0
	}
	s := 0.0
	for _, a := range r.answers {
		s += math.Exp(a.lat)
	}
	return s / float64(len(r.answers))
}
