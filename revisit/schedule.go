package revisit

import (
	"cmp"
	"math"
	"slices"
)

// Item is a candidate revisit tonight. Values out of range are read as
// their defaults (see each field); huge ones are clamped (rates to 1e9 a
// day, ages to ten years, costs and importance to 1e9, page sizes to at
// least 1) so that no sum overflows.
type Item struct {
	Kind       ItemKind // an unknown kind is read as Counter
	Group      string   // the seed list it came from (importance is per group)
	Importance float64  // weight (default 1 when 0, negative or NaN)
	// Rate is the estimated events per day (List: new entries/day;
	// Counter: changes/day). NaN or infinite: the kind's DefaultPrior
	// rate; negative: 0.
	Rate float64
	Age  float64 // days since its last visit (negative or NaN: 0; +Inf: ten years)
	// New is an item never visited: explored first, whatever the budget.
	// Its visit is a whole walk for a List: it costs FullCost when that
	// is set.
	New      bool
	PageSize float64 // entries per page (List), default 50 when not > 0
	// MaxPages is the page limit of the walk (List; limits.max_pages):
	// a visit captures at most MaxPages*PageSize entries. 0 (or not > 0):
	// none.
	MaxPages float64
	// Length is the entries the list holds as far as is known (List; 0:
	// unknown): a walk reads at most the pages of those and the new ones.
	Length float64
	// Cost is the credits of a page (List: every page costs what the
	// first does, 15 for comments with replies) or of the visit
	// (Counter); default 1 when not > 0.
	Cost float64
	// Unreached is an item none of the latest runs found (its seed
	// removed, its account gone from the list that led to it): the
	// schedule neither visits it nor keeps credits for it, whatever its
	// age; a run that finds it after all visits it if the budget has room.
	Unreached bool
	// Mean is the mean rate of the items of its kind (0: none known):
	// rates change (a burst, a drift), each day with probability
	// Config.Switch, to one like another item's. What a visit expects
	// over age A is then about Rate*A + Switch*A^2/2*(Mean-Rate) when
	// Mean is the higher (while Switch*A is small): an item long unvisited
	// is worth a look, however still it was.
	Mean float64
	// Surprise is new events a day that come on top of Rate, that no
	// estimate foresees (bursts), for any item of its kind: what the
	// kind's recent visits found beyond their estimates (List; 0: none).
	Surprise float64
	// FullWalk is a complete walk due (its counter moved more than the
	// edges captured explain); List only.
	FullWalk bool
	FullCost float64 // credits of a complete walk (pages of the last complete walk); default: the visit's Cost when not > 0
}

// Defaults of Config and Item fields left zero.
const (
	MaxAgeDefault   = 30.0 // days (Config.MaxAge)
	PageSizeDefault = 50.0 // entries per page (Item.PageSize)
)

// Config is a night's budget and its limits.
type Config struct {
	Budget float64 // credits for the night (the job's max_credits); negative or NaN: 0
	// MaxAge is the age in days from which an item is visited whatever
	// its yield and the budget (default MaxAgeDefault when not > 0; +Inf:
	// never).
	MaxAge float64
	// Floor is the expected events per credit below which nothing is spent
	// on yield. 0 (or not > 0): none, the budget is spent while a visit is
	// expected to find anything.
	Floor float64
	// Switch is the chance a day that an item's rate changes to one like
	// its kind's Mean (0 or not > 0: never).
	Switch float64
}

func (c Config) withDefaults() Config {
	if !(c.Budget >= 0) {
		c.Budget = 0
	}
	if !(c.MaxAge > 0) {
		c.MaxAge = MaxAgeDefault
	}
	if !(c.Floor > 0) {
		c.Floor = 0
	}
	if !(c.Switch > 0) {
		c.Switch = 0
	}
	c.Switch = min(c.Switch, 1)
	return c
}

// Reasons of a Decision.
const (
	ReasonNew        = "new"         // never visited: visited whatever the budget
	ReasonMaxAge     = "max_age"     // older than MaxAge: visited whatever the budget
	ReasonFullWalk   = "full_walk"   // a complete walk is due: visited first, within the budget
	ReasonYield      = "yield"       // visited for its expected yield per credit, within the budget
	ReasonBelowFloor = "below_floor" // skipped: its yield per credit is under Floor, or nothing is expected
	ReasonBudget     = "budget"      // skipped: its cost no longer fits in the budget
	ReasonUnreached  = "unreached"   // skipped: Item.Unreached, no credit kept for it
)

// Decision is what Schedule decided for one item.
type Decision struct {
	Visit  bool
	Reason string  // one of the Reason constants
	Yield  float64 // expected events captured by a visit now (importance-weighted)
	Cost   float64 // expected credits of the visit
	// CostHigh is what the visit costs at most unless the rate is well
	// above its estimate: a list's pages if a quarter more entries than
	// expected came, and two standard deviations of chance (for a
	// counter, Cost). A visit admitted at the end of a budget is
	// admitted on it, so that it is not cut short for want of credits.
	CostHigh float64
	Priority float64 // higher first: the order to spend in (n - its rank, n the items; unique)
}

// Summary totals a night's decisions.
type Summary struct {
	Visit, Skip   int
	Unreached     int     // of Skip, the items Unreached
	Cost, Yield   float64 // totals over the visited
	StalenessLeft float64 // expected events left unseen among skipped items after tonight (importance-weighted)
	// Forced is the cost of the visits made whatever the budget (new and
	// max_age); Over is how far Cost exceeds the budget, which only they
	// can cause.
	Forced, Over float64
	// Threshold is the yield per credit of the last item visited for its
	// yield: the budget's marginal yield per credit (0: none).
	Threshold float64
}

// tiers, in the order they are spent in.
const (
	tierMaxAge = iota
	tierFullWalk
	tierNew
	tierYield
)

// Clamps keeping every product and sum finite.
const (
	rateCap       = 1e9
	ageCap        = 3650
	costCap       = 1e9
	importanceCap = 1e9
)

// plan is an item as Schedule reads it.
type plan struct {
	i                int
	tier             int
	importance, cost float64
	yield, perCredit float64
	costHigh         float64
	forced           bool // visited whatever the budget
	unreached        bool // Item.Unreached (and not New)
}

// Schedule decides, for each item (decisions[i] for items[i]), whether to
// visit it tonight: max_age and full-walk-due items first, then new items,
// then by expected yield per credit until the budget is spent or the yield
// per credit falls below Floor. Within a tier items go by yield per credit,
// then importance per credit, then index. The cost of max_age and new
// visits is taken from the budget first, whatever it is; the rest visit
// while their cost fits in what is left, so the sum of Cost over the
// visited never exceeds cfg.Budget unless the max_age and new visits alone
// do (Summary.Over; the crawler's own max_credits still caps real spend).
// An item that does not fit is skipped and a cheaper one after it may
// still be visited.
func Schedule(items []Item, cfg Config) ([]Decision, Summary) {
	cfg = cfg.withDefaults()
	plans := make([]plan, len(items))
	for i, it := range items {
		plans[i] = planOf(i, it, cfg)
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		a, b := &plans[x], &plans[y]
		return cmp.Or(
			cmp.Compare(a.tier, b.tier),
			cmp.Compare(b.perCredit, a.perCredit),
			cmp.Compare(b.importance/b.cost, a.importance/a.cost),
			cmp.Compare(a.i, b.i),
		)
	})

	decisions := make([]Decision, len(items))
	var sum Summary
	for _, p := range plans {
		if p.forced {
			sum.Forced += p.cost
		}
	}
	left := cfg.Budget - sum.Forced // for the visits that must fit
	for rank, i := range order {
		p := plans[i]
		d := Decision{Yield: p.yield, Cost: p.cost, CostHigh: p.costHigh, Priority: float64(len(items) - rank)}
		switch {
		case p.forced:
			d.Visit = true
			d.Reason = ReasonMaxAge
			if p.tier == tierNew {
				d.Reason = ReasonNew
			}
		case p.unreached:
			d.Reason = ReasonUnreached
			sum.Unreached++
		case p.tier == tierYield && !(p.perCredit > 0 && p.perCredit >= cfg.Floor):
			d.Reason = ReasonBelowFloor
		case p.cost > left:
			d.Reason = ReasonBudget
		default:
			d.Visit = true
			left -= p.cost
			d.Reason = ReasonFullWalk
			if p.tier == tierYield {
				d.Reason = ReasonYield
				sum.Threshold = p.perCredit
			}
		}
		if d.Visit {
			sum.Visit++
			sum.Cost += d.Cost
			sum.Yield += d.Yield
		} else {
			sum.Skip++
			sum.StalenessLeft += d.Yield
		}
		decisions[i] = d
	}
	sum.Over = max(0, sum.Cost-cfg.Budget)
	return decisions, sum
}

// planOf reads an item: its tier, and the yield and cost of a visit now.
func planOf(i int, it Item, cfg Config) plan {
	p := plan{i: i, importance: it.Importance}
	if !(p.importance > 0) {
		p.importance = 1
	}
	p.importance = min(p.importance, importanceCap)
	rate := it.Rate
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0):
		rate = DefaultPrior(it.Kind).Rate
	case rate < 0:
		rate = 0
	}
	rate = min(rate, rateCap)
	age := it.Age
	if !(age >= 0) {
		age = 0
	}
	overAge := age >= cfg.MaxAge && !math.IsInf(cfg.MaxAge, 1)
	age = min(age, ageCap)
	cost := it.Cost
	if !(cost > 0) {
		cost = 1
	}
	cost = min(cost, costCap)

	// The rate a visit now expects, over the age: the estimate, and what a
	// change of pace since the last visit may have added.
	if mean := it.Mean; mean > rate && cfg.Switch > 0 && age > 0 && !math.IsInf(mean, 0) {
		// The share of the age after a change (at a Switch a day):
		// 1 - (1 - e^-qA)/(qA), about qA/2 while small.
		qa := cfg.Switch * age
		rate += (min(mean, rateCap) - rate) * (1 + math.Expm1(-qa)/qa)
	}
	if it.Kind == List && it.Surprise > 0 && !math.IsInf(it.Surprise, 0) {
		rate = min(rate+it.Surprise, rateCap)
	}
	var events float64 // expected events a visit now captures
	if it.Kind == List {
		size := it.PageSize
		if !(size > 0) {
			size = PageSizeDefault
		}
		size = max(size, 1)
		events = rate * age
		// A walk that stops at its first page of known entries reads the
		// pages holding the new ones, then that page: with E new entries,
		// floor(E/size) + 2 pages when E > 0 (the last new page is mostly
		// a partial one), 1 when E = 0. Its mean for a Poisson E of mean
		// events is close to 1 + P(E > 0) + max(0, events/size - 1/2).
		// A page costs what the first does.
		pages := 1 - math.Expm1(-events) + max(0, events/size-0.5)
		// At most: floor(E/size) + 2 pages for E well above the mean.
		eHigh := 1.25*events + 2*math.Sqrt(events)
		high := 1.0
		if events > 0 {
			high = math.Floor(eHigh/size) + 2
		}
		if n := it.Length; n > 0 {
			// No walk reads past the list's end.
			n = min(n, 1e15)
			pages = max(1, min(pages, math.Ceil((n+events)/size)))
			high = max(1, min(high, math.Ceil((n+eHigh)/size)))
		}
		if limit := it.MaxPages; limit > 0 {
			limit = max(limit, 1)
			events = min(events, limit*size)
			pages = min(pages, limit)
			high = min(high, limit)
		}
		price := cost
		costHigh := min(price*high, costCap)
		cost *= pages
		if it.New || it.FullWalk {
			if full := it.FullCost; full > 0 {
				// A whole walk: the last one's pages, and those the
				// entries since may add.
				cost = min(full, costCap)
				costHigh = min(full+price*math.Ceil(eHigh/size), costCap)
			}
		}
		p.costHigh = max(cost, costHigh)
	} else {
		events = -math.Expm1(-rate * age) // P(changed)
		p.costHigh = cost
	}
	p.yield = p.importance * events
	p.cost = cost
	p.perCredit = p.yield / p.cost

	switch {
	case it.Unreached && !it.New:
		p.tier, p.unreached = tierYield, true
	case overAge && !it.New:
		p.tier, p.forced = tierMaxAge, true
	case it.Kind == List && it.FullWalk && !it.New:
		p.tier = tierFullWalk
	case it.New:
		p.tier, p.forced = tierNew, true
	default:
		p.tier = tierYield
	}
	return p
}
