package revisit

import "math"

// Visit is one observation of an item between two visits.
type Visit struct {
	Interval float64 // days since the previous visit (> 0)
	Events   float64 // lists: new entries found; counters: 1 if any counter changed, else 0
	Censored bool    // Events is only a lower bound (the walk was cut short by a page cap)
}

// Prior is the belief about a new item's rate: Rate events per day, worth
// Weight days of observation. A Rate or Weight that is negative or not
// finite counts as 0; Weight 0 is no prior (the plain estimate from the
// visits alone).
type Prior struct{ Rate, Weight float64 }

// DefaultPrior is the prior of a new item of the kind (see the package doc):
// a List gains 1 entry a day worth a quarter of a day of observation, a
// Counter changes 0.2 times a day (on about one night in five) worth one
// day, so that a visit or two outweigh it.
func DefaultPrior(kind ItemKind) Prior {
	if kind == List {
		return Prior{Rate: 1, Weight: 0.25}
	}
	return Prior{Rate: 0.2, Weight: 1}
}

// gamma is the prior as a Gamma distribution: shape a = Rate*Weight,
// rate b = Weight (mean Rate).
func (p Prior) gamma() (a, b float64) {
	r, w := nonNeg(p.Rate), nonNeg(p.Weight)
	return r * w, w
}

// nonNeg is x when x is finite and positive, else 0.
func nonNeg(x float64) float64 {
	if x > 0 && !math.IsInf(x, 1) {
		return x
	}
	return 0
}

// obs is a visit as the estimators read it: w is its discount weight.
type obs struct {
	w, interval, events float64
	censored            bool
}

// weigh returns the usable visits (Interval finite and > 0, Events finite
// and >= 0) with their weights under halfLife. A visit's weight is the mean
// over its interval of 2^(-t/halfLife), t the days before the last visit:
// the events of an interval are taken as spread evenly over it, so its
// exposure and its events are discounted alike.
func weigh(visits []Visit, halfLife float64) []obs {
	out := make([]obs, 0, len(visits))
	discount := halfLife > 0 && !math.IsInf(halfLife, 1)
	k := math.Ln2 / halfLife
	age := 0.0 // days from the end of visits[i] to the last visit
	for i := len(visits) - 1; i >= 0; i-- {
		v := visits[i]
		if !(v.Interval > 0) || math.IsInf(v.Interval, 1) || !(v.Events >= 0) || math.IsInf(v.Events, 1) {
			continue
		}
		w := 1.0
		if discount {
			x := k * v.Interval
			w = math.Exp(-k*age) * -math.Expm1(-x) / x
		}
		age += v.Interval
		if w > 0 {
			out = append(out, obs{w: w, interval: v.Interval, events: v.Events, censored: v.Censored})
		}
	}
	return out
}

// EstimateCount estimates the rate (events per day) of Poisson arrivals,
// new list entries, from visits oldest first. Older visits are discounted
// with half-life halfLife days (0: no discount). It is the Gamma-Poisson
// posterior mean with prior p,
//
//	(Rate*Weight + sum w_i Events_i) / (Weight + sum w_i Interval_i),
//
// where a censored visit's Events is replaced by its expected count given
// that it is at least Events, at the estimated rate (the fixed point of EM,
// solved directly). Visits with an Interval not > 0 or Events not >= 0 are
// ignored. With no usable visit it is p's Rate; with Weight 0 and every
// visit censored, +Inf.
func EstimateCount(p Prior, visits []Visit, halfLife float64) float64 {
	a, b := p.gamma()
	obs := weigh(visits, halfLife)
	var sum, exposure float64
	censored := false
	for _, o := range obs {
		sum += o.w * o.events
		exposure += o.w * o.interval
		censored = censored || o.censored
	}
	if b+exposure == 0 {
		return nonNeg(p.Rate)
	}
	lower := (a + sum) / (b + exposure) // a censored count taken as exact
	if !censored {
		return lower
	}
	// lambda*(b+exposure) = a + sum over the visits of w*N, N the count,
	// or E[N | N >= Events] = lambda*Interval + excess when censored. The
	// lambda*Interval terms cancel, leaving a decreasing function.
	fixed, rest := a, b
	for _, o := range obs {
		if !o.censored {
			fixed += o.w * o.events
			rest += o.w * o.interval
		}
	}
	if rest == 0 { // every visit censored and no prior: no upper bound
		return math.Inf(1)
	}
	return rootDecreasing(func(lambda float64) float64 {
		s := fixed
		for _, o := range obs {
			if o.censored {
				s += o.w * poissonExcess(math.Round(o.events), lambda*o.interval)
			}
		}
		return s - lambda*rest
	}, lower)
}

// EstimateChange estimates the rate (per day) of a Poisson change process
// seen only as changed (Events > 0) or not changed at irregular intervals:
// the maximum likelihood estimator of Cho and Garcia-Molina (TOIT 2003),
// the root of
//
//	sum_changed w_i I_i/(exp(λ I_i)-1) = sum_unchanged w_i I_i,
//
// regularised by p as the mode of the posterior under the Gamma prior of
// shape Rate*Weight+1 and rate Weight: Rate*Weight/λ is added to the left
// side and Weight to the right, the pull of Weight days of observation
// with Rate*Weight changes counted. With Weight > 0 the estimate is finite
// when every visit saw a change and > 0 when none did; with no usable
// visit it is Rate. Weights w_i discount older visits as in EstimateCount.
// With Weight 0 it is the plain estimator: +Inf when every visit saw a
// change, 0 when none did.
func EstimateChange(p Prior, visits []Visit, halfLife float64) float64 {
	a, b := p.gamma()
	obs := weigh(visits, halfLife)
	if len(obs) == 0 {
		return nonNeg(p.Rate)
	}
	var changed, exposure, unchanged float64
	for _, o := range obs {
		exposure += o.w * o.interval
		if o.events > 0 {
			changed += o.w
		} else {
			unchanged += o.w * o.interval
		}
	}
	if b+unchanged == 0 { // every visit changed and no prior
		return math.Inf(1)
	}
	guess := (a + changed) / (b + exposure) // at most the estimate
	return rootDecreasing(func(lambda float64) float64 {
		s := a / lambda
		for _, o := range obs {
			if o.events > 0 {
				s += o.w * o.interval / math.Expm1(lambda*o.interval)
			}
		}
		return s - (b + unchanged)
	}, guess)
}

// The range of rates the estimators solve in, per day.
const (
	rateMin = 1e-12
	rateMax = 1e12
)

// rootDecreasing is the root of f, decreasing on (0, +Inf), within a
// relative 1e-9, searched from guess: 0 when f <= 0 at rateMin, +Inf when
// f > 0 at rateMax.
func rootDecreasing(f func(float64) float64, guess float64) float64 {
	guess = min(max(guess, rateMin), rateMax)
	if math.IsNaN(guess) {
		guess = 1
	}
	lo, hi := guess, guess
	if f(guess) > 0 {
		for {
			if hi == rateMax {
				return math.Inf(1)
			}
			lo, hi = hi, min(hi*4, rateMax)
			if f(hi) <= 0 {
				break
			}
		}
	} else {
		for {
			if lo == rateMin {
				return 0
			}
			lo, hi = max(lo/4, rateMin), lo
			if f(lo) > 0 {
				break
			}
		}
	}
	for hi > lo*(1+1e-9) { // f(lo) > 0 >= f(hi)
		mid := math.Sqrt(lo * hi)
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// poissonExcess is E[N | N >= e] - mu for N Poisson with mean mu, which
// is e*p(e)/P(N>=e): between 0 and e, decreasing in mu.
func poissonExcess(e, mu float64) float64 {
	if e <= 0 {
		return 0
	}
	if mu <= 0 {
		return e
	}
	// q = P(N>=e)/p(e), P(N>=e) being the regularized incomplete gamma
	// function P(e, mu) (Numerical Recipes 6.2: its series below e+1, the
	// continued fraction of 1-P above).
	var q float64
	if mu < e+1 {
		q = gammaSeries(e, mu)
	} else {
		lp := e*math.Log(mu) - mu - lgamma(e+1) // log p(e)
		q = (1 - gammaQ(e, mu)) * math.Exp(-lp)
	}
	if !(q >= 1) { // q >= 1 always; guards rounding
		q = 1
	}
	return e / q
}

// maxTerms bounds the iterations of the incomplete gamma function; they
// need about 8*sqrt(e) for e the events of a censored visit.
const maxTerms = 100_000

// gammaSeries is sum_{n>=0} x^n / ((a+1)...(a+n)) = P(a,x) / (e^-x x^a / Γ(a+1)),
// for x < a+1.
func gammaSeries(a, x float64) float64 {
	sum, term := 1.0, 1.0
	for n := 1; n < maxTerms; n++ {
		term *= x / (a + float64(n))
		sum += term
		if term < sum*1e-15 {
			break
		}
	}
	return sum
}

// gammaQ is the regularized upper incomplete gamma function Q(a,x) =
// 1-P(a,x) by its continued fraction (modified Lentz), for x >= a+1.
func gammaQ(a, x float64) float64 {
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < maxTerms; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lgamma(a)) * h
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}
