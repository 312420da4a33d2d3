package adaptive

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/revisit"
	"github.com/socialcrawl/crawler/runs"
)

// revisitHistory is how many observations an item keeps (the estimate
// discounts older ones anyway).
const revisitHistory = 30

// revisitHalfLife: observations lose half their weight in this many days,
// so an estimate follows an account whose pace changes.
const revisitHalfLife = 60

// revisitSwitchDays: the schedule takes an item's pace to change, to one
// like its kind's mean, once in about this many days (half the items in
// that time): an item unvisited for weeks is worth a look however still it
// was (a burst, a drift). Bench workload 16 measured 20 against 10 and 60
// days: 10 revisits still items too often, 60 finds bursts late.
const revisitSwitchDays = 20

// revisitKind says whether adaptive revisits schedule tasks of kind, and
// as what: a short-video profile's counters, or a newest-first list.
func revisitKind(kind string) (revisit.ItemKind, bool) {
	if kind == kinds.KindSVProfile {
		return revisit.Counter, true
	}
	if k := kinds.Of(kind); k != nil && k.Seen != nil && k.Pages != "" {
		return revisit.List, true
	}
	return 0, false
}

// Scheduled says whether adaptive revisits schedule tasks of kind (and
// record their visits).
func Scheduled(kind string) bool {
	_, ok := revisitKind(kind)
	return ok
}

// revisitKinds lists the kinds revisitKind accepts.
func revisitKinds() []string {
	var out []string
	for _, k := range kinds.All() {
		if _, ok := revisitKind(k.Name); ok {
			out = append(out, k.Name)
		}
	}
	return out
}

type (
	revisitItemsParams struct {
		JobName   string   `db:"job_name"`
		Before    int64    `db:"before"` // the run the schedule is for (MaxInt64: crawler plan)
		SeedKinds []string `db:"seed_kinds"`
		SeedKeys  []string `db:"seed_keys"`
		AllRoots  bool     `db:"all_roots"`
		EdgeFrom  []string `db:"edge_from"`
		EdgeTo    []string `db:"edge_to"`
		MaxDepth  int      `db:"max_depth"`
	}
	// itemsParams name items of a job (crawl.revisit_items).
	itemsParams struct {
		JobName string   `db:"job_name"`
		Kinds   []string `db:"kinds"`
		Keys    []string `db:"keys"`
	}
	revisitDecisionParams struct {
		RunID int64  `db:"run_id"`
		Kind  string `db:"kind"`
		Key   string `db:"key"`
	}
	runRevisitParams struct {
		RunID   int64  `db:"run_id"`
		Revisit []byte `db:"revisit"`
	}
)

var (
	revisitItems       = db.Prepare[revisitItemsParams]("RevisitItems")
	forgetRevisitItems = db.Prepare[itemsParams]("ForgetRevisitItems")
	revisitDecision    = db.Prepare[revisitDecisionParams]("RevisitDecision")
	setRunRevisit      = db.Prepare[runRevisitParams]("SetRunRevisit")
	revisitPlanTable   = pgx.Identifier{"crawl", "revisit_plan"}
)

// Item is an item of a job's schedule: what the job knows of it
// and the decision for a run now.
type Item struct {
	Kind, Key string
	revisit.Item
	Decision revisit.Decision
}

// Schedule is an adaptive schedule: the decision for every item the
// job visited before, and its totals.
type Schedule struct {
	Items   []Item
	Summary revisit.Summary
	// Budget is the credits it spends (limits.max_credits); MaxAge,
	// MinYield and CounterWeight the job's reuse.max_age (days),
	// reuse.min_yield and reuse.counter_weight.
	Budget, MaxAge, MinYield, CounterWeight float64
	// Forget are the items no run has reached for twice MaxAge: a new
	// run's schedule removes them from the job's items.
	Forget []Item
}

// forgetAfter is how many times max_age an item may go unreached (and
// unvisited) before the job forgets it.
const forgetAfter = 2

// Plan makes the schedule a run of job would get now (crawler plan
// shows it; a new adaptive run records it). It reads one row per item the
// job visited and the job's previous run's tasks, and writes nothing.
func Plan(ctx context.Context, q db.Querier, job *jobfile.Job) (*Schedule, error) {
	return plan(ctx, q, job, math.MaxInt64)
}

// plan is Plan for a run before (whose previous run is the
// job's latest before it).
func plan(ctx context.Context, q db.Querier, job *jobfile.Job, before int64) (*Schedule, error) {
	s := &Schedule{MaxAge: time.Duration(job.Reuse.MaxAge).Hours() / 24}
	if job.Limits.MaxCredits != nil {
		s.Budget = float64(*job.Limits.MaxCredits)
	}
	if job.Reuse.MinYield != nil {
		s.MinYield = *job.Reuse.MinYield
	}
	s.CounterWeight = jobfile.CounterWeightDefault
	if job.Reuse.CounterWeight != nil {
		s.CounterWeight = *job.Reuse.CounterWeight
	}
	weight := importance(job)
	observed := map[string]bool{}     // kind \x00 key -> seen twice or more
	surprises := map[string]float64{} // kind \x00 key -> its latest visit's surprise
	rows, err := revisitItems.Query(ctx, q, reachParams(job, before))
	if err != nil {
		return nil, fmt.Errorf("revisit items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			it             Item
			owner          string
			visits         int
			lastRun        int64
			age, rate      float64
			pageSize       float32
			fullPages      int
			edges, counter *int64
			counterRun     int64
			cut, reached   bool
			surprise       float32
		)
		if err := rows.Scan(&it.Kind, &it.Key, &owner, &visits, &lastRun, &age, &rate, &pageSize, &fullPages, &edges, &counter, &counterRun, &cut, &reached, &surprise); err != nil {
			return nil, fmt.Errorf("revisit items: %w", err)
		}
		kind, ok := revisitKind(it.Kind)
		if !ok {
			continue
		}
		price, maxPages := visitPrice(job, it.Kind)
		it.Item = revisit.Item{Kind: kind, Rate: rate, Age: max(age, 0), Cost: price, PageSize: float64(pageSize),
			MaxPages: float64(maxPages), FullCost: price * float64(fullPages), Unreached: !reached}
		if !reached && age > forgetAfter*s.MaxAge {
			s.Forget = append(s.Forget, it)
			continue
		}
		observed[it.Kind+"\x00"+it.Key] = visits > 1
		surprises[it.Kind+"\x00"+it.Key] = float64(surprise)
		it.Group, it.Importance = weight(it.Kind, it.Key, owner)
		if kind == revisit.Counter {
			it.Importance *= s.CounterWeight
		}
		if kind == revisit.List {
			it.FullWalk = cut // its last walk stopped halfway: a gap only a whole walk fills
			if edges != nil {
				it.Length = float64(*edges)
			}
			// The owner's counter tells only if it is no older than
			// the list's last walk.
			if edges != nil && counter != nil && counterRun >= lastRun {
				tol := max(2, 0.02*float64(*edges))
				switch c, e := float64(*counter), float64(*edges); {
				case c < e-tol:
					// The owner's counter fell short of the entries seen:
					// some left (unfollows), which only a complete walk
					// finds.
					it.FullWalk = true
				case c > e && it.Age > 0 && counterRun > lastRun:
					// The counter says how much the list grew: at least
					// that many new entries wait, whatever the estimate.
					it.Rate = max(it.Rate, (c-e)/it.Age)
				}
			}
		}
		s.Items = append(s.Items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("revisit items: %w", err)
	}
	// The mean rate of each kind's items seen twice or more (what an
	// item's rate may change to), and the mean of what their latest visits
	// found that the estimates did not foresee (what any may bring a day).
	type total struct{ rate, surprise, n float64 }
	means := map[string]*total{}
	for _, it := range s.Items {
		if id := it.Kind + "\x00" + it.Key; observed[id] {
			m := means[it.Kind]
			if m == nil {
				m = &total{}
				means[it.Kind] = m
			}
			m.rate += it.Rate
			m.surprise += surprises[id]
			m.n++
		}
	}
	items := make([]revisit.Item, len(s.Items))
	for i := range s.Items {
		if m := means[s.Items[i].Kind]; m != nil {
			s.Items[i].Mean, s.Items[i].Surprise = m.rate/m.n, m.surprise/m.n
		}
		items[i] = s.Items[i].Item
	}
	decisions, sum := revisit.Schedule(items, revisit.Config{Budget: s.Budget, MaxAge: s.MaxAge, Floor: s.MinYield, Switch: math.Ln2 / revisitSwitchDays})
	for i := range s.Items {
		s.Items[i].Decision = decisions[i]
	}
	s.Summary = sum
	return s, nil
}

// visitPrice is what a page of a list of kind (or a profile's visit)
// costs in the job's dialect (the route's credits: 15 for comments with
// replies), and the page limit of such lists (0: none).
func visitPrice(job *jobfile.Job, kind string) (price float64, maxPages int) {
	price = 1
	if r, ok := job.API.Route(kind); ok && r.Credits > 0 {
		price = float64(r.Credits)
	}
	if k := kinds.Of(kind); k != nil {
		maxPages = k.Task(job, "", nil, 0).MaxPages
	}
	return price, maxPages
}

// reachParams say how the previous run of job (the latest before run
// before) reached its tasks: from the job's seeds now (any seed of that
// run when the job has seed files, which are read after the run is
// created), through the edges the job turns on, within its max_depth.
func reachParams(job *jobfile.Job, before int64) revisitItemsParams {
	p := revisitItemsParams{JobName: job.Name, Before: before, AllRoots: len(job.Seeds.Files) > 0, MaxDepth: job.Limits.MaxDepth,
		SeedKinds: []string{}, SeedKeys: []string{}, EdgeFrom: []string{}, EdgeTo: []string{}}
	for _, t := range job.SeedTasks() {
		p.SeedKinds, p.SeedKeys = append(p.SeedKinds, t.Kind), append(p.SeedKeys, t.Key)
	}
	for _, k := range kinds.All() {
		for _, e := range kinds.BoundEdges(k.Name) {
			if e.On(job) {
				p.EdgeFrom, p.EdgeTo = append(p.EdgeFrom, k.Name), append(p.EdgeTo, e.Child)
			}
		}
	}
	return p
}

// importance returns the weight of an item of job (reuse.importance) and
// the seed list it counts for: a seed's own task, or a list of a seed
// account (owner). Items found deeper weigh 1.
func importance(job *jobfile.Job) func(kind, key, owner string) (string, float64) {
	type ref struct{ kind, key string }
	byTask := map[ref]string{}
	byOwner := map[string]string{}
	for name := range job.Reuse.Importance {
		for _, t := range kinds.SeedTasksOf(&job.Seeds, job, "seeds."+name) {
			byTask[ref{t.Kind, t.Key}] = name
			if h := t.Params["handle"]; h != "" {
				byOwner[h] = name
			}
			if t.Kind == kinds.KindSVProfile {
				byOwner[t.Key] = name
			}
		}
	}
	return func(kind, key, owner string) (string, float64) {
		name, ok := byTask[ref{kind, key}]
		if !ok && owner != "" {
			name, ok = byOwner[owner]
		}
		if !ok {
			return "", 1
		}
		return name, job.Reuse.Importance[name]
	}
}

// ScheduleRun records, in tx, the schedule of new run runID of an
// adaptive job (crawl.revisit_plan) and its totals (crawl.runs.revisit),
// after recording what the job's earlier runs that no process finished
// (killed, abandoned) saw, and forgets the items no run reaches any more.
func ScheduleRun(ctx context.Context, tx pgx.Tx, job *jobfile.Job, runID int64) error {
	if err := recordUnfinished(ctx, tx, job.Name, runID); err != nil {
		return err
	}
	s, err := plan(ctx, tx, job, runID)
	if err != nil {
		return err
	}
	if len(s.Forget) > 0 {
		f := itemsParams{JobName: job.Name}
		for _, it := range s.Forget {
			f.Kinds, f.Keys = append(f.Kinds, it.Kind), append(f.Keys, it.Key)
		}
		if _, err := forgetRevisitItems.Exec(ctx, tx, f); err != nil {
			return fmt.Errorf("forget unreached revisit items: %w", err)
		}
	}
	rows := make([][]any, len(s.Items))
	for i, it := range s.Items {
		d := it.Decision
		rows[i] = []any{runID, it.Kind, it.Key, d.Visit, d.Visit && it.FullWalk, d.Reason,
			float32(finite(d.Yield)), float32(finite(d.Cost)), float32(finite(d.CostHigh)), float32(finite(d.Priority))}
	}
	cols := []string{"run_id", "kind", "key", "visit", "full_walk", "reason", "yield", "cost", "cost_high", "priority"}
	if _, err := tx.CopyFrom(ctx, revisitPlanTable, cols, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("record the revisit schedule: %w", err)
	}
	sum := s.Summary
	recorded := false
	totals, _ := json.Marshal(runs.RevisitTotals{Recorded: &recorded, Planned: &runs.RevisitPlanned{Visit: sum.Visit, Skip: sum.Skip,
		Cost: round2(sum.Cost), Yield: round2(sum.Yield), StalenessLeft: round2(sum.StalenessLeft), Budget: s.Budget}})
	if _, err := setRunRevisit.Exec(ctx, tx, runRevisitParams{RunID: runID, Revisit: totals}); err != nil {
		return fmt.Errorf("record the revisit schedule: %w", err)
	}
	return nil
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func round2(x float64) float64 { return math.Round(finite(x)*100) / 100 }
