package frontier

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/kinds"
)

// Task states.
const (
	StatePending = "pending"
	StateLeased  = "leased"
	StateDone    = "done"
	StateFailed  = "failed"
	StateSkipped = "skipped"
)

// ErrLeaseLost means another worker took the task over (its lease expired):
// the stale worker's transaction is rolled back and its page discarded.
var ErrLeaseLost = errors.New("lease lost: the task was taken over by another worker")

// Task is a leased task: the kinds' task (what it is and how far it got)
// with its lease, as this process holds it.
type Task struct {
	kinds.Task
	Token int64 // fencing token of the lease
	// Reexpand: the task was found again at a smaller depth after it was
	// fetched; it is expanded again from stored data (EndReexpand).
	Reexpand bool
	// Outcome is how the task ended before, when it is expanded again: a
	// list walked whole leads to what this run stored, one skipped or cut
	// to what the job's runs know (pipeline's reexpand).
	Outcome kinds.Outcome
	// Yield is a content list's expected entries per credit, by which it
	// was leased after its depth's other tasks (crawl.tasks.lease_yield);
	// nil for the others.
	Yield *float64
}

// NewTask is a task to add to the frontier; (run, kind, key) dedupes it.
type NewTask = kinds.NewTask

// Frontier is the durable queue of a run's tasks in Postgres.
type Frontier struct {
	pool   *pgxpool.Pool
	owner  string
	ttl    time.Duration
	leases atomic.Int64 // numbers each lease of this process

	// aside are the tasks this process set aside (SetAside): pending, and
	// never leased by it again.
	asideMu sync.Mutex
	aside   []int64
}

// NewFrontier returns the frontier as seen by owner, whose leases last ttl.
func NewFrontier(pool *pgxpool.Pool, owner string, ttl time.Duration) *Frontier {
	return &Frontier{pool: pool, owner: owner, ttl: ttl}
}

// db.RunArg is the parameter of the statements that take only a run.
// Parameters of the frontier's statements (internal/db/queries/tasks.sql).
type (
	addTasksParams struct {
		RunID int64 `db:"run_id"`
		// Reexpandable are the kinds expanded again when found at a smaller
		// depth after their fetch (kinds.Reexpandable).
		Reexpandable []string `db:"reexpandable"`
	}
	// taskRow is a row of AddTasks.
	taskRow struct {
		Parent   *int64 `db:"parent_id"` // the task that found it; nil: a seed
		Kind     string `db:"kind"`
		Key      string `db:"key"`
		Params   string `db:"params"` // JSON
		Depth    int32  `db:"depth"`
		MaxPages int32  `db:"max_pages"`
		Refresh  int64  `db:"refresh_us"` // refresh_after in microseconds, 0: none
		// Count and Credits: a content list's counter and the price of its
		// page, for its lease_yield (Credits 0: none).
		Count   int64 `db:"count"`
		Credits int32 `db:"credits"`
	}
	leaseParams struct {
		RunID int64         `db:"run_id"`
		Owner string        `db:"owner"` // the leases' owner tag
		TTL   time.Duration `db:"ttl"`
		N     int           `db:"n"` // how many tasks at most
		Aside []int64       `db:"aside"`
	}
	activeParams struct {
		RunID int64   `db:"run_id"`
		Aside []int64 `db:"aside"`
	}
	// leaseArg names a lease: the task and its fencing token.
	leaseArg struct {
		ID    int64 `db:"id"`
		Token int64 `db:"token"`
	}
	advanceParams struct {
		ID         int64         `db:"id"`
		Token      int64         `db:"token"`
		Pages      int           `db:"pages"` // the page count before this page
		Cursor     string        `db:"cursor"`
		Items      int           `db:"items"`
		Stop       string        `db:"stop"`
		Outcome    string        `db:"outcome"` // with stop: how the task ended
		TTL        time.Duration `db:"ttl"`
		Dropped    int           `db:"dropped"`
		DropReason string        `db:"drop_reason"`
		Saved      int           `db:"saved"`     // credits saved (stop_at_seen)
		NewItems   *int          `db:"new_items"` // entries no earlier run stored; nil: not counted
	}
	advancedParams struct {
		ID     int64  `db:"id"`
		Token  int64  `db:"token"`
		Pages  int    `db:"pages"`
		Cursor string `db:"cursor"`
	}
	extendParams struct {
		IDs    []int64       `db:"ids"`
		Tokens []int64       `db:"tokens"`
		TTL    time.Duration `db:"ttl"`
	}
	finishTaskParams struct {
		ID     int64  `db:"id"`
		Token  int64  `db:"token"`
		State  string `db:"state"`
		Reason string `db:"reason"`
		// Outcome is how the task ended (State is its first word).
		Outcome string `db:"outcome"`
	}
	rescueParams struct {
		RunID int64   `db:"run_id"`
		Keep  []int64 `db:"keep"` // tasks this process still works on
	}
)

var (
	insertTasks       = db.PrepareBulk[addTasksParams, taskRow]("AddTasks")
	leaseTasks        = db.Prepare[leaseParams]("LeaseTasks")
	heldTasks         = db.Prepare[db.OwnerArg]("HeldTasks")
	rescueTasks       = db.Prepare[rescueParams]("RescueTasks")
	advanceTask       = db.Prepare[advanceParams]("AdvanceTask")
	taskAdvanced      = db.Prepare[advancedParams]("TaskAdvanced")
	extendLeases      = db.Prepare[extendParams]("ExtendLeases")
	finishTask        = db.Prepare[finishTaskParams]("FinishTask")
	releaseTask       = db.Prepare[leaseArg]("ReleaseTask")
	countActiveTasks  = db.Prepare[activeParams]("CountActiveTasks")
	releaseOwnedTasks = db.Prepare[db.OwnerArg]("ReleaseOwnedTasks")
)

// reexpandable are the kinds.Reexpandable, read once.
var reexpandable = kinds.Reexpandable()

// addParams are the parameters of AddTasks in run runID.
func addParams(runID int64) addTasksParams {
	return addTasksParams{RunID: runID, Reexpandable: reexpandable}
}

// AddTasks adds tasks found by no task (seeds) to run runID, in one
// statement (of a transaction under way, when q is one).
func AddTasks(ctx context.Context, q db.Querier, runID int64, tasks []NewTask) error {
	rows, err := taskRows(tasks, nil)
	if err != nil || rows == nil {
		return err
	}
	_, err = insertTasks.Exec(ctx, q, addParams(runID), rows)
	return err
}

// taskRows are the rows of AddTasks for tasks, nil when there are none.
// A task found again at a smaller depth while still pending takes that
// depth, so what a run reaches does not depend on which worker found it
// first.
func taskRows(tasks []NewTask, parent *int64) ([]taskRow, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	// One row per key (the least depth), in key order: one statement may not
	// touch a row twice, and a fixed order keeps concurrent inserts from
	// deadlocking.
	best := make(map[[2]string]NewTask, len(tasks))
	for _, t := range tasks {
		k := [2]string{t.Kind, t.Key}
		if prev, ok := best[k]; !ok || t.Depth < prev.Depth {
			best[k] = t
		}
	}
	tasks = slices.SortedFunc(maps.Values(best), func(a, b NewTask) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Key, b.Key))
	})
	rows := make([]taskRow, len(tasks))
	for i, t := range tasks {
		p, err := json.Marshal(t.Params)
		if err != nil {
			return nil, err
		}
		if t.Params == nil {
			p = []byte("{}")
		}
		rows[i] = taskRow{Parent: parent, Kind: t.Kind, Key: t.Key, Params: string(p), Depth: int32(t.Depth), MaxPages: int32(t.MaxPages), Refresh: t.RefreshAfter.Microseconds()}
		if n, ok := (&kinds.Task{Params: t.Params}).Count(); ok && t.Credits > 0 {
			rows[i].Count, rows[i].Credits = n, int32(min(t.Credits, math.MaxInt32))
		}
	}
	return rows, nil
}

// Rescue returns the run's expired leases to the frontier and says how
// many tasks it rescued; it
// skips the tasks in keep: those this process is still working on (their
// lease may have expired while the database was away).
func (f *Frontier) Rescue(ctx context.Context, runID int64, keep ...int64) (int64, error) {
	if keep == nil {
		keep = []int64{}
	}
	var n int64
	if err := rescueTasks.QueryRow(ctx, f.pool, rescueParams{RunID: runID, Keep: keep}).Scan(&n); err != nil {
		return 0, fmt.Errorf("rescue expired leases: %w", err)
	}
	return n, nil
}

// Lease takes one task for this owner, or returns nil when none is ready
// (LeaseN of one).
func (f *Frontier) Lease(ctx context.Context, runID int64, retry func(context.Context, func(context.Context) error) error) (*Task, error) {
	ts, err := f.LeaseN(ctx, runID, 1, retry)
	if len(ts) == 0 {
		return nil, err
	}
	return ts[0], err
}

// LeaseN takes up to n tasks for this owner in one statement, lower depth
// first (within a depth, content lists by yield after the others); none
// when none is ready. retry runs the statement again while the database
// is unreachable (nil: once). Each call tags its leases with a
// unique owner string, so a retry whose first attempt committed without
// its answer arriving finds those tasks instead of leaving them leased to
// nobody until their leases expire.
func (f *Frontier) LeaseN(ctx context.Context, runID int64, n int, retry func(context.Context, func(context.Context) error) error) ([]*Task, error) {
	if retry == nil {
		retry = func(ctx context.Context, op func(context.Context) error) error { return op(ctx) }
	}
	tag := f.owner + "#" + strconv.FormatInt(f.leases.Add(1), 10)
	var ts []*Task
	attempt := 0
	err := retry(ctx, func(ctx context.Context) error {
		attempt++
		var err error
		if attempt > 1 {
			rows, err := heldTasks.Query(ctx, f.pool, db.OwnerArg{RunID: runID, Owner: tag})
			if ts, err = scanTasks(runID, rows, err); len(ts) > 0 || err != nil {
				return err
			}
		}
		rows, err := leaseTasks.Query(ctx, f.pool, leaseParams{RunID: runID, Owner: tag, TTL: f.ttl, N: n, Aside: f.Aside()})
		ts, err = scanTasks(runID, rows, err)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lease tasks: %w", err)
	}
	slices.SortFunc(ts, leaseOrder)
	return ts, nil
}

// leaseOrder is LeaseTasks' order: lower depth first; within a depth the
// tasks without a yield, then by yield, highest first; then as found.
func leaseOrder(a, b *Task) int {
	ya, yb := a.Yield != nil, b.Yield != nil
	c := cmp.Compare(a.Depth, b.Depth)
	switch {
	case c != 0:
		return c
	case ya != yb && !ya:
		return -1
	case ya != yb:
		return 1
	case ya:
		if c := cmp.Compare(*b.Yield, *a.Yield); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.ID, b.ID)
}

// scanTasks reads the tasks of a LeaseTasks or HeldTasks result.
func scanTasks(runID int64, rows pgx.Rows, err error) ([]*Task, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ts []*Task
	for rows.Next() {
		t := &Task{Task: kinds.Task{RunID: runID}}
		var params []byte
		var refreshUS int64
		if err := rows.Scan(&t.ID, &t.Kind, &t.Key, &params, &t.Depth, &t.MaxPages, &t.Cursor, &t.Pages, &t.Items, &t.Token, &refreshUS, &t.Reexpand, &t.Outcome, &t.Yield); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(params, &t.Params); err != nil {
			return nil, fmt.Errorf("task %d params: %w", t.ID, err)
		}
		t.RefreshAfter = time.Duration(refreshUS) * time.Microsecond
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// ExtendLeases renews the leases of the tasks held (the process's
// heartbeat, one statement for all) and returns the ids of those it
// renewed: a lease missing from them is lost.
func (f *Frontier) ExtendLeases(ctx context.Context, held []*Task) (map[int64]bool, error) {
	held = slices.SortedFunc(slices.Values(held), func(a, b *Task) int { return cmp.Compare(a.ID, b.ID) })
	p := extendParams{IDs: make([]int64, len(held)), Tokens: make([]int64, len(held)), TTL: f.ttl}
	for i, t := range held {
		p.IDs[i], p.Tokens[i] = t.ID, t.Token
	}
	rows, err := extendLeases.Query(ctx, f.pool, p)
	if err != nil {
		return nil, fmt.Errorf("extend leases: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("extend leases: %w", err)
	}
	renewed := make(map[int64]bool, len(ids))
	for _, id := range ids {
		renewed[id] = true
	}
	return renewed, nil
}

// Finish ends a task with outcome (failed or skipped, usually) and a reason.
func (f *Frontier) Finish(ctx context.Context, t *Task, outcome kinds.Outcome, reason string) error {
	var n int64
	p := finishTaskParams{ID: t.ID, Token: t.Token, State: outcome.State(), Reason: CleanReason(reason), Outcome: string(outcome)}
	if err := finishTask.QueryRow(ctx, f.pool, p).Scan(&n); err != nil {
		return fmt.Errorf("finish task %d: %w", t.ID, err)
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// Release hands a leased task back to the frontier unfinished (shutdown, or
// a stop of the run); its cursor keeps the progress made.
func (f *Frontier) Release(ctx context.Context, t *Task) error {
	var n int64
	if err := releaseTask.QueryRow(ctx, f.pool, leaseArg{ID: t.ID, Token: t.Token}).Scan(&n); err != nil {
		return fmt.Errorf("release task %d: %w", t.ID, err)
	}
	return nil
}

// SetAside releases a leased task that this process cannot work on now
// (its next request costs more than the budget has left): it stays
// pending, for a larger budget or another process, and this process
// leases it no more.
func (f *Frontier) SetAside(ctx context.Context, t *Task) error {
	f.asideMu.Lock()
	f.aside = append(f.aside, t.ID)
	f.asideMu.Unlock()
	return f.Release(ctx, t)
}

// Aside are the tasks this process set aside.
func (f *Frontier) Aside() []int64 {
	f.asideMu.Lock()
	defer f.asideMu.Unlock()
	return append([]int64{}, f.aside...)
}

// Active counts the run's pending tasks (but those this process set
// aside) and its leased tasks.
func (f *Frontier) Active(ctx context.Context, runID int64) (pending, leased int64, err error) {
	err = countActiveTasks.QueryRow(ctx, f.pool, activeParams{RunID: runID, Aside: f.Aside()}).Scan(&pending, &leased)
	if err != nil {
		err = fmt.Errorf("count active tasks: %w", err)
	}
	return pending, leased, err
}

// ReleaseOwned hands back every task this process still holds in the run:
// the catch-all at the end of a run, for leases whose worker was stopped
// between statements.
func (f *Frontier) ReleaseOwned(ctx context.Context, runID int64) (int64, error) {
	var n int64
	if err := releaseOwnedTasks.QueryRow(ctx, f.pool, db.OwnerArg{RunID: runID, Owner: f.owner + "#"}).Scan(&n); err != nil {
		return 0, fmt.Errorf("release leases of %s: %w", f.owner, err)
	}
	return n, nil
}
