package plan

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/adaptive"
)

// `crawler plan JOB`: what a run of the job would do and cost, read from
// the job file, the kind registry and the job's earlier runs, without
// spending a credit or writing anything (docs/planning.md).

// EntriesPerPageDefault is the list page size the credit bound assumes:
// the sandbox's, since the upstream documents none (crawler plan
// --entries-per-page; a larger size seen in earlier runs is used instead).
const EntriesPerPageDefault = 50

// satAdd and satMul saturate at MaxInt64: a bound that large means "no
// useful bound", never a wrapped small number.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// bounder computes the most credits a task of a kind at a depth can cost,
// with everything it can create, memoized per (kind, depth).
type bounder struct {
	job     *jobfile.Job
	entries int64
	memo    map[string]int64
}

// bound is the bound of a task of kind k at depth with a page limit of
// pages (lists; 0: k's page limit in this job). A list costs at most its
// page limit and yields at most pages x entries entries; an object costs
// one request (a feed's one page yields at most entries entries); a
// request costs one credit or what the job's dialect declares. Each
// child rule that the job turns on adds, per task or per entry, the bound
// of the child at its depth, unless that depth is past limits.max_depth.
// Deduplication of tasks within a run only lowers the real cost.
func (b *bounder) bound(k *kinds.Kind, depth int, pages int64) int64 {
	if pages == 0 && k.List {
		pages = int64(k.Task(b.job, "", nil, depth).MaxPages)
	}
	memoKey := fmt.Sprintf("%s/%d/%d", k.Name, depth, pages)
	if v, ok := b.memo[memoKey]; ok {
		return v
	}
	// A request costs what the job's dialect says it does (comments with
	// replies: 15), else 1; a retired endpoint is never asked.
	perPage := int64(1)
	if r, ok := b.job.API.Route(k.Name); ok {
		perPage = int64(max(r.Credits, 1))
		if r.Retired != "" {
			perPage = 0
		}
	}
	cost, entries := perPage, b.entries
	if k.List {
		cost, entries = satMul(pages, perPage), satMul(pages, b.entries)
	}
	for _, r := range kinds.BoundEdges(k.Name) {
		if !r.On(b.job) {
			continue
		}
		d := depth
		if r.Hop {
			d++
		}
		if d > b.job.Limits.MaxDepth {
			continue
		}
		n := int64(1)
		if r.PerEntry {
			n = entries
		}
		cost = satAdd(cost, satMul(n, b.bound(kinds.Of(r.Child), d, int64(r.MaxPages(b.job)))))
	}
	b.memo[memoKey] = cost
	return cost
}

// Seed is one seed task and its credit bound.
type Seed struct {
	Kind     string `json:"kind"`
	Key      string `json:"key"`
	MaxPages int    `json:"max_pages,omitempty"`
	Bound    int64  `json:"bound"`
	// Estimate is its expected cost from the job's history (-1: none), and
	// EstimateFrom how: "history" (this seed's tasks in the last completed
	// run), "kind average" (seeds of its kind there), "bound" (neither).
	Estimate     int64  `json:"estimate"`
	EstimateFrom string `json:"estimate_from,omitempty"`
}

// Plan is what `crawler plan` reports.
type Plan struct {
	Job         string `json:"job"`
	Fingerprint string `json:"fingerprint"`
	// Next is what `crawler run JOB` would do now: "new run", "continue
	// run N", "join run N"; Abandons the run it would mark abandoned.
	Next     string `json:"next"`
	Abandons string `json:"abandons,omitempty"`
	Seeds    []Seed `json:"seeds"`
	// EntriesPerPage is the page size the bound assumes; ObservedPerPage
	// the largest average page of the job's earlier runs (0: none).
	EntriesPerPage  int64 `json:"entries_per_page"`
	ObservedPerPage int64 `json:"observed_entries_per_page"`
	// Bound is the most credits the job can cost (MaxInt64: no useful
	// bound); MaxCredits the run's budget, when set, which caps it.
	Bound      int64  `json:"bound"`
	MaxCredits *int64 `json:"max_credits,omitempty"`
	// History: the last completed run of the job, its billed credits, and
	// the expected cost of this job from it (Estimate -1: no history).
	HistoryRun    int64 `json:"history_run,omitempty"`
	HistoryBilled int64 `json:"history_billed,omitempty"`
	Estimate      int64 `json:"estimate"`
	// Reuse is what refresh_after / stop_at_seen would skip, a line each
	// (see planReuse), and what each date window saves (planWindows);
	// Estimate already leaves out the skipped fetches.
	Reuse []string `json:"reuse"`
	// Adaptive is the schedule a new adaptive run (reuse.adaptive) would
	// get now; nil when the job is not adaptive.
	Adaptive *Adaptive `json:"adaptive,omitempty"`
	// Content is what the content lists bought only when changed should
	// cost tonight, by kind (content.go); Estimate counts it in place of
	// what the last run spent on them.
	Content []ContentList `json:"content,omitempty"`
}

// Adaptive is an adaptive run's schedule as crawler plan shows it: what it
// refreshes and skips, what it expects to capture, and what it leaves.
type Adaptive struct {
	Budget float64 `json:"budget"`
	Visit  int     `json:"visit"`
	Skip   int     `json:"skip"`
	// Cost and Yield: expected credits and events (new entries, counter
	// changes; importance-weighted) of the visits; StalenessLeft the
	// expected events left unseen among the skipped items.
	Cost          float64 `json:"expected_cost"`
	Yield         float64 `json:"expected_yield"`
	YieldPerCred  float64 `json:"expected_yield_per_credit"`
	StalenessLeft float64 `json:"staleness_left"`
	// ByReason counts the decisions by reason (new items are not listed:
	// they are not known yet, and are visited).
	ByReason map[string]int `json:"by_reason"`
	Items    []AdaptiveItem `json:"items"`
	// Forget counts the items no run has reached for twice max_age: the
	// next run forgets them (they are not in Items).
	Forget int `json:"forget,omitempty"`
}

// AdaptiveItem is one known item's decision.
type AdaptiveItem struct {
	Kind     string  `json:"kind"`
	Key      string  `json:"key"`
	Visit    bool    `json:"visit"`
	FullWalk bool    `json:"full_walk,omitempty"`
	Reason   string  `json:"reason"`
	Rate     float64 `json:"rate_per_day"`
	AgeDays  float64 `json:"age_days"`
	Yield    float64 `json:"expected_yield"`
	Cost     float64 `json:"expected_cost"`
	// CostHigh is what the visit costs at most unless the rate is well
	// above its estimate: a run admits it when the credits left cover it.
	CostHigh float64 `json:"cost_at_most"`
	Priority float64 `json:"priority"` // higher is spent on first
}

type lastDoneRun struct {
	ID     int64 `db:"id"`
	Billed int64 `db:"credits_billed"`
}

type planTask struct {
	ID     int64  `db:"id"`
	Parent int64  `db:"parent_id"`
	Kind   string `db:"kind"`
	Key    string `db:"key"`
	Pages  int64  `db:"pages"`
}

type ()

var (
	lastDoneRunStmt  = db.Prepare[db.JobArg]("LastDoneRun")
	runTaskTreeStmt  = db.Prepare[db.RunArg]("RunTaskTree")
	observedPageStmt = db.Prepare[db.JobArg]("ObservedEntriesPerPage")
)

// Make reads, in tx (a read-only transaction), what `crawler run`
// would do with job and what it would cost. entries is the page size to
// assume (0: EntriesPerPageDefault); forceNew is --new-run.
func Make(ctx context.Context, tx pgx.Tx, job *jobfile.Job, entries int64, forceNew bool) (*Plan, error) {
	p := &Plan{Job: job.Name, Fingerprint: pipeline.Fingerprint(job), MaxCredits: job.Limits.MaxCredits, Estimate: -1, Reuse: []string{}}
	prev, err := pipeline.LatestRun(ctx, tx, job)
	if err != nil {
		return nil, err
	}
	action, abandon, err := pipeline.Decide(prev, p.Fingerprint, time.Duration(job.ResumeWithin), forceNew)
	if err != nil {
		return nil, err
	}
	switch action {
	case pipeline.RunNew:
		p.Next = "start a new run"
		if abandon != "" {
			p.Abandons = fmt.Sprintf("run %d: %s", prev.ID, strings.ReplaceAll(abandon, "run %d", "the new run"))
		}
	case pipeline.RunContinue:
		p.Next = fmt.Sprintf("continue run %d (interrupted, last active %s ago)", prev.ID, prev.Idle)
	case pipeline.RunJoin:
		p.Next = fmt.Sprintf("join run %d (in progress)", prev.ID)
	case pipeline.RunSpent:
		p.Next = fmt.Sprintf("nothing (exit 5): run %d stopped at its credit budget of %d %s ago; a larger max_credits continues it, the first start after resume_within starts a new run",
			prev.ID, *prev.BudgetStop, prev.Idle)
	}
	if err := observedPageStmt.QueryRow(ctx, tx, db.JobArg{JobName: job.Name}).Scan(&p.ObservedPerPage); err != nil {
		return nil, fmt.Errorf("page sizes of earlier runs: %w", err)
	}
	p.bound(job, max(entries, p.ObservedPerPage))
	if err := p.estimate(ctx, tx, job); err != nil {
		return nil, err
	}
	if err := p.content(ctx, tx, job); err != nil {
		return nil, err
	}
	reuse, err := planReuse(ctx, tx, job, p)
	if err != nil {
		return nil, err
	}
	p.Reuse = append(p.Reuse, reuse...)
	perPage := p.EntriesPerPage
	if p.ObservedPerPage > 0 {
		perPage = p.ObservedPerPage // the lists' own page, for where a walk ends
	}
	windows, err := planWindows(ctx, tx, job, perPage)
	if err != nil {
		return nil, err
	}
	p.Reuse = append(p.Reuse, windows...)
	if job.Reuse.Adaptive {
		s, err := adaptive.Plan(ctx, tx, job)
		if err != nil {
			return nil, fmt.Errorf("adaptive schedule: %w", err)
		}
		p.Adaptive = adaptiveOf(s)
	}
	return p, nil
}

// adaptiveOf lays out schedule s, items in the order it spends in.
func adaptiveOf(s *adaptive.Schedule) *Adaptive {
	a := &Adaptive{Budget: s.Budget, Visit: s.Summary.Visit, Skip: s.Summary.Skip, Cost: s.Summary.Cost, Yield: s.Summary.Yield,
		StalenessLeft: s.Summary.StalenessLeft, ByReason: map[string]int{}, Items: []AdaptiveItem{}, Forget: len(s.Forget)}
	if a.Cost > 0 {
		a.YieldPerCred = a.Yield / a.Cost
	}
	for _, it := range s.Items {
		d := it.Decision
		a.ByReason[d.Reason]++
		a.Items = append(a.Items, AdaptiveItem{Kind: it.Kind, Key: it.Key, Visit: d.Visit, FullWalk: d.Visit && it.FullWalk, Reason: d.Reason,
			Rate: it.Rate, AgeDays: it.Age, Yield: d.Yield, Cost: d.Cost, CostHigh: d.CostHigh, Priority: d.Priority})
	}
	slices.SortStableFunc(a.Items, func(x, y AdaptiveItem) int { return cmp.Compare(y.Priority, x.Priority) })
	return a
}

// Fresh is the plan of job on a database no migration has touched yet (a
// first `crawler plan` before any run): no history, so a new run and its
// bound, nothing estimated, nothing read or written.
func Fresh(job *jobfile.Job, entries int64) *Plan {
	p := &Plan{Job: job.Name, Fingerprint: pipeline.Fingerprint(job), MaxCredits: job.Limits.MaxCredits, Estimate: -1, Reuse: []string{},
		Next: "start a new run (the database is not migrated yet: crawler run migrates it first)"}
	p.bound(job, entries)
	return p
}

// bound fills the seeds and their credit bounds, lists assumed to hold
// entries a page (EntriesPerPageDefault when not positive).
func (p *Plan) bound(job *jobfile.Job, entries int64) {
	p.EntriesPerPage = entries
	if p.EntriesPerPage <= 0 {
		p.EntriesPerPage = EntriesPerPageDefault
	}
	b := &bounder{job: job, entries: p.EntriesPerPage, memo: map[string]int64{}}
	for _, t := range job.SeedTasks() {
		s := Seed{Kind: t.Kind, Key: t.Key, MaxPages: t.MaxPages, Estimate: -1}
		s.Bound = b.bound(kinds.Of(t.Kind), t.Depth, int64(t.MaxPages))
		p.Bound = satAdd(p.Bound, s.Bound)
		p.Seeds = append(p.Seeds, s)
	}
}

// estimate fills the expected cost from the job's last completed run:
// each task's pages count for the seed it descends from (by parent_id),
// scaled by that run's billed credits per page (retries after a crash
// make it above 1). A seed of this job that the run had costs what its
// tasks cost then; a new seed costs the average of that run's seeds of
// its kind, or, with none, its bound.
func (p *Plan) estimate(ctx context.Context, tx pgx.Tx, job *jobfile.Job) error {
	var last lastDoneRun
	err := lastDoneRunStmt.QueryRow(ctx, tx, db.JobArg{JobName: job.Name}).Scan(&last.ID, &last.Billed)
	if err == pgx.ErrNoRows {
		return nil
	}
	if err != nil {
		return fmt.Errorf("last completed run: %w", err)
	}
	rows, err := runTaskTreeStmt.Query(ctx, tx, db.RunArg{RunID: last.ID})
	if err != nil {
		return fmt.Errorf("tasks of run %d: %w", last.ID, err)
	}
	tasks, err := pgx.CollectRows(rows, pgx.RowToStructByName[planTask])
	if err != nil {
		return fmt.Errorf("tasks of run %d: %w", last.ID, err)
	}
	byID := make(map[int64]*planTask, len(tasks))
	for i := range tasks {
		byID[tasks[i].ID] = &tasks[i]
	}
	root := map[int64]int64{} // task -> its seed task
	var rootOf func(id int64) int64
	rootOf = func(id int64) int64 {
		if r, ok := root[id]; ok {
			return r
		}
		r := id
		if t := byID[id]; t != nil && t.Parent != 0 && byID[t.Parent] != nil {
			r = rootOf(t.Parent)
		}
		root[id] = r
		return r
	}
	pagesOf := map[int64]int64{}
	var total int64
	for _, t := range tasks {
		pagesOf[rootOf(t.ID)] += t.Pages
		total += t.Pages
	}
	perPage := 1.0
	if total > 0 {
		perPage = float64(last.Billed) / float64(total)
	}
	seedCost := map[string]float64{}
	kindSum, kindN := map[string]float64{}, map[string]int{}
	for _, t := range tasks {
		if t.Parent == 0 {
			c := float64(pagesOf[t.ID]) * perPage
			seedCost[t.Kind+"\x00"+t.Key] = c
			kindSum[t.Kind] += c
			kindN[t.Kind]++
		}
	}
	p.HistoryRun, p.HistoryBilled = last.ID, last.Billed
	var est float64
	for i := range p.Seeds {
		s := &p.Seeds[i]
		switch c, ok := seedCost[s.Kind+"\x00"+s.Key]; {
		case ok:
			s.Estimate, s.EstimateFrom = int64(math.Round(c)), "history"
		case kindN[s.Kind] > 0:
			s.Estimate, s.EstimateFrom = int64(math.Round(kindSum[s.Kind]/float64(kindN[s.Kind]))), "kind average"
		default:
			s.Estimate, s.EstimateFrom = s.Bound, "bound"
		}
		est += float64(s.Estimate)
	}
	p.Estimate = int64(math.Min(math.Round(est), math.MaxInt64))
	if p.MaxCredits != nil {
		p.Estimate = min(p.Estimate, *p.MaxCredits)
	}
	return nil
}

// planReuse reports what refresh_after / stop_at_seen would skip in the
// next run, from the data earlier runs stored (pipeline.PlanReuse), one line each,
// and lowers the estimate by the fetches refresh_after would skip (1 credit
// each; the pages stop_at_seen saves depend on how much the lists grew, so
// the estimate keeps them).
func planReuse(ctx context.Context, tx pgx.Tx, job *jobfile.Job, p *Plan) ([]string, error) {
	rp, err := pipeline.PlanReuse(ctx, tx, job, job.SeedTasks())
	if err != nil {
		return nil, fmt.Errorf("reuse: %w", err)
	}
	var out []string
	for _, f := range rp.Fresh {
		out = append(out, fmt.Sprintf("skip %s %s: fresh, fetched by run %d at %s (1 credit saved)",
			f.Task.Kind, f.Task.Key, f.Fetch.RunID, f.Fetch.At.UTC().Format(time.RFC3339)))
	}
	if p.Estimate > 0 {
		p.Estimate = max(0, p.Estimate-int64(len(rp.Fresh)))
	}
	for _, w := range rp.Lists {
		switch {
		case !w.Found:
			out = append(out, fmt.Sprintf("walk %s %s whole: no full walk yet (stop_at_seen starts after one)", w.Kind, w.Key))
		case w.FullDue:
			out = append(out, fmt.Sprintf("walk %s %s whole: a full walk is due (last: run %d, %d pages, %s ago, %d walks cut short since)",
				w.Kind, w.Key, w.Run, w.Pages, w.Age.Round(time.Second), w.Cut))
		default:
			out = append(out, fmt.Sprintf("stop %s %s at the first page of known entries (last full walk: run %d, %d pages, %s ago)",
				w.Kind, w.Key, w.Run, w.Pages, w.Age.Round(time.Second)))
		}
	}
	return out, nil
}
