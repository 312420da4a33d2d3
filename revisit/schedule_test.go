package revisit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomItems are n items of both kinds with rates, ages, costs and
// importance spread over orders of magnitude; none new, over age or due a
// full walk unless the caller sets it.
func randomItems(r *rand.Rand, n int) []Item {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{
			Kind:       ItemKind(r.IntN(2)),
			Group:      []string{"a", "b", "c"}[r.IntN(3)],
			Importance: math.Exp(r.NormFloat64()),
			Rate:       math.Exp(2 * r.NormFloat64()),
			Age:        1 + 20*r.Float64(),
			PageSize:   []float64{0, 20, 50}[r.IntN(3)],
			Cost:       []float64{0, 1, 2}[r.IntN(3)],
		}
	}
	return items
}

// byPriority is the items' indexes in the order to spend in.
func byPriority(ds []Decision) []int {
	order := make([]int, len(ds))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return -cmpFloat(ds[a].Priority, ds[b].Priority) })
	return order
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestScheduleBudget: without forced visits the visited never cost more
// than the budget, and an item skipped for the budget did not fit in what
// was left when its turn came.
func TestScheduleBudget(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(10, 0))
	for trial := range 200 {
		items := randomItems(r, 1+r.IntN(60))
		var all float64
		for i := range items {
			items[i].FullWalk = r.IntN(10) == 0
			items[i].FullCost = float64(r.IntN(20))
		}
		ds, _ := Schedule(items, Config{})
		for _, d := range ds {
			all += d.Cost
		}
		budget := all * r.Float64()
		ds, sum := Schedule(items, Config{Budget: budget, Floor: -1})
		left := budget
		var cost float64
		for _, i := range byPriority(ds) {
			d := ds[i]
			switch d.Reason {
			case ReasonYield, ReasonFullWalk:
				left -= d.Cost
				cost += d.Cost
			case ReasonBudget:
				if d.Cost <= left {
					t.Fatalf("trial %d: item %d skipped for the budget with %v left, cost %v", trial, i, left, d.Cost)
				}
			default:
				t.Fatalf("trial %d: item %d: reason %q", trial, i, d.Reason)
			}
		}
		if cost > budget || sum.Cost != cost || sum.Over != 0 {
			t.Fatalf("trial %d: visits cost %v (summary %v, over %v), budget %v", trial, cost, sum.Cost, sum.Over, budget)
		}
	}
}

// TestScheduleForced: max_age and new items are visited whatever the
// budget; the rest then fit in what the forced visits left, and the
// summary says by how much the forced visits exceed the budget.
func TestScheduleForced(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 0))
	for trial := range 200 {
		items := randomItems(r, 1+r.IntN(40))
		var forced float64
		for i := range items {
			switch r.IntN(6) {
			case 0:
				items[i].Age = 30 + 10*r.Float64()
			case 1:
				items[i].New = true
				items[i].FullCost = float64(r.IntN(10))
			}
		}
		budget := 10 * r.Float64()
		ds, sum := Schedule(items, Config{Budget: budget})
		var optional float64
		for i, d := range ds {
			want := ""
			switch {
			case items[i].New:
				want = ReasonNew
			case items[i].Age >= MaxAgeDefault:
				want = ReasonMaxAge
			}
			if want != "" {
				if !d.Visit || d.Reason != want {
					t.Fatalf("trial %d: item %d: %+v, want visited for %q", trial, i, d, want)
				}
				forced += d.Cost
			} else if d.Visit {
				optional += d.Cost
			}
		}
		if optional > max(0, budget-forced)+1e-9 {
			t.Fatalf("trial %d: optional visits cost %v with %v left after %v forced", trial, optional, budget-forced, forced)
		}
		if math.Abs(sum.Forced-forced) > 1e-9 || math.Abs(sum.Over-max(0, forced+optional-budget)) > 1e-9 {
			t.Fatalf("trial %d: summary %+v, forced %v, optional %v, budget %v", trial, sum, forced, optional, budget)
		}
	}
	// A new list costs its FullCost (a whole walk); an old one over age too
	// when its walk is due.
	ds, _ := Schedule([]Item{{Kind: List, New: true, FullCost: 12}, {Kind: List, Age: 40, FullWalk: true, FullCost: 7}}, Config{})
	if ds[0].Cost != 12 || ds[1].Cost != 7 || ds[1].Reason != ReasonMaxAge {
		t.Errorf("new list and over-age list due a full walk: %+v", ds)
	}
}

// TestScheduleOrder: max_age, then full walks, then new items, then by
// yield per credit; Priority is that order, n to 1.
func TestScheduleOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(12, 0))
	items := randomItems(r, 200)
	for i := range items {
		switch r.IntN(8) {
		case 0:
			items[i].Age = 31
		case 1:
			items[i].Kind, items[i].FullWalk = List, true
		case 2:
			items[i].New = true
		}
	}
	ds, _ := Schedule(items, Config{Budget: 100})
	tier := map[string]int{ReasonMaxAge: 0, ReasonFullWalk: 1, ReasonNew: 2}
	tierOf := func(i int) int {
		if t, ok := tier[ds[i].Reason]; ok {
			return t
		}
		if items[i].Kind == List && items[i].FullWalk { // skipped for the budget
			return 1
		}
		return 3
	}
	order := byPriority(ds)
	for rank, i := range order {
		if ds[i].Priority != float64(len(items)-rank) {
			t.Fatalf("item %d at rank %d: priority %v", i, rank, ds[i].Priority)
		}
		if rank == 0 {
			continue
		}
		prev := order[rank-1]
		if tierOf(prev) > tierOf(i) {
			t.Fatalf("item %d (%s) after item %d (%s)", i, ds[i].Reason, prev, ds[prev].Reason)
		}
		if tierOf(prev) == tierOf(i) && ds[prev].Yield/ds[prev].Cost < ds[i].Yield/ds[i].Cost {
			t.Fatalf("item %d (yield per credit %v) after item %d (%v)", i, ds[i].Yield/ds[i].Cost, prev, ds[prev].Yield/ds[prev].Cost)
		}
	}
	// Visits for yield are a prefix of the yield tier by yield per credit,
	// except items that did not fit.
	skippedBudget := false
	for _, i := range order {
		switch ds[i].Reason {
		case ReasonBudget:
			skippedBudget = true
		case ReasonBelowFloor:
			if ds[i].Yield > 0 {
				t.Fatalf("item %d below no floor at %v", i, ds[i].Yield/ds[i].Cost)
			}
		}
	}
	if !skippedBudget {
		t.Fatal("a budget of 100 should skip some of 200 items")
	}
}

// TestScheduleTies: equal items go by index, and the budget takes the
// first ones.
func TestScheduleTies(t *testing.T) {
	t.Parallel()
	items := make([]Item, 10)
	for i := range items {
		items[i] = Item{Kind: Counter, Rate: 1, Age: 2, Group: "g"}
	}
	ds, sum := Schedule(items, Config{Budget: 4})
	for i, d := range ds {
		if d.Priority != float64(10-i) || d.Visit != (i < 4) {
			t.Errorf("item %d: %+v", i, d)
		}
	}
	if sum.Visit != 4 || sum.Skip != 6 || sum.Cost != 4 {
		t.Errorf("summary %+v", sum)
	}
	// At equal yield per credit, more importance per credit goes first.
	// (1 x certain change and 2 x an even chance: 1 per credit each.)
	ds, _ = Schedule([]Item{{Kind: Counter, Rate: 1e9, Age: 1, Importance: 1}, {Kind: Counter, Rate: math.Ln2, Age: 1, Importance: 2}}, Config{Budget: 1})
	if !(ds[1].Priority > ds[0].Priority) || !ds[1].Visit || ds[0].Visit {
		t.Errorf("equal yield, importance 1 and 3: %+v", ds)
	}
}

// TestScheduleFloor: without a floor the budget goes to every visit
// expected to find anything, however little; nothing is spent on one
// expected to find nothing, nor below a floor when there is one.
func TestScheduleFloor(t *testing.T) {
	t.Parallel()
	items := []Item{
		{Kind: Counter, Rate: 0.001, Age: 1},          // 0.001 per credit
		{Kind: Counter, Rate: 0.1, Age: 1},            // 0.095
		{Kind: List, Rate: 0, Age: 5},                 // nothing
		{Kind: List, Rate: 0, Age: 5, FullWalk: true}, // a due walk ignores the floor
	}
	inf := math.Inf(1)
	for _, floor := range []float64{0, -1, math.NaN()} {
		ds, sum := Schedule(items, Config{Budget: inf, Floor: floor})
		want := []string{ReasonYield, ReasonYield, ReasonBelowFloor, ReasonFullWalk}
		for i, d := range ds {
			if d.Reason != want[i] || d.Visit != (want[i] != ReasonBelowFloor) {
				t.Errorf("floor %v: item %d: %+v, want %s", floor, i, d, want[i])
			}
		}
		if sum.Over != 0 || sum.Threshold != ds[0].Yield/ds[0].Cost {
			t.Errorf("floor %v: summary %+v", floor, sum)
		}
	}
	ds, _ := Schedule(items, Config{Budget: inf, Floor: 0.01})
	if ds[0].Visit || !ds[1].Visit {
		t.Errorf("floor 0.01: %+v", ds)
	}
	ds, _ = Schedule(items, Config{Budget: inf, Floor: 0.5})
	if ds[1].Visit {
		t.Errorf("floor 0.5: %+v", ds[1])
	}
}

// TestScheduleModel: a list's visit captures Rate*Age entries for its
// first page plus the pages they fill; a counter's sees a change with
// probability 1-exp(-Rate*Age); both weighted by importance. A list's
// yield per credit grows with its age.
func TestScheduleModel(t *testing.T) {
	t.Parallel()
	items := []Item{
		{Kind: List, Rate: 10, Age: 20, PageSize: 40, Cost: 2, Importance: 3},
		{Kind: List, Rate: 10, Age: 20},
		{Kind: Counter, Rate: 0.5, Age: 2, Cost: 3, Importance: 2},
	}
	ds, sum := Schedule(items, Config{Budget: 100})
	want := []Decision{
		{Yield: 3 * 200, Cost: 2 * walkPages(200, 40)},
		{Yield: 200, Cost: walkPages(200, 50)},
		{Yield: 2 * -math.Expm1(-1), Cost: 3},
	}
	for i, d := range ds {
		if math.Abs(d.Yield-want[i].Yield) > 1e-12 || math.Abs(d.Cost-want[i].Cost) > 1e-12 || !d.Visit {
			t.Errorf("item %d: %+v, want yield %v cost %v", i, d, want[i].Yield, want[i].Cost)
		}
	}
	if sum.Yield != ds[0].Yield+ds[1].Yield+ds[2].Yield || sum.StalenessLeft != 0 {
		t.Errorf("summary %+v", sum)
	}
	prev := 0.0
	for age := 0.5; age < 30; age *= 1.5 {
		ds, _ := Schedule([]Item{{Kind: List, Rate: 2, Age: age}}, Config{})
		if pc := ds[0].Yield / ds[0].Cost; !(pc > prev) {
			t.Errorf("age %v: yield per credit %v, not above %v", age, pc, prev)
		} else {
			prev = pc
		}
	}
	// A page limit caps what a walk captures and what it costs.
	ds, _ = Schedule([]Item{{Kind: List, Rate: 100, Age: 3, MaxPages: 2}, {Kind: List, Rate: 10, Age: 3, MaxPages: 2}}, Config{})
	if ds[0].Yield != 100 || ds[0].Cost != 2 || ds[1].Yield != 30 || ds[1].Cost != min(2, walkPages(30, 50)) {
		t.Errorf("max_pages 2: %+v", ds)
	}
	// What is skipped is left unseen.
	_, sum = Schedule(items, Config{Budget: 3})
	if sum.StalenessLeft != 3*200+200 {
		t.Errorf("budget 3: staleness left %v, want the two lists' %v", sum.StalenessLeft, 800)
	}
}

// TestScheduleBadInput: zero, negative, NaN and infinite fields neither
// panic nor make a NaN; a NaN rate is the kind's prior rate.
func TestScheduleBadInput(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	odd := []float64{0, -1, nan, inf, -inf, 1e300, 1e-300}
	r := rand.New(rand.NewPCG(13, 0))
	pick := func() float64 { return odd[r.IntN(len(odd))] }
	for range 300 {
		items := make([]Item, r.IntN(30))
		for i := range items {
			items[i] = Item{Kind: ItemKind(r.IntN(4) - 1), Importance: pick(), Rate: pick(), Age: pick(),
				New: r.IntN(5) == 0, PageSize: pick(), Cost: pick(), FullWalk: r.IntN(3) == 0, FullCost: pick()}
		}
		cfg := Config{Budget: pick(), MaxAge: pick(), Floor: pick()}
		ds, sum := Schedule(items, cfg)
		for i, d := range ds {
			if math.IsNaN(d.Yield) || math.IsNaN(d.Cost) || math.IsInf(d.Yield, 0) || math.IsInf(d.Cost, 0) || !(d.Cost > 0) || d.Yield < 0 || d.Reason == "" {
				t.Fatalf("item %+v, config %+v: %+v", items[i], cfg, d)
			}
		}
		for _, v := range []float64{sum.Cost, sum.Yield, sum.StalenessLeft, sum.Forced, sum.Over, sum.Threshold} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("items %+v, config %+v: summary %+v", items, cfg, sum)
			}
		}
	}
	ds, sum := Schedule(nil, Config{Budget: nan})
	if len(ds) != 0 || sum != (Summary{}) {
		t.Errorf("no items: %v %+v", ds, sum)
	}
	ds, _ = Schedule([]Item{{Kind: Counter, Rate: nan, Age: 1}, {Kind: List, Rate: nan, Age: 1}}, Config{})
	if want := -math.Expm1(-DefaultPrior(Counter).Rate); ds[0].Yield != want {
		t.Errorf("counter with a NaN rate: yield %v, want %v", ds[0].Yield, want)
	}
	if want := DefaultPrior(List).Rate; ds[1].Yield != want {
		t.Errorf("list with a NaN rate: yield %v, want %v", ds[1].Yield, want)
	}
}

// walkPages is the expected pages of a stop-at-seen walk finding e new
// entries at size a page: the first, one more if any is new, and those
// the new ones fill beyond half a page.
func walkPages(e, size float64) float64 { return 1 - math.Expm1(-e) + max(0, e/size-0.5) }

// TestScheduleCostHigh: what a visit costs at most is never below its
// expected cost, is a whole number of pages for a list (the pages of a
// quarter more entries than expected and two standard deviations), and
// is the cost itself for a counter; a known length caps both.
func TestScheduleCostHigh(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(14, 0))
	for _, it := range randomItems(r, 300) {
		ds, _ := Schedule([]Item{it}, Config{})
		d := ds[0]
		if d.CostHigh < d.Cost {
			t.Fatalf("%+v: cost at most %v below the expected %v", it, d.CostHigh, d.Cost)
		}
		if it.Kind == Counter && d.CostHigh != d.Cost {
			t.Fatalf("counter %+v: cost at most %v, expected %v", it, d.CostHigh, d.Cost)
		}
	}
	ds, _ := Schedule([]Item{
		{Kind: List, Rate: 100, Age: 1, Cost: 15},                     // 125 + 20 = 145 entries: 2 + 2 pages
		{Kind: List, Rate: 0.01, Age: 1},                              // any new entry: 2 pages
		{Kind: List, Rate: 0, Age: 1},                                 // none: 1
		{Kind: List, Rate: 100, Age: 1, Length: 20},                   // the list's end: ceil(165/50) = 4 pages, expected min(3.5, 3)
		{Kind: List, Rate: 100, Age: 1, MaxPages: 2},                  // its page limit
		{Kind: List, Rate: 100, Age: 1, FullWalk: true, FullCost: 10}, // the last whole walk and the 3 pages of 145 new entries
	}, Config{})
	for i, want := range [][2]float64{{15 * walkPages(100, 50), 60}, {walkPages(0.01, 50), 2}, {1, 1}, {3, 4}, {2, 2}, {10, 13}} {
		if math.Abs(ds[i].Cost-want[0]) > 1e-9 || ds[i].CostHigh != want[1] {
			t.Errorf("item %d: cost %v at most %v, want %v at most %v", i, ds[i].Cost, ds[i].CostHigh, want[0], want[1])
		}
	}
}

// TestScheduleUnreached: an item no run reaches is neither visited nor
// kept credits for, whatever its age, and takes its place in the order.
func TestScheduleUnreached(t *testing.T) {
	t.Parallel()
	items := []Item{
		{Kind: List, Rate: 50, Age: 40, Unreached: true},
		{Kind: List, Rate: 1, Age: 1},
		{Kind: Counter, Rate: 1, Age: 1, Unreached: true, New: true}, // found new: visited
	}
	ds, sum := Schedule(items, Config{Budget: 3})
	if d := ds[0]; d.Visit || d.Reason != ReasonUnreached || !(d.Priority > ds[1].Priority) {
		t.Errorf("unreached over-age list: %+v", d)
	}
	if d := ds[1]; !d.Visit || d.Reason != ReasonYield {
		t.Errorf("the reached list: %+v", d)
	}
	if d := ds[2]; !d.Visit || d.Reason != ReasonNew {
		t.Errorf("a new item: %+v", d)
	}
	if sum.Unreached != 1 || sum.Forced != ds[2].Cost || sum.Cost != ds[1].Cost+ds[2].Cost {
		t.Errorf("summary %+v", sum)
	}
}

// TestScheduleSwitch: with rates that change (Config.Switch a day, to one
// like the kind's Mean), a still item long unvisited expects what the
// share of its age after a change would bring at the mean; an item faster
// than the mean expects its own rate.
func TestScheduleSwitch(t *testing.T) {
	t.Parallel()
	const q, mean, age = 0.05, 4.0, 10.0
	items := []Item{
		{Kind: List, Rate: 0, Age: age, Mean: mean},
		{Kind: List, Rate: 8, Age: age, Mean: mean},
		{Kind: Counter, Rate: 0, Age: age, Mean: 1},
		{Kind: List, Rate: 0, Age: age}, // no mean known
	}
	ds, _ := Schedule(items, Config{Switch: q})
	share := 1 + math.Expm1(-q*age)/(q*age)
	if want := age * mean * share; math.Abs(ds[0].Yield-want) > 1e-9 {
		t.Errorf("still list: yield %v, want %v", ds[0].Yield, want)
	}
	if ds[1].Yield != 80 || ds[3].Yield != 0 {
		t.Errorf("fast list %v, no mean %v", ds[1].Yield, ds[3].Yield)
	}
	if want := -math.Expm1(-age * share); math.Abs(ds[2].Yield-want) > 1e-9 {
		t.Errorf("still counter: yield %v, want %v", ds[2].Yield, want)
	}
	if ds, _ := Schedule(items, Config{}); ds[0].Yield != 0 {
		t.Errorf("no switch: still list yield %v", ds[0].Yield)
	}
}

// TestScheduleSurprise: a list expects its kind's surprise a day on top
// of its rate (bursts no estimate foresees); a counter does not.
func TestScheduleSurprise(t *testing.T) {
	t.Parallel()
	ds, _ := Schedule([]Item{
		{Kind: List, Rate: 0, Age: 3, Surprise: 5},
		{Kind: List, Rate: 2, Age: 3, Surprise: 5},
		{Kind: Counter, Rate: 0, Age: 3, Surprise: 5},
		{Kind: List, Rate: 2, Age: 3, Surprise: math.Inf(1)},
	}, Config{})
	if ds[0].Yield != 15 || ds[1].Yield != 21 || ds[2].Yield != 0 || ds[3].Yield != 6 {
		t.Errorf("yields %v %v %v %v, want 15 21 0 6", ds[0].Yield, ds[1].Yield, ds[2].Yield, ds[3].Yield)
	}
}
