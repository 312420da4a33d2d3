package world

import (
	"cmp"
	"math"
	"slices"
)

// Churn worlds of Config.Churn: how an account changes from one world day
// to the next.
const (
	// ChurnLinear is the world of docs/sandbox.md's List growth: follow lists
	// grow at their head by a fixed number of entries a day (r<N>, or the
	// followerCount's hash-derived rate), counters drift by a fixed amount a
	// day, and nothing is ever removed.
	ChurnLinear = "linear"
	// ChurnHeavyTail gives every account whose handle has no r<N> token
	// per-account rates drawn from heavy-tailed mixes (most accounts still, a
	// few fast): a day's arrivals are Poisson draws, a minority of accounts
	// lose entries on hash-chosen days, and the counters drift irregularly.
	// It lets a benchmark compare revisit policies against ground truth
	// (ChurnTruth, ChurnChanges, ChurnRatesOf).
	ChurnHeavyTail = "heavytail"
	// ChurnDefault is the world when Config.Churn is "".
	ChurnDefault = ChurnLinear
)

// RateClass is the band of a heavy-tailed mix an account's rate fell in.
type RateClass string

// Rate classes of the mixes, and RateFixed for the linear laws.
const (
	RateStill    RateClass = "still"    // no events at all
	RateSlow     RateClass = "slow"     // well under one event a day
	RateModerate RateClass = "moderate" // a few a day
	RateFast     RateClass = "fast"     // tens to hundreds a day
	// RateFixed is a linear law: the same number every day (an r<N> token,
	// or the linear world's hash-derived rates), not a Poisson draw.
	RateFixed RateClass = "fixed"
)

// rateBand is one band of a mix: perMille accounts in 1000 fall in it, and
// their rate is log-uniform in [lo, hi] events a day (0 for RateStill).
type rateBand struct {
	class    RateClass
	perMille uint64
	lo, hi   float64
}

// rateMix is a heavy-tailed mix of rates; its perMille sum to 1000.
type rateMix []rateBand

// The mixes of the heavytail world, declared once: docs/sandbox.md copies
// them, and TestChurnMix checks 2000 handles against them.
var (
	// followersMix: arrivals on an account's followers list.
	followersMix = rateMix{{RateStill, 600, 0, 0}, {RateSlow, 250, 0.05, 0.5}, {RateModerate, 120, 1, 10}, {RateFast, 30, 20, 200}}
	// followingMix: the accounts it starts following; slower.
	followingMix = rateMix{{RateStill, 700, 0, 0}, {RateSlow, 250, 0.02, 0.2}, {RateModerate, 45, 0.5, 3}, {RateFast, 5, 5, 20}}
	// lossMix: removal draws a day on either list (unfollowed by others,
	// or unfollowing others); 12% of the lists lose entries.
	lossMix = rateMix{{RateStill, 880, 0, 0}, {RateSlow, 100, 0.02, 0.3}, {RateModerate, 20, 0.5, 3}}
	// Counter increments a day.
	heartMix = rateMix{{RateStill, 600, 0, 0}, {RateSlow, 250, 1, 50}, {RateModerate, 120, 100, 2_000}, {RateFast, 30, 5_000, 100_000}}
	videoMix = rateMix{{RateStill, 600, 0, 0}, {RateSlow, 250, 0.02, 0.2}, {RateModerate, 120, 0.3, 2}, {RateFast, 30, 3, 10}}
	diggMix  = rateMix{{RateStill, 600, 0, 0}, {RateSlow, 250, 0.1, 5}, {RateModerate, 120, 10, 100}, {RateFast, 30, 200, 1_000}}
)

// ChurnRate is one true rate of an account: the mean number of events a
// day of one stream, and the band of its mix it was drawn from.
type ChurnRate struct {
	Class  RateClass
	PerDay float64
}

// draw is the rate of stream field of handle: the band by
// H("churn", handle, field+".class") % 1000, the rate log-uniform in the
// band by H("churn", handle, field+".rate").
func (m rateMix) draw(handle, field string) ChurnRate {
	u := hashOf("churn", handle, field+".class") % 1000
	b := m[len(m)-1]
	for _, band := range m {
		if u < band.perMille {
			b = band
			break
		}
		u -= band.perMille
	}
	if b.hi == 0 {
		return ChurnRate{Class: b.class}
	}
	f := float64(hashOf("churn", handle, field+".rate")>>11) / (1 << 53)
	return ChurnRate{Class: b.class, PerDay: b.lo * math.Exp(f*math.Log(b.hi/b.lo))}
}

// dayRNG is the stream of draws of day k of a stream whose seed is
// H("churn", handle, field): mix64(seed + k) starts it, so days are
// independent and any day is reachable without the ones before.
func dayRNG(seed uint64, k int64) rng { return rng{mix64(seed + uint64(k))} }

// uniform is a float64 in (0, 1), never 0 nor 1.
func (r *rng) uniform() float64 { return (float64(r.next()>>11) + 0.5) / (1 << 53) }

// poisson samples Poisson(lambda) from uniforms: Knuth's product method
// below 10 (lambda+1 uniforms on average), Hörmann's PTRS transformed
// rejection from 10 up (about 1.2 pairs whatever lambda), so a fast account
// costs O(1) a day. The constants are computed once per stream.
type poisson struct {
	lambda, limit                       float64 // limit = e^-lambda (Knuth)
	logLambda, a, b, invAlpha, vr, slam float64 // PTRS
}

func newPoisson(lambda float64) poisson {
	p := poisson{lambda: lambda}
	if lambda < 10 {
		p.limit = math.Exp(-lambda)
		return p
	}
	p.slam = math.Sqrt(lambda)
	p.logLambda = math.Log(lambda)
	p.b = 0.931 + 2.53*p.slam
	p.a = -0.059 + 0.02483*p.b
	p.invAlpha = 1.1239 + 1.1328/(p.b-3.4)
	p.vr = 0.9277 - 3.6224/(p.b-2)
	return p
}

func (p poisson) draw(r *rng) int64 {
	if p.lambda <= 0 {
		return 0
	}
	if p.lambda < 10 {
		k, prod := int64(0), r.uniform()
		for prod > p.limit {
			k++
			prod *= r.uniform()
		}
		return k
	}
	for {
		u := r.uniform() - 0.5
		v := r.uniform()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*p.a/us+p.b)*u + p.lambda + 0.43)
		if us >= 0.07 && v <= p.vr {
			return int64(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(p.invAlpha)-math.Log(p.a/(us*us)+p.b) <= -p.lambda+k*p.logLambda-lg {
			return int64(k)
		}
	}
}

// sumDraws is the total of the Poisson(rate) draws of days 1..day of the
// stream seeded by seed: O(day), nothing for a still stream.
func sumDraws(seed uint64, rate float64, day int64) int64 {
	if rate <= 0 {
		return 0
	}
	p, n := newPoisson(rate), int64(0)
	for k := int64(1); k <= day; k++ {
		r := dayRNG(seed, k)
		n += p.draw(&r)
	}
	return n
}

// followLaw is how one follow list (followers or following) of an account
// changes. Entries keep the indexes of List growth: 0..day0-1 for the
// day-0 list, -1, -2, ... for the entries added after day 0, in order of
// arrival; the list shows them by ascending index, so newest first.
type followLaw struct {
	day0 int64
	// fixed is the linear law's entries a day (churn false).
	fixed int64
	// churn: arrive.PerDay entries a day on average (a Poisson draw from
	// H("churn", handle, kind) and the day), and lose.PerDay removal draws
	// a day (from H("churn", handle, kind+".loss") and the day).
	churn                bool
	arrive, lose         ChurnRate
	arriveSeed, loseSeed uint64
	// rateAt, when set, is the arrivals' rate of day k (the bursts and
	// drift worlds, churnworlds.go), in place of arrive.PerDay.
	rateAt func(k int64) float64
}

func newFollowLaw(handle, kind string, day0 int64, mix rateMix) followLaw {
	return followLaw{
		day0:       day0,
		churn:      true,
		arrive:     mix.draw(handle, kind),
		lose:       lossMix.draw(handle, kind+".loss"),
		arriveSeed: hashOf("churn", handle, kind),
		loseSeed:   hashOf("churn", handle, kind+".loss"),
	}
}

// rates are the law's rates as ChurnTruth reports them.
func (l followLaw) rates() (arrive, lose ChurnRate) {
	if !l.churn {
		return ChurnRate{Class: RateFixed, PerDay: float64(l.fixed)}, ChurnRate{Class: RateStill}
	}
	return l.arrive, l.lose
}

// removal is an entry removed from a list on a day (it is absent from that
// day on).
type removal struct{ index, day int64 }

// followState is a follow list at a day: entries of indexes -arrived ..
// day0-1 but the removed ones.
type followState struct {
	day0, arrived int64
	removed       []removal // by ascending index
}

// at is the list at day. Day k (1..day) first removes, then adds: its
// removal draws each pick an index uniformly among the day0 + A(k-1)
// indexes that existed at the end of day k-1 (a pick of an entry already
// removed removes nothing, so a list empties ever more slowly), then its
// arrivals take indexes -A(k-1)-1 .. -A(k). O(day + removals·log).
func (l followLaw) at(day int64) followState {
	s := followState{day0: l.day0}
	if !l.churn {
		s.arrived = l.fixed * day
		return s
	}
	if l.arrive.PerDay == 0 && l.lose.PerDay == 0 && l.rateAt == nil {
		return s
	}
	arrive, lose := newPoisson(l.arrive.PerDay), newPoisson(l.lose.PerDay)
	var gone map[int64]bool
	for k := int64(1); k <= day; k++ {
		s.removeDay(k, lose, l.loseSeed, &gone)
		switch {
		case l.rateAt != nil:
			if rate := l.rateAt(k); rate > 0 {
				r := dayRNG(l.arriveSeed, k)
				s.arrived += newPoisson(rate).draw(&r)
			}
		case l.arrive.PerDay > 0:
			r := dayRNG(l.arriveSeed, k)
			s.arrived += arrive.draw(&r)
		}
	}
	slices.SortFunc(s.removed, func(a, b removal) int { return cmp.Compare(a.index, b.index) })
	return s
}

// removeDay makes day k's removals (a Poisson draw of lose from seed
// and k): each picks an index uniformly among the day0 + arrived indexes
// that existed at the end of day k-1; a pick of an entry already gone
// (gone, made on first use) removes nothing. Shared by the follow and
// content laws, so their lists lose entries alike.
func (s *followState) removeDay(k int64, lose poisson, seed uint64, gone *map[int64]bool) {
	if lose.lambda <= 0 {
		return
	}
	r := dayRNG(seed, k)
	size := uint64(s.day0 + s.arrived)
	for n := lose.draw(&r); n > 0 && size > 0; n-- {
		i := int64(r.next()%size) - s.arrived
		if !(*gone)[i] {
			if *gone == nil {
				*gone = map[int64]bool{}
			}
			(*gone)[i] = true
			s.removed = append(s.removed, removal{index: i, day: k})
		}
	}
}

// length is the number of entries the list shows.
func (s followState) length() int64 { return s.day0 + s.arrived - int64(len(s.removed)) }

// indexes are the entry indexes at positions [start, end) (0 = newest).
// Positions past the length go on with the day-0 indexes, for the endless
// token. O(removals + end - start); without removals position p is index
// p - arrived, as headIndex.
func (s followState) indexes(start, end int64) []int64 {
	out := make([]int64, 0, max(0, end-start))
	idx, j := start-s.arrived, 0
	for j < len(s.removed) && s.removed[j].index <= idx {
		idx++
		j++
	}
	for p := start; p < end; p++ {
		out = append(out, idx)
		idx++
		for j < len(s.removed) && s.removed[j].index == idx {
			idx++
			j++
		}
	}
	return out
}

// counterLaw is a profile counter: base H("account", handle, field) %
// baseMod; the linear world adds rate(account, handle, field, rateMod) a
// day, the heavytail world a Poisson draw a day at a rate from mix.
type counterLaw struct {
	field            string
	baseMod, rateMod uint64
	mix              rateMix
}

// The counters that churn, declared once.
var (
	heartCounter = counterLaw{"heartCount", 1_000_000, 1_000, heartMix}
	videoCounter = counterLaw{"videoCount", 500, 3, videoMix}
	diggCounter  = counterLaw{"diggCount", 10_000, 50, diggMix}
	postsCounter = counterLaw{"posts", 1_000, 3, videoMix} // photosocial edge_owner_to_timeline_media
)

// counter is the value of c for account a at the world's day.
func (w *World) counter(a Account, c counterLaw) int64 {
	if !a.churn {
		return w.grow("account", a.Handle, c.field, c.baseMod, c.rateMod)
	}
	return pick("account", a.Handle, c.field, c.baseMod) +
		sumDraws(hashOf("churn", a.Handle, c.field), c.mix.draw(a.Handle, c.field).PerDay, w.day)
}

// counterRate is c's true rate for account a.
func counterRate(a Account, c counterLaw) ChurnRate {
	if !a.churn {
		return ChurnRate{Class: RateFixed, PerDay: float64(rate("account", a.Handle, c.field, c.rateMod))}
	}
	return c.mix.draw(a.Handle, c.field)
}
