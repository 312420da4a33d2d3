package concurrency

import (
	"math"
	"time"
)

// phase is the controller's mode.
type phase int8

const (
	// starting doubles the limit each round while the answers keep their
	// time (TCP's slow start).
	starting phase = iota
	// steady alternates rounds above and below a centre and moves the
	// centre by the elasticity the pair shows.
	steady
)

func (p phase) String() string {
	if p == starting {
		return "start"
	}
	return "steady"
}

// controller is the Limiter's state, under its lock.
type controller struct {
	cfg    Config
	limit  int     // in force
	centre float64 // the limit the rounds alternate around
	// paced is the limit slots are handed out under: it follows limit
	// down at once, and, doubling, up at most doubling the slots each
	// answer time, spread over it, so that a doubled limit does not send
	// its new requests in one burst (an upstream's bucket admits few at
	// once: the first 429s would come at a fraction of its rate).
	paced   float64
	pacedAt time.Time
	phase   phase
	dir     int8 // the open round's side of the centre in the steady phase

	open   *round
	closed []*round // closed, waiting for their answers, oldest first
	// last3 are the latest rounds evaluated with a level, oldest first:
	// the triple the steady phase reads, the pair the doubling does.
	last3 []*round
	ref   *round // a round that answered at the floor (see cutToKnee)
	// knee is the load the latest knee was read at (0: none yet).
	knee float64

	heldAt      time.Time // when slotTime was last brought up to date
	slotSeconds float64   // slot-seconds held since the start

	endpoints map[string]int
	norm      []float64 // per endpoint: its typical log answer time
	answered  bool      // any answer came (an OK, a failure, a 429)
	median    float64   // seconds: the latest round's median answer time
	mean      float64   // seconds: the latest round's mean answer time
	spread    float64   // the answer times' robust spread on the common scale (log)

	errBase    float64 // background share of failed requests
	errBaseSet bool
	climbs     int // rounds in a row at elasticity >= climbAgain
	run        int // clear moves up in a row

	why     Move    // why the centre last moved, until the next round applies it
	applied float64 // the centre the open round was set from
	epoch   int     // counts the moves of the centre
	bound   bool    // the latest round evaluated was bound by the rate
	// sizedFor is the rate the centre was last sized for, or the lowest
	// seen since (0: none seen yet): a rate above it is a probe's.
	sizedFor float64
	last     Move // the latest move of the limit, dithering aside
	moves    map[Move]int64

	debug func(format string, args ...any) // nil; a test's log
}

func (c *controller) init(cfg Config, now time.Time) {
	c.cfg = cfg
	c.centre, c.applied = float64(cfg.Initial), float64(cfg.Initial)
	c.spread = spreadInitial
	c.limit = cfg.Initial
	c.paced, c.pacedAt = 1, now
	c.dir = 1
	c.endpoints = map[string]int{}
	c.moves = map[Move]int64{}
	c.heldAt = now
	c.open = &round{start: now, limit: c.limit}
}

// holding brings the slot-time up to now, held slots having been held
// since the last call.
func (c *controller) holding(now time.Time, held int) {
	if d := now.Sub(c.heldAt).Seconds(); d > 0 {
		c.slotSeconds += float64(held) * d
		c.heldAt = now
	}
}

// acquired records a slot taken at now, held slots being held with it;
// it returns the round it belongs to.
func (c *controller) acquired(now time.Time, held int) *round {
	c.open.lastAcquired = now
	c.open.acquired++
	c.open.out++
	c.open.heldSum += held
	c.open.peak = max(c.open.peak, held)
	return c.open
}

// sample records the sample s of a slot taken in round r, given back at now.
func (c *controller) sample(_ time.Time, r *round, s Sample) {
	r.out--
	if s.Outcome == Dropped {
		return
	}
	c.answered = true
	r.queued += s.Queued.Seconds()
	r.busy += s.Latency.Seconds()
	switch s.Outcome {
	case OK:
		lat := max(s.Latency.Seconds(), 1e-6)
		ep, ok := c.endpoints[s.Endpoint]
		if !ok {
			ep = len(c.norm)
			c.endpoints[s.Endpoint] = ep
			c.norm = append(c.norm, math.Log(lat))
		}
		r.answers = append(r.answers, answer{ep: ep, lat: math.Log(lat)})
		r.oks++
		if c.median == 0 {
			c.median, c.mean = lat, lat // the first answer sets the first round's length
		}
	case Failed:
		r.fails++
	}
}

// tick evaluates the rounds whose answers are in and closes the open one
// when it has run its length, at now with held slots held.
func (c *controller) tick(now time.Time, held int) {
	c.holding(now, held)
	for len(c.closed) > 0 && c.closed[0].ready(now, c.median) {
		r := c.closed[0]
		c.closed = c.closed[1:]
		r.over = nil // ready's, asked no more
		c.evaluate(now, r)
	}
	c.followRate()
	if c.closing(now) {
		c.open.end = now
		c.closed = append(c.closed, c.open)
		c.next(c.open)
		c.open = &round{start: now, limit: c.limit, epoch: c.epoch}
	}
	c.pace(now) // last, with the limit the round just opened has
}

// followRate sizes the limit at once for a probe's rate while its slots
// are full and the rate it probes from may be a loose lower bound of the
// quota (a first read), rather than at the round's end: held at what that
// read needs, the requests in flight hold the probe back, and its 429
// comes from a bunch, under the quota (three seeds in ten at 3 s answers
// and 100/s read 65-75/s, held a minute: 0.83-0.86 of the quota, workload
// 17). Above a tight estimate the probe's 429 comes within a second or
// two and the limit is not moved (it would hold 1.9 times what the rate
// needs for nothing). Never past twice a knee seen. While doubling, the
// pacing still spreads the new slots over an answer time.
func (c *controller) followRate() {
	r := c.cfg.Rate()
	if r <= 0 || c.mean <= 0 {
		return
	}
	if c.sizedFor == 0 || r < c.sizedFor {
		c.sizedFor = r
		return
	}
	need := rateMargin*r*c.mean + rateSlack
	if c.knee > 0 {
		need = min(need, max(c.centre, kneeReach*c.knee))
	}
	if r <= c.sizedFor*(1+rateHysteresis) || need <= c.centre || float64(c.open.peak) < appLimited*float64(c.limit) || !c.cfg.Loose() {
		return
	}
	c.sizedFor = r
	m := Move{Reason: ReasonRate, Up: true}
	c.last = m
	c.moves[m]++
	c.epoch++
	c.centre, c.applied = need, need
	c.limit = min(int(math.Round(need)), c.cfg.Ceiling)
	c.open.limit = c.limit
}

// pace brings the paced limit up to now: while doubling, toward the limit
// at a rate of itself per median answer time (before any answer, Initial
// slots a second, the limit growing with them); else, or down, to it. (Steady, the rounds' smaller
// steps go at once: a round reads its load as it comes, and once the rate
// control has a bucket, that bucket paces the requests.)
func (c *controller) pace(now time.Time) {
	lim, el := float64(c.limit), now.Sub(c.pacedAt).Seconds()
	switch {
	case !c.answered && c.phase == starting:
		// Before the first answer, the answer time unknown: slots at
		// Initial a second, not in one burst, and on until an answer
		// comes rather than Initial in all: at 20 s answers the doubling
		// from Initial to what 100/s needs took seven answer times, and
		// the run a third of its quota over eight minutes (workload 17).
		// An upstream that answers within a second or two is met by a
		// few times Initial at most, which its first answers then read.
		c.paced = min(c.paced+float64(c.cfg.Initial)*el, float64(c.cfg.Ceiling))
		if c.paced > lim {
			c.limit = int(math.Ceil(c.paced))
			c.centre, c.applied, c.open.limit = float64(c.limit), float64(c.limit), c.limit
		}
	case c.paced >= lim || c.phase != starting:
		c.paced = lim
	default:
		c.paced = min(lim, c.paced+max(c.paced, 1)*el/c.median)
	}
	c.pacedAt = now
}

// untilPaced is how long after now the paced limit hands out another slot
// when held are held (0: pacing holds nothing back).
func (c *controller) untilPaced(now time.Time, held int) time.Duration {
	lim := float64(c.limit)
	if !c.answered && c.phase == starting {
		lim = float64(c.cfg.Ceiling) // the limit grows with the pacing
	}
	if c.phase != starting || c.paced >= lim || float64(held) < c.paced-1 {
		return 0
	}
	rate := float64(c.cfg.Initial) // slots a second
	if c.median > 0 {
		rate = max(c.paced, 1) / c.median
	}
	deficit := min(float64(held)+1, lim) - c.paced
	return max(time.Duration(deficit/rate*float64(time.Second)), time.Millisecond)
}

// slots is the number of slots that may be held now.
func (c *controller) slots() int { return int(c.paced) }

// closing reports whether the open round has run its length at now.
// Doubling, a round lasts an answer time and waits for the previous
// round's answers. Steady, it lasts until it has enough requests for its
// level to be read through the answer times' noise, and at least half an
// answer time: a request meets the queue its round's load makes as it is
// sent, but an upstream that shares its servers between the requests in
// hand answers by the load over the whole answer time.
func (c *controller) closing(now time.Time) bool {
	o := c.open
	el := now.Sub(o.start).Seconds()
	if c.median == 0 || el < minRound.Seconds() {
		return false
	}
	if c.phase == starting {
		return el >= c.median && len(c.closed) == 0 && (o.acquired >= minRoundSamples || o.acquired >= c.limit)
	}
	if el < roundShare*c.median {
		return false
	}
	return o.acquired >= c.want() || (el >= maxRoundLength*c.median && o.acquired >= minRoundSamples)
}

// want is how many requests a steady round takes for the standard error
// of the difference of two rounds' levels to be about levelError, given
// the spread of the answer times.
func (c *controller) want() int {
	n := 2 * math.Pow(1.2533*c.spread/levelError, 2)
	return int(min(max(n, minRoundSamples), maxRoundSamples))
}

// next sets the limit of the round after closed, which has just closed:
// doubled while starting (unless the slots were not used or the rate
// binds), else the other side of the centre; then bounded by the rate and
// the ceiling.
func (c *controller) next(closed *round) {
	reason := c.why
	c.why = Move{}
	if c.phase == starting && !c.bound && closed.used() {
		c.centre = 2 * max(c.centre, closed.load())
		if c.knee > 0 && c.centre >= kneeReach*c.knee {
			// Doubling again after a knee was seen (the upstream seemed
			// to recover): up to twice it, then steps, which grow while
			// no queue shows. Doubling on to where the queue shows would
			// overshoot it by up to four times.
			c.centre, c.phase = kneeReach*c.knee, steady
		}
		if reason.Reason == "" {
			reason = Move{Reason: ReasonStart}
		}
	}
	if r := c.cfg.Rate(); r > 0 && c.mean > 0 {
		// Held at what the rate needs; a few percent above it is left be,
		// so that the noise of the answer times does not move it.
		need := rateMargin*r*c.mean + rateSlack
		if c.centre > need*(1+rateHysteresis) || (c.centre > need && reason.Reason != "") {
			c.centre, reason = need, Move{Reason: ReasonRate}
		}
		if c.sizedFor == 0 || r < c.sizedFor || reason.Reason == ReasonRate {
			c.sizedFor = r
		}
	}
	if c.centre > float64(c.cfg.Ceiling) {
		c.centre, reason = float64(c.cfg.Ceiling), Move{Reason: ReasonCeiling}
	}
	c.centre = max(c.centre, minLimit)
	if reason.Reason != "" && math.Abs(math.Log(c.centre/c.applied)) >= minStep {
		reason.Up = c.centre > c.applied
		c.last = reason
		c.moves[reason]++
		c.epoch++
	}
	c.applied = c.centre
	limit := int(math.Round(c.centre))
	if c.phase == steady {
		c.dir = -c.dir
		limit += int(c.dir) * max(1, int(math.Round(dither*c.centre)))
	}
	c.limit = min(max(limit, minLimit), c.cfg.Ceiling)
}

// pending notes why the centre moved, for the next round's limit, and
// starts a new epoch: the rounds opened before it answer for a load left
// behind, and no longer count.
func (c *controller) pending(m Move) {
	c.why = m
	c.epoch++
}
