package concurrency

import (
	"math"
	"time"
)

// evaluate reads round r's answers once they are in: the failures first,
// then its level against the rounds before it.
func (c *controller) evaluate(now time.Time, r *round) {
	r.evaluated = true
	if m := r.medianLatency(); m > 0 {
		c.median, c.mean = m, r.meanLatency()
	}
	if c.ref != nil && now.Sub(c.ref.end) > refMaxAge {
		c.ref = nil // the floor may have moved since
	}
	// Every level under the same norms, before r's answers move them.
	rs := append(c.last3, r)
	ys := make([][]float64, len(rs))
	for i, q := range rs {
		ys[i] = q.levels(c.norm)
	}
	yref := c.ref.levels(c.norm)
	c.learnNorm(r)
	if c.failures(r) {
		c.last3 = nil // a comparison across a cut says nothing
		return
	}
	if _, ok := median(ys[len(ys)-1]); len(r.answers) < minEvalSamples || !ok {
		return
	}
	if sp := spread(ys[len(ys)-1]); len(r.answers) >= minRoundSamples && sp > 0 {
		c.spread += spreadWeight * (sp - c.spread)
	}
	c.bound = r.waiting() > rateBound
	if len(rs) > 3 {
		rs, ys = rs[1:], ys[1:]
	}
	c.last3 = rs
	if c.phase == starting {
		c.doubling(rs, ys)
		return
	}
	c.steadyRead(rs, ys, yref)
}

// doubling reads the latest pair of rounds while starting: the load
// doubled between them, and the answer time says whether it bought
// throughput.
func (c *controller) doubling(rs []*round, ys [][]float64) {
	if len(rs) < 2 {
		return
	}
	a, b := rs[len(rs)-2], rs[len(rs)-1]
	ya, yb := ys[len(ys)-2], ys[len(ys)-1]
	if a.waiting() > rateBound || b.waiting() > rateBound {
		return
	}
	dl := math.Log(b.load() / a.load())
	if math.Abs(dl) < minDoublingStep || math.IsNaN(dl) {
		// Not a doubling: at the ceiling (limits.workers), the loads of
		// rounds at one limit differ by what the runner happens to keep
		// going, and a few percent of load against the noise of short
		// answer times read as a knee (at 50 ms and 16 workers the limit
		// left the ceiling for 12-16 once a minute).
		return
	}
	la, _ := median(ya)
	lb, _ := median(yb)
	eps := 1 - (lb-la)/dl
	se := c.levelError(ya, yb) / math.Abs(dl)
	c.logf("doubling: loads %.1f -> %.1f levels %.3f -> %.3f eps %.2f se %.2f", a.load(), b.load(), la, lb, eps, se)
	lo, ylo := a, ya
	if b.load() < a.load() {
		lo, ylo = b, yb
	}
	if eps+se >= startExit || se > seRef {
		// No clear queue (or too few answers to tell): the doubling goes
		// on, and the lower load is the reference.
		c.reference(lo, ylo, c.ref.levels(c.norm))
		return
	}
	// The knee is between the two loads: keep the part of the step that
	// still bought throughput.
	hi := max(a.load(), b.load())
	c.phase, c.climbs, c.run = steady, 0, 0
	c.centre = max(lo.load()*math.Exp(max(eps, 0)*math.Log(hi/lo.load())), minLimit)
	c.knee = c.centre
	c.pending(Move{Reason: ReasonLatency})
}

// steadyRead reads the latest triple of rounds in the steady phase: two
// rounds on one side of the centre around one on the other, all since
// the centre last moved. The middle one against the mean of the outer two
// gives the elasticity, free of a drift of the upstream's answer times
// (the outer two share a load: a difference between them is the upstream
// changing, and the triple is not read).
func (c *controller) steadyRead(rs []*round, ys [][]float64, yref []float64) {
	if len(rs) < 3 {
		return
	}
	a, b, d := rs[0], rs[1], rs[2]
	for i, q := range rs {
		if (i > 0 && q.epoch != c.epoch) || q.waiting() > rateBound {
			// The middle and the latest rounds opened before the centre
			// last moved answer for a load left behind, and would move it
			// again on the evidence that moved it; the first may (its
			// load is its own). A round bound by the rate says nothing of
			// the load.
			return
		}
	}
	la, _ := median(ys[0])
	lb, _ := median(ys[1])
	ld, _ := median(ys[2])
	outer := math.Sqrt(a.load() * d.load())
	dl := math.Log(b.load() / outer)
	if math.Abs(dl) < minLoadStep || math.IsNaN(dl) {
		return
	}
	eps := 1 - (lb-(la+ld)/2)/dl
	sp := max(c.spread, spread(ys[0]), spread(ys[1]), spread(ys[2]))
	se := 1.2533 * sp * math.Sqrt(1/n(ys[1])+1/(4*n(ys[0]))+1/(4*n(ys[2]))) / math.Abs(dl)
	// The outer rounds at one load answering differently: the upstream
	// is changing (after a move their loads differ, and this says nothing).
	moving := math.Abs(math.Log(d.load()/a.load())) < minLoadStep && math.Abs(ld-la) > 2*c.levelError(ys[0], ys[2])
	lo, hi, ylo, yhi := b, d, ys[1], ys[2]
	if dl > 0 {
		lo, hi, ylo, yhi = d, b, ys[2], ys[1]
	}
	lref, _ := median(yref)
	c.logf("steady: loads %.1f/%.1f/%.1f levels %.3f/%.3f/%.3f eps %.2f se %.2f centre %.1f moving %v ref %v %.3f", a.load(), b.load(), d.load(), la, lb, ld, eps, se, c.centre, moving, c.ref != nil, lref)
	// The upstream answering slower than the reference by more than the
	// load explains (were all of it queued) degraded, or slowed down: cut
	// to the knee it shows, and find a new reference after. A triple read
	// as the queue grows says little, even when its outer rounds agree.
	if c.excess(hi, yhi, yref) > 2*c.levelError(yhi, yref) && c.cutToKnee(hi, yhi, yref) {
		c.ref = nil
		return
	}
	if moving {
		return // the upstream is changing under the triple
	}
	if eps < target && c.cutToKnee(hi, yhi, yref) {
		return
	}
	if eps >= target {
		c.reference(lo, ylo, yref)
	}
	c.elasticity(lo, hi, eps, se)
}

func n(ys []float64) float64 { return float64(max(len(ys), 1)) }

// excess is how much slower round r, with answer times ys, answered than
// the reference (answer times yref) beyond what its higher load explains
// were all of it queued: log answer time above the reference's less the
// log of the loads' ratio. 0 without a reference.
func (c *controller) excess(r *round, ys, yref []float64) float64 {
	if c.ref == nil || c.ref == r {
		return 0
	}
	l, ok1 := median(ys)
	lref, ok2 := median(yref)
	if !ok1 || !ok2 {
		return 0
	}
	return l - lref - max(0, math.Log(r.load()/c.ref.load()))
}

// reference takes round lo, the lower load of rounds that show no more
// than the target's queue (and no drift of the upstream), with answer
// times ylo, as the reference the knee is read against: it answered about
// as fast as the upstream can. The reference is kept while a later one
// answers slower (that one met a queue the rounds did not show, noise
// near the knee), until it is refMaxAge old.
func (c *controller) reference(lo *round, ylo, yref []float64) {
	if len(lo.answers) < minRefSamples {
		return
	}
	if c.ref != nil {
		l, ok1 := median(ylo)
		lref, ok2 := median(yref)
		if ok1 && ok2 && l-lref > 2*c.levelError(ylo, yref) {
			return
		}
	}
	c.ref = lo
}

// levelError is the standard error of the difference of the levels of
// two rounds, with answer times ys and zs: the medians', from the larger
// of the spread learnt and the rounds' own (few answers may look less
// spread than they are, never more).
func (c *controller) levelError(ys, zs []float64) float64 {
	sp := max(c.spread, spread(ys), spread(zs))
	return 1.2533 * sp * math.Sqrt(1/n(ys)+1/n(zs))
}

// cutToKnee reads the knee from round hi, beyond it: past the knee the
// answer time grows as the load (a request waits for the ones ahead), so
// its level above the reference's, which answered at the floor, says how
// far: knee = load x exp(-excess). A knee that dropped is so followed in
// one move rather than by steps; it reports a cut.
func (c *controller) cutToKnee(hi *round, yhi, yref []float64) bool {
	if c.ref == nil || c.ref == hi {
		return false
	}
	lh, ok1 := median(yhi)
	lref, ok2 := median(yref)
	d := lh - lref
	if !ok1 || !ok2 || d <= 2*c.levelError(yhi, yref) {
		return false
	}
	want := hi.load() * math.Exp(kneeMargin-d)
	if want >= c.centre*math.Exp(-minCut) {
		return false
	}
	c.logf("cut to the knee: level %.3f above the reference at load %.1f: centre %.1f -> %.1f", d, hi.load(), c.centre, want)
	c.centre, c.climbs, c.run = max(want, minLimit), 0, 0
	c.knee = c.centre
	c.pending(Move{Reason: ReasonLatency})
	return true
}

// learnNorm moves the endpoints' typical answer times toward r's answers.
// Rounds are compared under the same norms, so how fast they move does not
// matter; they only take the endpoints' mix out of the comparison.
func (c *controller) learnNorm(r *round) {
	for _, a := range r.answers {
		c.norm[a.ep] += normWeight * (a.lat - c.norm[a.ep])
	}
}

// failures cuts the centre when round r failed well above the background
// share of failures, and learns that share; it reports a cut (or a round
// failing so, which says nothing of the answer times either).
func (c *controller) failures(r *round) bool {
	total := r.oks + r.fails
	if total == 0 {
		return false
	}
	share := float64(r.fails) / float64(total)
	if !c.errBaseSet {
		c.errBase, c.errBaseSet = share, true
	}
	// One cut per round trip: a round opened before the last move failed
	// at the load the cut already left.
	cut := r.fails >= errMin && share > c.errBase+errExcess && r.epoch == c.epoch
	c.errBase += errMemory * (share - c.errBase)
	if cut {
		c.phase, c.climbs, c.run = steady, 0, 0
		c.centre = max(c.centre*errCut, minLimit)
		c.pending(Move{Reason: ReasonErrors})
	}
	return r.fails >= errMin && share > c.errBase+errExcess
}

// elasticity moves the centre by eps, the elasticity measured between the
// loads of rounds lo and hi, with standard error se.
func (c *controller) elasticity(lo, hi *round, eps, se float64) {
	eps = min(max(eps, -1), 2)
	used := lo.used() || hi.used()
	// A noisy elasticity moves the centre less (a Wiener-like weight);
	// clear moves up in a row grow, the knee being farther than one move.
	w := 1 / (1 + (se/seRef)*(se/seRef))
	step := gain * w * (eps - target)
	if step > 0 && !used {
		step = 0
	}
	if step > 0 && c.run > 0 {
		step *= math.Pow(runGrowth, float64(min(c.run, runMax)))
	}
	step = min(max(step, -maxStep), maxStep)
	switch {
	case math.Abs(step) < minStep:
	case step > 0 && eps-se/2 > target:
		c.run++
	default:
		c.run = 0
	}
	if eps >= climbAgain && used {
		if c.climbs++; c.climbs >= climbRounds {
			c.phase, c.climbs, c.run = starting, 0, 0
		}
	} else {
		c.climbs = 0
	}
	if math.Abs(step) >= minStep {
		c.centre = max(c.centre*math.Exp(step), minLimit)
		c.pending(Move{Reason: ReasonLatency})
	}
}

func (c *controller) logf(format string, args ...any) {
	if c.debug != nil {
		c.debug(format, args...)
	}
}
