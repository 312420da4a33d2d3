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
	la, within := math.Log(age), 0
	for _, a := range r.answers {
		if a.lat <= la {
			within++
		}
	}
	return 2*within > len(r.answers)+r.out
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
