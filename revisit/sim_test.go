package revisit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// simList is one list of the simulation: its true rate, the entries added
// since its last visit (not yet captured), and its visits.
type simList struct {
	rate    float64
	pending float64
	age     float64
	history []Visit
}

// simTotals is what a policy got over the simulated nights.
type simTotals struct {
	entries, credits float64
	lost             float64 // List: entries past the page limit of a walk
	// stale is, each night, the entries added and not yet captured
	// (entry-nights), or the counters changed since their visit.
	stale float64
}

// simWorld is the simulation's items before the first night and the
// events each item sees each night, the same for every policy.
type simWorld struct {
	kind              ItemKind
	lists             []simList
	arrivals          [][]float64
	pageSize, maxPage float64 // List; maxPage 0: no page limit
	everyNight        float64 // credits of visiting every item every night, expected
}

// newSimWorld is 500 items with heavy-tailed rates (Pareto of shape 1 from
// least, at most 100 a day), four weekly visits behind each, the last 0 to
// 7 days ago, and 30 nights of arrivals.
func newSimWorld(seed uint64, kind ItemKind, least, maxPage float64) *simWorld {
	const lists, nights = 500, 30
	r := rand.New(rand.NewPCG(seed, 0))
	w := &simWorld{kind: kind, pageSize: 50, maxPage: maxPage}
	w.lists = make([]simList, lists)
	for i := range w.lists {
		l := &w.lists[i]
		l.rate = min(least/(1-r.Float64()), 100)
		w.everyNight++
		if kind == List {
			w.everyNight += l.rate / w.pageSize
		}
		for range 4 {
			l.history = append(l.history, w.walk(7, poisson(r, 7*l.rate)))
		}
		l.age = 7 * r.Float64()
		l.pending = poisson(r, l.age*l.rate)
	}
	w.arrivals = make([][]float64, nights)
	for n := range w.arrivals {
		w.arrivals[n] = make([]float64, lists)
		for i := range w.arrivals[n] {
			w.arrivals[n][i] = poisson(r, w.lists[i].rate)
		}
	}
	return w
}

// walk is the visit of an item after interval days with n new events: a
// counter sees whether it changed; a list's stop-at-seen walk reads pages
// up to the first entry already seen, or to the page limit (a censored
// count).
func (w *simWorld) walk(interval, n float64) Visit {
	if w.kind == Counter {
		return Visit{Interval: interval, Events: min(n, 1)}
	}
	if w.maxPage > 0 && n >= w.maxPage*w.pageSize {
		return Visit{Interval: interval, Events: w.maxPage * w.pageSize, Censored: true}
	}
	return Visit{Interval: interval, Events: n}
}

// run plays the nights with choose picking the lists to visit each night
// (given the lists and the credits spent so far that night, and a visit
// function returning its credits); it returns the totals and the credits
// spent each night.
func (w *simWorld) run(choose func(night int, ls []simList, visit func(i int) float64)) (simTotals, []float64) {
	ls := slices.Clone(w.lists)
	for i := range ls {
		ls[i].history = slices.Clone(ls[i].history)
	}
	var tot simTotals
	spent := make([]float64, len(w.arrivals))
	for n, arrivals := range w.arrivals {
		for i := range ls {
			ls[i].pending += arrivals[i]
			ls[i].age++
		}
		choose(n, ls, func(i int) float64 {
			l := &ls[i]
			v := w.walk(l.age, l.pending)
			pages := math.Floor(v.Events/w.pageSize) + 1
			switch {
			case w.kind == Counter:
				pages = 1
			case v.Censored:
				pages = w.maxPage
			}
			tot.entries += v.Events
			if w.kind == List {
				tot.lost += l.pending - v.Events
			}
			tot.credits += pages
			spent[n] += pages
			l.history = append(l.history, v)
			l.pending, l.age = 0, 0
			return pages
		})
		for _, l := range ls {
			if w.kind == Counter {
				tot.stale += min(l.pending, 1)
			} else {
				tot.stale += l.pending
			}
		}
	}
	return tot, spent
}

// compare runs Schedule on w, on rates estimated from each item's own
// visits, with the budget, and round robin (the items in turn, at the same
// spend each night), and returns what each got.
func (w *simWorld) compare(budget float64) (greedy, robin simTotals) {
	items := make([]Item, len(w.lists))
	greedy, spent := w.run(func(_ int, ls []simList, visit func(int) float64) {
		for i, l := range ls {
			it := Item{Kind: w.kind, Age: l.age, Cost: 1}
			if w.kind == List {
				it.Rate = EstimateCount(DefaultPrior(List), l.history, 0)
				it.PageSize, it.MaxPages = w.pageSize, w.maxPage
			} else {
				it.Rate = EstimateChange(DefaultPrior(Counter), l.history, 0)
			}
			items[i] = it
		}
		ds, _ := Schedule(items, Config{Budget: budget})
		for i, d := range ds {
			if d.Visit {
				visit(i)
			}
		}
	})
	next := 0
	robin, _ = w.run(func(n int, ls []simList, visit func(int) float64) {
		for used := 0.0; used < spent[n]; next = (next + 1) % len(ls) {
			used += visit(next)
		}
	})
	return greedy, robin
}

// TestSimulationGreedyBeatsRoundRobin: 30 nights of 500 items, five
// worlds of each case, with a budget of 30% of the credits of visiting
// every item every night. Schedule, on rates estimated from each item's
// own visits, against visiting the items in turn at the same spend each
// night (the ratios are of the five worlds' totals):
//
//   - lists with no page limit: every entry is captured in the end
//     whoever visits, so at the same spend the entries per credit are
//     about the same (greedy leaves fewer waiting at the end); greedy's
//     gain is that the entries wait half as long;
//   - lists with a page limit of 2 (the example job's max_pages): round
//     robin also lets the fastest lists outgrow the limit between visits
//     and loses their entries;
//   - counters: a change not seen before the next one is lost, and round
//     robin spends most visits on counters that did not change: greedy
//     sees more changes per credit. It leaves more counters stale, though:
//     it rarely visits those that change slowly, so once they change they
//     wait long (the price of capturing changes rather than freshness).
func TestSimulationGreedyBeatsRoundRobin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		kind            ItemKind
		least, maxPage  float64
		ratio, waitFrac float64 // at least, at most (0: any)
	}{
		{"lists", List, 0.05, 0, 1, 0.65},
		{"lists, max_pages 2", List, 0.05, 2, 1.02, 0.65},
		{"counters", Counter, 0.02, 0, 1.15, 0},
	} {
		var g, rr simTotals
		budget := 0.0
		for seed := range uint64(5) {
			w := newSimWorld(20+seed, tc.kind, tc.least, tc.maxPage)
			budget = 0.3 * w.everyNight
			wg, wr := w.compare(budget)
			for _, p := range []struct{ sum, add *simTotals }{{&g, &wg}, {&rr, &wr}} {
				p.sum.entries += p.add.entries
				p.sum.credits += p.add.credits
				p.sum.lost += p.add.lost
				p.sum.stale += p.add.stale
			}
		}
		ratio, wait := (g.entries/g.credits)/(rr.entries/rr.credits), g.stale/rr.stale
		t.Logf("%s, budget about %.0f credits a night: events per credit, greedy / round robin = %.2f; waiting %.2f times as long\n"+
			"  greedy:      %6.0f events for %5.0f credits (%.3f per credit), %5.0f lost, %6.0f waiting\n"+
			"  round robin: %6.0f events for %5.0f credits (%.3f per credit), %5.0f lost, %6.0f waiting",
			tc.name, budget, ratio, wait,
			g.entries, g.credits, g.entries/g.credits, g.lost, g.stale,
			rr.entries, rr.credits, rr.entries/rr.credits, rr.lost, rr.stale)
		if ratio < tc.ratio {
			t.Errorf("%s: greedy captures %.2f times the events per credit of round robin, want >= %v", tc.name, ratio, tc.ratio)
		}
		if tc.waitFrac > 0 && wait > tc.waitFrac {
			t.Errorf("%s: greedy's events wait %.2f times as long as round robin's, want <= %v", tc.name, wait, tc.waitFrac)
		}
		if g.credits > 1.05*budget*5*30 {
			t.Errorf("%s: greedy spent %.0f credits, budget about %.0f", tc.name, g.credits, budget*5*30)
		}
	}
}
