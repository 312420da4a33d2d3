package adaptive

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/revisit"
)

// spendOrder keeps an adaptive run's visits in its schedule's order: a
// visit chosen for its yield (or one the schedule skipped for the budget
// or found unreached) starts only if the credits left cover what it costs
// at most (revisit.Decision.CostHigh) after what the visits ranked higher
// and not started yet and those under way may cost, so that a budget the
// estimates undershoot runs out on the least valuable visits, not on
// whichever the frontier leased first, and no visit is cut short for want
// of credits.
//
// A visit to come is kept what it costs at most, so that each finds
// credits for itself at its turn; a visit under way counts for that less
// the pages it bought (Visit.Bought). The visits of other
// processes on the run are read from the database: those they are on
// count as under way, those they ended no longer count. That view is
// loaded when the run starts and again, at most every poll interval, when
// a visit would be skipped: a visit is never skipped on a view older
// than that. The credits left are the budget's (Config.Credits). What the
// estimates kept and did not spend is spent by the second look
// (Revisits.SecondLook), once the frontier is done. Memory: two words per
// scheduled item.
type spendOrder struct {
	runID int64
	owner string        // lease owner prefix of this process
	every time.Duration // the view of other processes is reloaded at most this often

	mu       sync.Mutex
	rank     map[[2]string]int // (kind, key) -> rank among the visits to come, 0 the highest priority
	cost     []float64         // by rank: the credits kept for it, its cost at most (0 for a visit the schedule did not choose)
	tree     []float64         // Fenwick tree of cost over the ranks still to come
	others   float64           // what the visits other processes are on may still cost
	inflight map[int64]inflightVisit
	loaded   time.Time
	loading  bool
}

// inflightVisit is a visit admitted and not ended: what it costs at most
// and the pages its task bought so far (Visit.Bought).
type inflightVisit struct {
	key    [2]string // (kind, key)
	high   float64
	bought *atomic.Int64
}

type revisitOrderParams struct {
	RunID int64  `db:"run_id"`
	Owner string `db:"owner"`
	// Admit are the decisions (revisit.Reason*) of items the schedule
	// skipped that a run still admits if the credits left cover them.
	Admit []string `db:"admit"`
}

// admitSkipped are revisitOrderParams.Admit.
var admitSkipped = []string{revisit.ReasonBudget, revisit.ReasonUnreached}

var (
	revisitOrder = db.Prepare[revisitOrderParams]("RevisitOrder")
)

// loadSpendOrder reads run runID's order as the process of lease owner
// prefix owner sees it.
func loadSpendOrder(ctx context.Context, q db.Querier, runID int64, owner string, every time.Duration) (*spendOrder, error) {
	o := &spendOrder{runID: runID, owner: owner, every: every, inflight: map[int64]inflightVisit{}}
	v, err := o.read(ctx, q)
	if err != nil {
		return nil, err
	}
	o.set(v)
	return o, nil
}

// orderView is the order as read from the database.
type orderView struct {
	keys   [][2]string
	cost   []float64
	others float64
	mine   map[[2]string]bool // leased by this process
	at     time.Time
}

func (o *spendOrder) read(ctx context.Context, q db.Querier) (orderView, error) {
	v := orderView{mine: map[[2]string]bool{}, at: time.Now()}
	rows, err := revisitOrder.Query(ctx, q, revisitOrderParams{RunID: o.runID, Owner: o.owner + "#", Admit: admitSkipped})
	if err != nil {
		return v, fmt.Errorf("revisit order: %w", err)
	}
	var (
		kind, key, state string
		visit            bool
		high             float32
		pages            int
		mine             bool
	)
	_, err = pgx.ForEachRow(rows, []any{&kind, &key, &visit, &high, &state, &pages, &mine}, func() error {
		switch {
		case state == frontier.StateLeased && !mine:
			if visit {
				v.others += max(0, float64(high)-float64(pages))
			}
			return nil
		case state == frontier.StateLeased:
			v.mine[[2]string{kind, key}] = true
		}
		v.keys = append(v.keys, [2]string{kind, key})
		c := 0.0
		if visit {
			c = float64(high)
		}
		v.cost = append(v.cost, c)
		return nil
	})
	if err != nil {
		return v, fmt.Errorf("revisit order: %w", err)
	}
	return v, nil
}

// set makes v the order; the caller holds mu (or owns o alone). A visit
// this process admitted is under way, not to come.
func (o *spendOrder) set(v orderView) {
	o.rank = make(map[[2]string]int, len(v.keys))
	o.cost = o.cost[:0]
	under := map[[2]string]bool{}
	for _, f := range o.inflight {
		under[f.key] = true
	}
	for i, k := range v.keys {
		if v.mine[k] && under[k] {
			continue
		}
		o.rank[k] = len(o.cost)
		o.cost = append(o.cost, v.cost[i])
	}
	o.tree = make([]float64, len(o.cost)+1)
	for i, c := range o.cost {
		o.add(i, c)
	}
	o.others, o.loaded = v.others, v.at
}

func (o *spendOrder) add(i int, c float64) {
	for i++; i < len(o.tree); i += i & -i {
		o.tree[i] += c
	}
}

// ahead is the cost kept for the visits ranked before i not started yet.
func (o *spendOrder) ahead(i int) float64 {
	s := 0.0
	for ; i > 0; i -= i & -i {
		s += o.tree[i]
	}
	return max(s, 0)
}

// held is what the visits under way may still cost.
func (o *spendOrder) held() float64 {
	h := o.others
	for _, v := range o.inflight {
		h += max(0, v.high-float64(v.bought.Load()))
	}
	return h
}

// take takes task t's item out of the visits to come and says whether its
// visit, of cost high at most, fits in left (the credits left; nil: no
// budget, or a visit made whatever it) after the visits ranked before it
// still to come and those under way; a visit that fits is under way until
// end(t.ID). scheduled is false for an item not in the order (never
// scheduled, or already taken).
func (o *spendOrder) take(t *kinds.Task, high float64, left *int64, v *Visit) (fits bool, ahead float64, scheduled bool) {
	if o == nil {
		return true, 0, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := [2]string{t.Kind, t.Key}
	i, ok := o.rank[k]
	if !ok {
		return false, 0, false
	}
	delete(o.rank, k)
	o.add(i, -o.cost[i])
	ahead = o.ahead(i) + o.held()
	if left != nil && float64(*left)-ahead < high {
		return false, ahead, true
	}
	o.admit(t, high, v)
	return true, ahead, true
}

// retake is take again after reloading the view of other processes, if it
// is older than the poll interval (only one worker reloads at a time; the
// others answer from the view they have).
func (r *Revisits) retake(ctx context.Context, t *kinds.Task, high float64, left *int64, v *Visit) (fits bool, ahead float64) {
	o := r.order
	o.mu.Lock()
	stale := !o.loading && time.Since(o.loaded) >= o.every
	if stale {
		o.loading = true
	}
	o.mu.Unlock()
	if !stale {
		return false, o.aheadOf(t)
	}
	var view orderView
	err := r.cfg.Retry(ctx, func(ctx context.Context) (err error) {
		view, err = o.read(ctx, r.cfg.Pool)
		return err
	})
	o.mu.Lock()
	o.loading = false
	if err == nil {
		o.set(view)
	}
	o.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Log.Warn("could not read the adaptive order again", "err", err)
		}
		return false, o.aheadOf(t)
	}
	if left, err = r.cfg.Credits.LeftNow(ctx); err != nil {
		return false, o.aheadOf(t)
	}
	fits, ahead, scheduled := o.take(t, high, left, v)
	return fits || !scheduled, ahead
}

// aheadOf is what take would keep before t now, without taking it.
func (o *spendOrder) aheadOf(t *kinds.Task) float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	a := o.held()
	if i, ok := o.rank[[2]string{t.Kind, t.Key}]; ok {
		a += o.ahead(i)
	}
	return a
}

// admitted counts t's visit, of cost high at most, as under way (the
// second look admitted it, or it is visited for want of stored data).
func (o *spendOrder) admitted(t *kinds.Task, high float64, v *Visit) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := [2]string{t.Kind, t.Key}
	if i, ok := o.rank[k]; ok {
		delete(o.rank, k)
		o.add(i, -o.cost[i])
	}
	o.admit(t, high, v)
}

// admit counts t's visit as under way, its pages bought counted in v.
func (o *spendOrder) admit(t *kinds.Task, high float64, v *Visit) {
	v.bought = new(atomic.Int64)
	o.inflight[t.ID] = inflightVisit{high: high, bought: v.bought, key: [2]string{t.Kind, t.Key}}
}

// end stops counting task id's visit as under way.
func (o *spendOrder) end(id int64) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.inflight, id)
}

type secondLookParams struct {
	IDs []int64 `db:"ids"`
}

var (
	secondLookCandidates = db.Prepare[db.RunArg]("SecondLookCandidates")
	secondLookTasks      = db.Prepare[secondLookParams]("SecondLook")
)

// SecondLook gives the credits an adaptive run's estimates kept and its
// visits did not spend to the visits skipped for the budget: once the
// frontier is done (nothing pending or leased), those whose cost at most
// fits in the credits left, highest priority first, go back to pending,
// admitted whatever the order says. It says how many it sent back, and
// whether it looked (ok: the run is adaptive, and the look did not fail);
// the runner calls it again when they are done, until none fits.
func (r *Revisits) SecondLook(ctx context.Context) (sent int, ok bool) {
	if r == nil || !r.cfg.Job.Reuse.Adaptive || ctx.Err() != nil {
		return 0, false
	}
	var n int
	err := r.cfg.Retry(ctx, func(ctx context.Context) error {
		n = 0
		left, err := r.cfg.Credits.LeftNow(ctx)
		if err != nil || left == nil {
			return err
		}
		return pgx.BeginFunc(ctx, r.cfg.Pool, func(tx pgx.Tx) error {
			rows, err := secondLookCandidates.Query(ctx, tx, db.RunArg{RunID: r.cfg.RunID})
			if err != nil {
				return err
			}
			var (
				id    int64
				high  float32
				spent float64
				ids   []int64
			)
			if _, err := pgx.ForEachRow(rows, []any{&id, &high}, func() error {
				if spent+float64(high) <= float64(*left) {
					spent += float64(high)
					ids = append(ids, id)
				}
				return nil
			}); err != nil || len(ids) == 0 {
				return err
			}
			n = len(ids)
			_, err = secondLookTasks.Exec(ctx, tx, secondLookParams{IDs: ids})
			return err
		})
	})
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Log.Warn("adaptive second look failed; the visits skipped for the budget stay skipped", "err", err)
		}
		return 0, false
	}
	if n > 0 {
		r.cfg.Log.Info("adaptive second look: visits skipped for the budget fit in the credits left", "visits", n)
	}
	return n, true
}
