package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/revisit"
	"github.com/socialcrawl/crawler/runs"
)

// Adaptive revisits (reuse.adaptive, README "Repeat harvests"). Every run
// that ends records what it saw of the items it visited (observeRevisits:
// a list's entries no earlier run stored, a profile's counters changed or
// not) in crawl.revisit_items, with each item's estimated change rate
// (package revisit). A run of an adaptive job is created with a schedule
// (scheduleRevisits): for every item the job visited before, visit it or
// not, chosen to spend limits.max_credits where the expected yield per
// credit is highest (crawl.revisit_plan). A worker reads its task's
// decision before anything else (skipAdaptive): a skipped profile expands
// to its lists from stored data, as refresh_after's fresh ones do; a list
// the schedule wants whole is not cut by stop_at_seen. Items never
// visited are not in the schedule and are visited.

// revisitHistory is how many observations an item keeps (the estimate
// discounts older ones anyway).
const revisitHistory = 30

// revisitHalfLife: observations lose half their weight in this many days,
// so an estimate follows an account whose pace changes.
const revisitHalfLife = 60

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
	revisitDecisionParams struct {
		RunID int64  `db:"run_id"`
		Kind  string `db:"kind"`
		Key   string `db:"key"`
	}
	runRevisitParams struct {
		RunID   int64  `db:"run_id"`
		Revisit []byte `db:"revisit"`
	}
	revisitVisitsParams struct {
		RunID int64    `db:"run_id"`
		Kinds []string `db:"kinds"`
	}
	revisitKnownParams struct {
		JobName string   `db:"job_name"`
		Kinds   []string `db:"kinds"`
		Keys    []string `db:"keys"`
	}
	upsertRevisitParams struct {
		JobName     string    `db:"job_name"`
		Kind        string    `db:"kind"`
		Key         string    `db:"key"`
		Owner       string    `db:"owner"`
		Visits      int       `db:"visits"`
		LastRun     int64     `db:"last_run"`
		LastVisitAt time.Time `db:"last_visit_at"`
		Intervals   []float32 `db:"intervals"`
		Events      []float32 `db:"events"`
		Censored    []bool    `db:"censored"`
		Rate        float64   `db:"rate"`
		PageSize    *float32  `db:"page_size"`
		FullPages   *int      `db:"full_pages"`
		Edges       *int64    `db:"edges"`
		Counter     *int64    `db:"counter"`
		CounterRun  *int64    `db:"counter_run"`
		Complete    bool      `db:"complete"`
	}
	markCutParams struct {
		JobName string   `db:"job_name"`
		RunID   int64    `db:"run_id"`
		Kinds   []string `db:"kinds"`
	}
	listCountersParams struct {
		JobName   string   `db:"job_name"`
		RunID     int64    `db:"run_id"`
		Owners    []string `db:"owners"`
		Followers []*int64 `db:"followers"`
		Following []*int64 `db:"following"`
	}
)

var (
	revisitItems     = db.Prepare[jobNameArg]("RevisitItems")
	revisitDecision  = db.Prepare[revisitDecisionParams]("RevisitDecision")
	setRunRevisit    = db.Prepare[runRevisitParams]("SetRunRevisit")
	revisitVisits    = db.Prepare[revisitVisitsParams]("RevisitVisits")
	revisitKnown     = db.Prepare[revisitKnownParams]("RevisitKnown")
	upsertRevisit    = db.Prepare[upsertRevisitParams]("UpsertRevisitItem")
	setListCounters  = db.Prepare[listCountersParams]("SetListCounters")
	markWalksCut     = db.Prepare[markCutParams]("MarkWalksCut")
	revisitPlanTable = pgx.Identifier{"crawl", "revisit_plan"}
)

// RevisitItem is an item of a job's schedule: what the job knows of it
// and the decision for a run now.
type RevisitItem struct {
	Kind, Key string
	revisit.Item
	Decision revisit.Decision
}

// RevisitSchedule is an adaptive schedule: the decision for every item the
// job visited before, and its totals.
type RevisitSchedule struct {
	Items   []RevisitItem
	Summary revisit.Summary
	// Budget is the credits it spends (limits.max_credits); MaxAge,
	// MinYield and CounterWeight the job's reuse.max_age (days),
	// reuse.min_yield and reuse.counter_weight.
	Budget, MaxAge, MinYield, CounterWeight float64
}

// PlanRevisits makes the schedule a run of job would get now (crawler plan
// shows it; a new adaptive run records it). It reads one row per item the
// job visited, and writes nothing.
func PlanRevisits(ctx context.Context, q db.Querier, job *jobfile.Job) (*RevisitSchedule, error) {
	s := &RevisitSchedule{MaxAge: time.Duration(job.Reuse.MaxAge).Hours() / 24}
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
	rows, err := revisitItems.Query(ctx, q, jobNameArg{job.Name})
	if err != nil {
		return nil, fmt.Errorf("revisit items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			it             RevisitItem
			owner          string
			visits         int
			lastRun        int64
			age, rate      float64
			pageSize       float32
			fullPages      int
			edges, counter *int64
			counterRun     int64
			cut            bool
		)
		if err := rows.Scan(&it.Kind, &it.Key, &owner, &visits, &lastRun, &age, &rate, &pageSize, &fullPages, &edges, &counter, &counterRun, &cut); err != nil {
			return nil, fmt.Errorf("revisit items: %w", err)
		}
		kind, ok := revisitKind(it.Kind)
		if !ok {
			continue
		}
		it.Item = revisit.Item{Kind: kind, Rate: rate, Age: max(age, 0), Cost: 1, PageSize: float64(pageSize), FullCost: float64(fullPages)}
		it.Group, it.Importance = weight(it.Kind, it.Key, owner)
		if kind == revisit.Counter {
			it.Importance *= s.CounterWeight
		}
		if kind == revisit.List {
			it.FullWalk = cut // its last walk stopped halfway: a gap only a whole walk fills
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
	items := make([]revisit.Item, len(s.Items))
	for i := range s.Items {
		items[i] = s.Items[i].Item
	}
	decisions, sum := revisit.Schedule(items, revisit.Config{Budget: s.Budget, MaxAge: s.MaxAge, Floor: s.MinYield})
	for i := range s.Items {
		s.Items[i].Decision = decisions[i]
	}
	s.Summary = sum
	return s, nil
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

// scheduleRevisits records, in tx, the schedule of new run runID of an
// adaptive job (crawl.revisit_plan) and its totals (crawl.runs.revisit).
func scheduleRevisits(ctx context.Context, tx pgx.Tx, job *jobfile.Job, runID int64) error {
	s, err := PlanRevisits(ctx, tx, job)
	if err != nil {
		return err
	}
	rows := make([][]any, len(s.Items))
	for i, it := range s.Items {
		d := it.Decision
		rows[i] = []any{runID, it.Kind, it.Key, d.Visit, d.Visit && it.FullWalk, d.Reason,
			float32(finite(d.Yield)), float32(finite(d.Cost)), float32(finite(d.Priority))}
	}
	cols := []string{"run_id", "kind", "key", "visit", "full_walk", "reason", "yield", "cost", "priority"}
	if _, err := tx.CopyFrom(ctx, revisitPlanTable, cols, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("record the revisit schedule: %w", err)
	}
	sum := s.Summary
	totals, _ := json.Marshal(runs.RevisitTotals{Planned: &runs.RevisitPlanned{Visit: sum.Visit, Skip: sum.Skip,
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

// skipAdaptive applies the run's schedule to t before it is fetched: a
// task the schedule skips ends skipped with the decision's reason (a
// profile expanding to its lists from stored data), a list it wants whole
// is marked so. It reports whether t ended.
func (c *crawl) skipAdaptive(ctx context.Context, log *slog.Logger, k *kinds.Kind, t *Task) (bool, error) {
	if !c.job.Reuse.Adaptive || t.Pages > 0 {
		return false, nil
	}
	if _, ok := revisitKind(t.Kind); !ok {
		return false, nil
	}
	var (
		visit, full bool
		reason      string
		yield, cost float32
		found       bool
		children    []NewTask
		fromStorage bool
	)
	err := c.retryDB(ctx, func(ctx context.Context) error {
		err := revisitDecision.QueryRow(ctx, c.opts.Pool, revisitDecisionParams{RunID: c.runID, Kind: t.Kind, Key: t.Key}).
			Scan(&visit, &full, &reason, &yield, &cost)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // found stays false
		}
		found = err == nil
		if err != nil || visit || k.Fresh == nil || k.Fresh.Expand == nil {
			return err
		}
		children, fromStorage, err = storedChildren(ctx, c.opts.Pool, c.job, k, &t.Task)
		return err
	})
	switch {
	case err != nil:
		err = fmt.Errorf("task %d (%s %s): adaptive schedule: %w", t.ID, t.Kind, t.Key, err)
		c.stop(err)
		_ = c.release(t)
		return true, err
	case !found:
		return false, nil // never visited: explored
	case visit:
		forced := reason == revisit.ReasonNew || reason == revisit.ReasonMaxAge
		var left *int64
		if !forced {
			if left, err = c.creditsLeftNow(ctx); err != nil {
				// max_credits still caps the spend: visit it.
				log.Warn("could not weigh a visit against the credits left; visited", "task_id", t.ID, "err", err)
			}
		}
		fits, ahead, scheduled := c.order.take(t, math.Ceil(float64(cost)), left)
		if !scheduled || fits {
			t.fullWalk = full
			return false, nil
		}
		reason = fmt.Sprintf("%s: %d credits left, %.0f kept for the visits ranked higher or under way", revisit.ReasonBudget, max(*left, 0), math.Ceil(ahead))
		if k.Fresh != nil && k.Fresh.Expand != nil {
			if children, fromStorage, err = storedChildren(ctx, c.opts.Pool, c.job, k, &t.Task); err != nil {
				log.Warn("could not expand a profile from stored data; visited", "task_id", t.ID, "err", err)
				t.fullWalk = full
				return false, nil
			}
		}
	}
	if k.Fresh != nil && k.Fresh.Expand != nil && !fromStorage {
		return false, nil // its lists cannot be found without a fetch
	}
	why := fmt.Sprintf("adaptive: %s: expected %.2f new per %.0f credits", reason, yield, math.Ceil(float64(cost)))
	saved := int(math.Ceil(float64(cost)))
	err = c.retryDB(context.WithoutCancel(c.work), func(ctx context.Context) error {
		return c.frontier.endFresh(ctx, c.runID, t, kinds.OutcomeSkippedAdaptive, why, saved, children)
	})
	switch {
	case errors.Is(err, ErrLeaseLost):
		return true, nil
	case err != nil:
		err = fmt.Errorf("task %d (%s %s): adaptive schedule: %w", t.ID, t.Kind, t.Key, err)
		c.stop(err)
		_ = c.release(t)
		return true, err
	}
	log.Debug("not revisited", "task_id", t.ID, "kind", t.Kind, "key", t.Key, "reason", reason)
	if len(children) > 0 {
		c.wakeOthers()
	}
	return true, nil
}

// observeRevisits records in crawl.revisit_items what run runID of job
// saw of the items it visited, with their new estimates, and, for an
// adaptive run, what its revisits captured (crawl.runs.revisit). Items
// a run already recorded are left as they are, so a run finished twice
// (stopped, resumed) records each visit once.
func observeRevisits(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, runID int64) error {
	type visit struct {
		kind, key, owner     string
		at                   time.Time
		pages                int
		items                int64
		newItems             *int64
		capped, complete     bool
		changed              *bool
		counter, counterRun  *int64
		followers, following *int64
	}
	rows, err := revisitVisits.Query(ctx, pool, revisitVisitsParams{RunID: runID, Kinds: revisitKinds()})
	if err != nil {
		return fmt.Errorf("revisit visits: %w", err)
	}
	var visits []visit
	for rows.Next() {
		var v visit
		if err := rows.Scan(&v.kind, &v.key, &v.owner, &v.at, &v.pages, &v.items, &v.newItems, &v.capped, &v.complete,
			&v.changed, &v.counter, &v.counterRun, &v.followers, &v.following); err != nil {
			rows.Close()
			return fmt.Errorf("revisit visits: %w", err)
		}
		visits = append(visits, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("revisit visits: %w", err)
	}
	type known struct {
		visits    int
		lastRun   int64
		lastAt    time.Time
		intervals []float32
		events    []float32
		censored  []bool
		pageSize  *float32
		fullPages *int
		edges     *int64
	}
	byItem := map[[2]string]*known{}
	var ks, keys []string
	for _, v := range visits {
		ks, keys = append(ks, v.kind), append(keys, v.key)
	}
	krows, err := revisitKnown.Query(ctx, pool, revisitKnownParams{JobName: job.Name, Kinds: ks, Keys: keys})
	if err != nil {
		return fmt.Errorf("revisit items: %w", err)
	}
	for krows.Next() {
		var kind, key string
		k := &known{}
		if err := krows.Scan(&kind, &key, &k.visits, &k.lastRun, &k.lastAt, &k.intervals, &k.events, &k.censored, &k.pageSize, &k.fullPages, &k.edges); err != nil {
			krows.Close()
			return fmt.Errorf("revisit items: %w", err)
		}
		byItem[[2]string{kind, key}] = k
	}
	krows.Close()
	if err := krows.Err(); err != nil {
		return fmt.Errorf("revisit items: %w", err)
	}
	var (
		batch    pgx.Batch
		captured runs.RevisitCaptured
		counters listCountersParams
	)
	counters.JobName, counters.RunID = job.Name, runID
	for _, v := range visits {
		kind, _ := revisitKind(v.kind)
		k := byItem[[2]string{v.kind, v.key}]
		if k != nil && k.lastRun >= runID {
			continue // recorded already
		}
		p := upsertRevisitParams{JobName: job.Name, Kind: v.kind, Key: v.key, Owner: v.owner, Visits: 1, LastRun: runID,
			LastVisitAt: v.at, Intervals: []float32{}, Events: []float32{}, Censored: []bool{}, Counter: v.counter, CounterRun: v.counterRun}
		if kind == revisit.Counter {
			p.Owner = v.key
			counters.Owners = append(counters.Owners, v.key)
			counters.Followers = append(counters.Followers, v.followers)
			counters.Following = append(counters.Following, v.following)
		}
		// What the visit saw, when it can be told: a list's new entries
		// were counted, a profile had a snapshot before.
		var events float64
		observed := false
		switch {
		case kind == revisit.List && v.newItems != nil:
			events, observed = float64(*v.newItems), true
		case kind == revisit.Counter && v.changed != nil:
			if *v.changed {
				events = 1
			}
			observed = true
		}
		if k != nil {
			p.Visits = k.visits + 1
			p.Intervals, p.Events, p.Censored = k.intervals, k.events, k.censored
			p.PageSize, p.FullPages, p.Edges = k.pageSize, k.fullPages, k.edges
			if days := v.at.Sub(k.lastAt).Hours() / 24; observed && days > 0 {
				p.Intervals = lastN(append(p.Intervals, float32(days)), revisitHistory)
				p.Events = lastN(append(p.Events, float32(events)), revisitHistory)
				p.Censored = lastN(append(p.Censored, v.capped), revisitHistory)
				captured.Items++
				captured.Events += events
				captured.Credits += int64(v.pages)
			}
		} else {
			captured.NewItems++
			captured.NewCredits += int64(v.pages)
		}
		if kind == revisit.List {
			if v.pages > 0 && v.items > 0 && (v.pages > 1 || v.complete) {
				ps := float32(math.Ceil(float64(v.items) / float64(v.pages)))
				if p.PageSize == nil || ps > *p.PageSize {
					p.PageSize = &ps
				}
			}
			switch {
			case v.complete:
				p.Complete = true
				pages, edges := v.pages, v.items
				p.FullPages, p.Edges = &pages, &edges
			case p.Edges != nil && v.newItems != nil:
				e := *p.Edges + *v.newItems
				p.Edges = &e
			}
		}
		obs := make([]revisit.Visit, len(p.Intervals))
		for i := range obs {
			obs[i] = revisit.Visit{Interval: float64(p.Intervals[i]), Events: float64(p.Events[i]), Censored: p.Censored[i]}
		}
		prior := revisit.DefaultPrior(kind)
		if kind == revisit.List {
			p.Rate = revisit.EstimateCount(prior, obs, revisitHalfLife)
		} else {
			p.Rate = revisit.EstimateChange(prior, obs, revisitHalfLife)
		}
		p.Rate = finite(p.Rate)
		upsertRevisit.Queue(&batch, p)
	}
	if len(counters.Owners) > 0 {
		setListCounters.Queue(&batch, counters)
	}
	markWalksCut.Queue(&batch, markCutParams{JobName: job.Name, RunID: runID, Kinds: revisitKinds()})
	if job.Reuse.Adaptive {
		totals, _ := json.Marshal(runs.RevisitTotals{Captured: &captured})
		setRunRevisit.Queue(&batch, runRevisitParams{RunID: runID, Revisit: totals})
	}
	if batch.Len() == 0 {
		return nil
	}
	// Close reads every result and returns the first error.
	if err := pool.SendBatch(ctx, &batch).Close(); err != nil {
		return fmt.Errorf("record revisits: %w", err)
	}
	return nil
}

func lastN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// spendOrder keeps an adaptive run's visits in its schedule's order within
// this process: a visit chosen for its yield starts only if the credits
// left cover it after those of the higher-priority visits not started
// yet, so that a budget the estimates undershoot runs out on the least
// valuable visits, not on whichever the frontier leased first. Visits
// admitted by this process and not ended yet count for what they are
// still expected to spend (their expected cost less the pages they
// bought), so that workers admitting visits at once do not overrun the
// budget together. The credits left are those neither billed nor held by
// a lease, and a page counts as bought once fetched: a request under way
// counts twice, so near the end of a budget a visit may be kept out for
// up to a credit per worker, never let in beyond it. Memory: two words
// per scheduled visit.
type spendOrder struct {
	mu       sync.Mutex
	rank     map[[2]string]int // (kind, key) -> rank, 0 the highest priority
	cost     []float64         // by rank
	tree     []float64         // Fenwick tree of the costs of visits not started
	inflight map[int64]inflightVisit
}

// inflightVisit is a visit admitted and not ended: its expected cost and
// the pages its task bought so far (Task.bought).
type inflightVisit struct {
	cost   float64
	bought *atomic.Int64
}

// held is what the visits in flight are still expected to spend.
func (o *spendOrder) held() float64 {
	h := 0.0
	for _, v := range o.inflight {
		h += max(0, v.cost-float64(v.bought.Load()))
	}
	return h
}

type revisitOrderRow struct {
	Kind string
	Key  string
	Cost float32
}

var (
	revisitOrder = db.Prepare[runArg]("RevisitOrder")
	creditsLeft  = db.Prepare[runArg]("CreditsLeft")
)

// loadSpendOrder reads run runID's scheduled visits, highest priority first.
func loadSpendOrder(ctx context.Context, q db.Querier, runID int64) (*spendOrder, error) {
	rows, err := revisitOrder.Query(ctx, q, runArg{runID})
	if err != nil {
		return nil, fmt.Errorf("revisit order: %w", err)
	}
	o := &spendOrder{rank: map[[2]string]int{}, inflight: map[int64]inflightVisit{}}
	var r revisitOrderRow
	_, err = pgx.ForEachRow(rows, []any{&r.Kind, &r.Key, &r.Cost}, func() error {
		o.rank[[2]string{r.Kind, r.Key}] = len(o.cost)
		// Pages are bought whole: a visit's expected cost, rounded up.
		o.cost = append(o.cost, math.Ceil(float64(r.Cost)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("revisit order: %w", err)
	}
	o.tree = make([]float64, len(o.cost)+1)
	for i, c := range o.cost {
		o.add(i, c)
	}
	return o, nil
}

func (o *spendOrder) add(i int, c float64) {
	for i++; i < len(o.tree); i += i & -i {
		o.tree[i] += c
	}
}

// ahead is the cost of the visits ranked before i not started yet.
func (o *spendOrder) ahead(i int) float64 {
	s := 0.0
	for ; i > 0; i -= i & -i {
		s += o.tree[i]
	}
	return max(s, 0)
}

// take takes task t's item out of the visits waiting and says whether its
// visit, of expected cost, fits in left (the run's credits neither billed
// nor held; nil: no budget) after the visits ranked before it still to come and
// what those in flight in this process are still expected to spend; a
// visit that fits is in flight until end(t.ID). scheduled is false for an
// item the schedule does not visit, or one already taken.
func (o *spendOrder) take(t *Task, cost float64, left *int64) (fits bool, ahead float64, scheduled bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i, ok := o.rank[[2]string{t.Kind, t.Key}]
	if !ok {
		return false, 0, false
	}
	delete(o.rank, [2]string{t.Kind, t.Key})
	o.add(i, -o.cost[i])
	ahead = o.ahead(i) + o.held()
	if left != nil && float64(*left)-ahead < cost {
		return false, ahead, true
	}
	t.bought = new(atomic.Int64)
	o.inflight[t.ID] = inflightVisit{cost: o.cost[i], bought: t.bought}
	return true, ahead, true
}

// end stops counting task id's visit as in flight.
func (o *spendOrder) end(id int64) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.inflight, id)
}

// creditsLeftNow is the run's credits neither billed nor held (nil: no
// budget).
func (c *crawl) creditsLeftNow(ctx context.Context) (*int64, error) {
	var left *int64
	if err := creditsLeft.QueryRow(ctx, c.opts.Pool, runArg{c.runID}).Scan(&left); err != nil {
		return nil, fmt.Errorf("credits left: %w", err)
	}
	return left, nil
}
