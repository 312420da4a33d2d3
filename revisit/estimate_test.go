package revisit

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// poisson draws a Poisson count of mean mu by counting unit-rate arrivals.
func poisson(r *rand.Rand, mu float64) float64 {
	n := 0.0
	for t := r.ExpFloat64(); t < mu; t += r.ExpFloat64() {
		n++
	}
	return n
}

// countHistory is n visits at intervals uniform in [1, 7) days of a list
// gaining rate(t) entries a day at day t.
func countHistory(r *rand.Rand, n int, rate func(t float64) float64) []Visit {
	vs := make([]Visit, n)
	t := 0.0
	for i := range vs {
		iv := 1 + 6*r.Float64()
		vs[i] = Visit{Interval: iv, Events: poisson(r, rate(t+iv/2)*iv)}
		t += iv
	}
	return vs
}

// changeHistory is countHistory seen as changed or not.
func changeHistory(r *rand.Rand, n int, rate float64) []Visit {
	vs := make([]Visit, n)
	for i := range vs {
		iv := 1 + 6*r.Float64()
		if r.Float64() < -math.Expm1(-rate*iv) {
			vs[i].Events = 1
		}
		vs[i].Interval = iv
	}
	return vs
}

func constant(rate float64) func(float64) float64 { return func(float64) float64 { return rate } }

// errStats are relative errors over many histories.
type errStats struct{ median, p95, rms float64 }

func statsOf(errs []float64) errStats {
	abs := make([]float64, len(errs))
	var ss float64
	for i, e := range errs {
		abs[i] = math.Abs(e)
		ss += e * e
	}
	slices.Sort(abs)
	return errStats{abs[len(abs)/2], abs[len(abs)*95/100], math.Sqrt(ss / float64(len(errs)))}
}

// recovery runs est on 400 histories per rate and returns the relative
// errors' stats and the best root mean square relative error any unbiased
// estimator can have on those histories (the Cramér-Rao bound, from the
// Fisher information of a visit, info(rate, interval)).
func recovery(seed uint64, rate float64, history func(r *rand.Rand) []Visit, est func([]Visit) float64, info func(rate, interval float64) float64) (errStats, float64) {
	r := rand.New(rand.NewPCG(seed, math.Float64bits(rate)))
	const n = 400
	errs := make([]float64, n)
	var bound float64
	for i := range errs {
		vs := history(r)
		var j float64
		for _, v := range vs {
			j += info(rate, v.Interval)
		}
		bound += 1 / (rate * rate * j)
		errs[i] = est(vs)/rate - 1
	}
	return statsOf(errs), math.Sqrt(bound / n)
}

// TestEstimateCountRecoversRate: 40 visits at intervals of 1 to 7 days
// (160 days, 160*rate entries). The error is the Poisson noise of that
// many entries, 1/sqrt(160*rate): the root mean square relative error is
// within 1.3 times it at every rate, and the 95th percentile within 15%
// from 2 entries a day (at 0.05/day, 8 entries in 160 days, nothing can
// tell the rate within 35%).
func TestEstimateCountRecoversRate(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, rate := range []float64{0.05, 0.1, 0.2, 0.5, 1, 2, 5, 20, 50} {
		s, limit := recovery(1, rate,
			func(r *rand.Rand) []Visit { return countHistory(r, 40, constant(rate)) },
			func(vs []Visit) float64 { return EstimateCount(DefaultPrior(List), vs, 0) },
			func(rate, iv float64) float64 { return iv / rate })
		fmt.Fprintf(&b, "%6.2f/day: median %5.1f%%  p95 %5.1f%%  rms %5.1f%%  (poisson limit %5.1f%%)\n",
			rate, 100*s.median, 100*s.p95, 100*s.rms, 100*limit)
		if s.rms > 1.3*limit {
			t.Errorf("rate %v: rms relative error %.3f, over 1.3 times the limit %.3f", rate, s.rms, limit)
		}
		if rate >= 2 && s.p95 > 0.15 {
			t.Errorf("rate %v: 95th percentile of the relative error %.3f, want <= 0.15", rate, s.p95)
		}
	}
	t.Log("EstimateCount, 40 visits, 400 histories per rate:\n" + b.String())
}

// TestEstimateChangeRecoversRate: the same 40 visits seen only as changed
// or not. A visit tells little when the rate is far from 1/interval, so
// the error is larger than a count's: the root mean square relative error
// is within 1.3 times the Cramér-Rao bound at every rate, the median
// within 30% from 0.05 to 1 change a day, 45% at 0.02 (about 3 changes
// are seen in 160 days).
func TestEstimateChangeRecoversRate(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, rate := range []float64{0.02, 0.05, 0.1, 0.2, 0.5, 1} {
		s, limit := recovery(2, rate,
			func(r *rand.Rand) []Visit { return changeHistory(r, 40, rate) },
			func(vs []Visit) float64 { return EstimateChange(DefaultPrior(Counter), vs, 0) },
			func(rate, iv float64) float64 {
				x := rate * iv
				return iv * iv * math.Exp(-x) / -math.Expm1(-x)
			})
		fmt.Fprintf(&b, "%6.2f/day: median %5.1f%%  p95 %5.1f%%  rms %5.1f%%  (cramer-rao %5.1f%%)\n",
			rate, 100*s.median, 100*s.p95, 100*s.rms, 100*limit)
		if s.rms > 1.3*limit {
			t.Errorf("rate %v: rms relative error %.3f, over 1.3 times the bound %.3f", rate, s.rms, limit)
		}
		if want := cmp.Or(map[float64]float64{0.02: 0.45}[rate], 0.30); s.median > want {
			t.Errorf("rate %v: median relative error %.3f, want <= %v", rate, s.median, want)
		}
	}
	t.Log("EstimateChange, 40 visits, 400 histories per rate:\n" + b.String())
}

// TestEstimateCountCensored: a list gaining 40 entries a day walked with a
// cap of 3 pages (150 entries) is cut short on visits over 3.75 days. Taken
// as exact, the capped counts make the rate 25% too low; as lower bounds
// the estimate is within the Poisson noise of the visits under the cap.
func TestEstimateCountCensored(t *testing.T) {
	t.Parallel()
	const rate, limit = 40.0, 150.0
	r := rand.New(rand.NewPCG(3, 0))
	var exact, censored []float64
	for range 200 {
		vs := countHistory(r, 40, constant(rate))
		for i := range vs {
			if vs[i].Events >= limit {
				vs[i] = Visit{Interval: vs[i].Interval, Events: limit, Censored: true}
			}
		}
		c := EstimateCount(DefaultPrior(List), vs, 0)
		for i := range vs {
			vs[i].Censored = false
		}
		e := EstimateCount(DefaultPrior(List), vs, 0)
		if c < e {
			t.Fatalf("censored estimate %v under the estimate taking the caps as exact %v", c, e)
		}
		exact, censored = append(exact, e/rate-1), append(censored, c/rate-1)
	}
	se, sc := statsOf(exact), statsOf(censored)
	t.Logf("rate %v, cap %v: caps as exact: median error %.1f%%; as lower bounds: median %.1f%%, p95 %.1f%%",
		rate, limit, 100*se.median, 100*sc.median, 100*sc.p95)
	if se.median < 0.15 {
		t.Errorf("caps taken as exact: median error %.3f; the test's caps cut too little", se.median)
	}
	if sc.median > 0.03 || sc.p95 > 0.10 {
		t.Errorf("censored: median error %.3f, p95 %.3f; want <= 0.03, 0.10", sc.median, sc.p95)
	}
}

// TestEstimateCountAllCensored: when every visit hit the cap the data only
// say "at least": the estimate is at least the capped rate, finite with a
// prior, +Inf without.
func TestEstimateCountAllCensored(t *testing.T) {
	t.Parallel()
	vs := []Visit{{Interval: 2, Events: 100, Censored: true}, {Interval: 3, Events: 100, Censored: true}}
	got := EstimateCount(DefaultPrior(List), vs, 0)
	if floor := 200.0 / 6; !(got >= floor) || math.IsInf(got, 0) {
		t.Errorf("EstimateCount = %v, want finite >= %v", got, floor)
	}
	if got := EstimateCount(Prior{}, vs, 0); !math.IsInf(got, 1) {
		t.Errorf("EstimateCount without prior = %v, want +Inf", got)
	}
}

// TestPoissonExcess checks E[N | N >= e] - mu against sums of the
// probabilities, on both sides of the series / continued fraction switch.
func TestPoissonExcess(t *testing.T) {
	t.Parallel()
	for _, e := range []float64{1, 2, 5, 50, 150, 500} {
		for _, mu := range []float64{0.01, 1, e / 2, e, e + 1, 1.5 * e, 3 * e, 10 * e} {
			// P(N>=e) and E[N; N>=e], over the largest p(k), k >= e.
			var logp []float64
			for k := e; k < e+mu+60*math.Sqrt(mu+1)+100; k++ {
				logp = append(logp, k*math.Log(mu)-lgamma(k+1))
			}
			top := slices.Max(logp)
			var tail, mean float64
			for i, l := range logp {
				tail += math.Exp(l - top)
				mean += (e + float64(i)) * math.Exp(l-top)
			}
			want := mean/tail - mu
			got := poissonExcess(e, mu)
			if !(math.Abs(got-want) <= 1e-6*(1+want)) {
				t.Errorf("poissonExcess(%v, %v) = %v, want %v", e, mu, got, want)
			}
		}
	}
}

// TestEstimatePrior: with no usable visit an estimate is the prior's rate;
// the prior keeps it finite when every visit changed and > 0 when none did.
func TestEstimatePrior(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	unusable := []Visit{{Interval: 0, Events: 3}, {Interval: -1}, {Interval: nan}, {Interval: inf, Events: 1}, {Interval: 1, Events: nan}, {Interval: 1, Events: -2}}
	for _, kind := range []ItemKind{List, Counter} {
		p := DefaultPrior(kind)
		for _, vs := range [][]Visit{nil, unusable} {
			if got := EstimateCount(p, vs, 0); got != p.Rate {
				t.Errorf("EstimateCount(%v, %v) = %v, want the prior's %v", p, vs, got, p.Rate)
			}
			if got := EstimateChange(p, vs, 7); math.Abs(got-p.Rate) > 1e-8*p.Rate {
				t.Errorf("EstimateChange(%v, %v) = %v, want the prior's %v", p, vs, got, p.Rate)
			}
		}
	}
	all := []Visit{{Interval: 1, Events: 1}, {Interval: 1, Events: 1}, {Interval: 2, Events: 1}}
	none := []Visit{{Interval: 1}, {Interval: 3}, {Interval: 7}}
	p := DefaultPrior(Counter)
	if got := EstimateChange(p, all, 0); !(got > 1) || math.IsInf(got, 0) {
		t.Errorf("EstimateChange, every visit changed: %v, want finite and > 1/day", got)
	}
	if got := EstimateChange(p, none, 0); !(got > 0 && got < p.Rate) {
		t.Errorf("EstimateChange, no visit changed: %v, want in (0, %v)", got, p.Rate)
	}
	if got := EstimateChange(Prior{}, all, 0); !math.IsInf(got, 1) {
		t.Errorf("EstimateChange without prior, every visit changed: %v, want +Inf", got)
	}
	if got := EstimateChange(Prior{}, none, 0); got != 0 {
		t.Errorf("EstimateChange without prior, no visit changed: %v, want 0", got)
	}
	for _, bad := range []Prior{{nan, nan}, {-1, -1}, {inf, inf}, {1, 0}} {
		for _, vs := range [][]Visit{nil, all, none} {
			c, ch := EstimateCount(bad, vs, nan), EstimateChange(bad, vs, -1)
			if math.IsNaN(c) || c < 0 || math.IsNaN(ch) || ch < 0 {
				t.Errorf("prior %v, visits %v: EstimateCount %v, EstimateChange %v", bad, vs, c, ch)
			}
		}
	}
	// One visit moves the estimate from the prior towards the data by the
	// days observed over the days the prior is worth.
	if got, want := EstimateCount(Prior{Rate: 1, Weight: 1}, []Visit{{Interval: 3, Events: 9}}, 0), 10.0/4; got != want {
		t.Errorf("EstimateCount, one visit: %v, want %v", got, want)
	}
}

// TestEstimateDiscountTracksChange: a list gaining 1 entry a day for 20
// visits then 10 a day for 20 more. With a half-life of 7 days the
// estimate follows the new rate; with none it mixes the two.
func TestEstimateDiscountTracksChange(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 0))
	var tracked, mixed, steady []float64
	for range 200 {
		var vs []Visit
		for i := range 2 {
			vs = append(vs, countHistory(r, 20, constant([]float64{1, 10}[i]))...)
		}
		tracked = append(tracked, EstimateCount(DefaultPrior(List), vs, 7)/10-1)
		mixed = append(mixed, EstimateCount(DefaultPrior(List), vs, 0))
		steady = append(steady, EstimateCount(DefaultPrior(List), countHistory(r, 40, constant(10)), 7)/10-1)
	}
	slices.Sort(mixed)
	st, ss := statsOf(tracked), statsOf(steady)
	t.Logf("rate 1 then 10/day: half-life 7 d: median error %.1f%%, p95 %.1f%%; no discount: median estimate %.2f/day; steady 10/day with half-life 7 d: median error %.1f%%",
		100*st.median, 100*st.p95, mixed[len(mixed)/2], 100*ss.median)
	if st.median > 0.10 || st.p95 > 0.30 {
		t.Errorf("half-life 7 days: median error %.3f, p95 %.3f; want <= 0.10, 0.30", st.median, st.p95)
	}
	if m := mixed[len(mixed)/2]; m > 7 {
		t.Errorf("no discount: median estimate %.2f, want the mix of the two rates (< 7)", m)
	}
	if ss.median > 0.10 {
		t.Errorf("steady rate, half-life 7 days: median error %.3f, want <= 0.10", ss.median)
	}
	// A change counter tracks too.
	var vs []Visit
	vs = append(vs, changeHistory(r, 30, 0.05)...)
	vs = append(vs, changeHistory(r, 20, 0.5)...)
	if got := EstimateChange(DefaultPrior(Counter), vs, 7); got < 0.25 {
		t.Errorf("EstimateChange after a rise from 0.05 to 0.5/day, half-life 7 days: %v", got)
	}
}
