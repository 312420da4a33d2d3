package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/sinks"
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
	// fetched; it is expanded again from stored data (reuse.go).
	Reexpand bool
	// fullWalk: the adaptive schedule wants the list walked to its end
	// (revisit.go); stop_at_seen does not cut it.
	fullWalk bool
	// bought counts the pages of a visit the adaptive schedule admitted
	// (nil otherwise), read by other workers weighing theirs.
	bought *atomic.Int64
	// lease is the lease's context in this process: cancelled with
	// ErrLeaseLost when the heartbeat finds the lease lost, and at the run's
	// hard stop (nil outside the runner: context.Background).
	lease context.Context
}

// NewTask is a task to add to the frontier; (run, kind, key) dedupes it.
type NewTask = kinds.NewTask

// Frontier is the durable queue of a run's tasks in Postgres.
type Frontier struct {
	pool   *pgxpool.Pool
	owner  string
	ttl    time.Duration
	leases atomic.Int64 // numbers each lease of this process
}

// NewFrontier returns the frontier as seen by owner, whose leases last ttl.
func NewFrontier(pool *pgxpool.Pool, owner string, ttl time.Duration) *Frontier {
	return &Frontier{pool: pool, owner: owner, ttl: ttl}
}

// Parameters of the frontier's statements (internal/db/queries/tasks.sql).
type (
	addTasksParams struct {
		RunID    int64  `db:"run_id"`
		ParentID *int64 `db:"parent_id"`
		// Reexpandable are the kinds expanded again when found at a smaller
		// depth after their fetch (kinds.Reexpandable).
		Reexpandable []string `db:"reexpandable"`
	}
	// taskRow is a row of AddTasks.
	taskRow struct {
		Kind     string `db:"kind"`
		Key      string `db:"key"`
		Params   string `db:"params"` // JSON
		Depth    int32  `db:"depth"`
		MaxPages int32  `db:"max_pages"`
		Refresh  int64  `db:"refresh_us"` // refresh_after in microseconds, 0: none
	}
	leaseParams struct {
		RunID int64         `db:"run_id"`
		Owner string        `db:"owner"` // the leases' owner tag
		TTL   time.Duration `db:"ttl"`
		N     int           `db:"n"` // how many tasks at most
	}
	heldParams struct {
		RunID int64  `db:"run_id"`
		Owner string `db:"owner"`
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
	ownerParams struct {
		RunID int64  `db:"run_id"`
		Owner string `db:"owner"` // lease owner prefix
	}
)

var (
	insertTasks       = db.PrepareBulk[addTasksParams, taskRow]("AddTasks")
	leaseTasks        = db.Prepare[leaseParams]("LeaseTasks")
	heldTasks         = db.Prepare[heldParams]("HeldTasks")
	rescueTasks       = db.Prepare[rescueParams]("RescueTasks")
	advanceTask       = db.Prepare[advanceParams]("AdvanceTask")
	taskAdvanced      = db.Prepare[advancedParams]("TaskAdvanced")
	extendLeases      = db.Prepare[extendParams]("ExtendLeases")
	finishTask        = db.Prepare[finishTaskParams]("FinishTask")
	releaseTask       = db.Prepare[leaseArg]("ReleaseTask")
	countActiveTasks  = db.Prepare[runArg]("CountActiveTasks")
	releaseOwnedTasks = db.Prepare[ownerParams]("ReleaseOwnedTasks")
)

// reexpandable are the kinds.Reexpandable, read once.
var reexpandable = kinds.Reexpandable()

// addParams are the parameters of AddTasks for children of parent.
func addParams(runID int64, parent *int64) addTasksParams {
	return addTasksParams{RunID: runID, ParentID: parent, Reexpandable: reexpandable}
}

// addTasks inserts tasks inside tx.
func addTasks(ctx context.Context, tx pgx.Tx, runID int64, parent *int64, tasks []NewTask) error {
	rows, err := taskRows(tasks)
	if err != nil || rows == nil {
		return err
	}
	_, err = insertTasks.Exec(ctx, tx, addParams(runID, parent), rows)
	return err
}

// taskRows are the rows of AddTasks for tasks, nil when there are none.
// A task found again at a smaller depth while still pending takes that
// depth, so what a run reaches does not depend on which worker found it
// first.
func taskRows(tasks []NewTask) ([]taskRow, error) {
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
		rows[i] = taskRow{Kind: t.Kind, Key: t.Key, Params: string(p), Depth: int32(t.Depth), MaxPages: int32(t.MaxPages), Refresh: t.RefreshAfter.Microseconds()}
	}
	return rows, nil
}

// Rescue returns the run's expired leases to the frontier, and the credits
// they still held to the budget, and says how many tasks it rescued; it
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
// first; none when none is ready. retry runs the statement again while the
// database is unreachable (nil: once). Each call tags its leases with a
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
			rows, err := heldTasks.Query(ctx, f.pool, heldParams{RunID: runID, Owner: tag})
			if ts, err = scanTasks(runID, rows, err); len(ts) > 0 || err != nil {
				return err
			}
		}
		rows, err := leaseTasks.Query(ctx, f.pool, leaseParams{RunID: runID, Owner: tag, TTL: f.ttl, N: n})
		ts, err = scanTasks(runID, rows, err)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lease tasks: %w", err)
	}
	slices.SortFunc(ts, func(a, b *Task) int { return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.ID, b.ID)) })
	return ts, nil
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
		if err := rows.Scan(&t.ID, &t.Kind, &t.Key, &params, &t.Depth, &t.MaxPages, &t.Cursor, &t.Pages, &t.Items, &t.Token, &refreshUS, &t.Reexpand); err != nil {
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

// PageCommit is what one page of a task commits: its rows, the tasks it
// discovered, and how the task goes on.
type PageCommit struct {
	Rows     *sinks.Batch // nil: none
	Children []NewTask
	Next     string      // the cursor to continue from
	Items    int         // entries the page held, dropped ones included
	Stop     string      // when not empty, the task ends with this reason
	Drops    kinds.Drops // entries received but not stored
	Saved    int         // credits saved by reuse (stop_at_seen), added to crawl.tasks.credits_saved
	// NewItems, when not nil, is added to crawl.tasks.new_items: the
	// page's entries no earlier run stored.
	NewItems *int
	// Archive, when not nil, is the page's body, kept in crawl.pages.
	Archive *ArchivedPage
	// Outcome is how the task ends when Stop is set (empty:
	// kinds.OutcomeDone, an object fetched).
	Outcome kinds.Outcome
}

// Drops are a page's entries that were received but not stored.
type Drops = kinds.Drops

// Commit records a fetched page: the task's advance (the cursor to
// continue from and, when stop is not empty, the end of the task with stop
// as its reason, and the entries the page dropped), the page's rows and the
// tasks it discovered. They go as one pgx batch, which runs in one implicit
// transaction: a single round trip (no BEGIN, no COMMIT). Send writes the
// batch without waiting for its results. What the page's requests cost is
// the budget's (budget.go), not the commit's.
//
// The advance goes first, under the fencing token: for a stale worker it
// matches no row, crawl.expect_advanced aborts the batch and Commit returns
// ErrLeaseLost. The expected page count makes it idempotent: when a commit
// whose answer was lost is retried, the row already shows this page, and
// Commit returns errAlreadyApplied without counting it again.
func (f *Frontier) Commit(ctx context.Context, runID int64, t *Task, p PageCommit) error {
	sc, err := f.Send(ctx, runID, t, p)
	if err != nil {
		return err
	}
	return sc.Wait(ctx)
}

// SentCommit is a page's commit batch written to the server, its results
// not read yet. The server runs the batch and commits it whether or not
// they are ever read (a client killed after Send still has its page
// committed), which is what lets the next request of the list leave before
// Wait. Until Wait, the connection stays with the batch.
type SentCommit struct {
	f      *Frontier
	task   Task // as it was at Send: the page count and cursor the advance expects
	next   string
	br     pgx.BatchResults
	labels []string
	done   bool
	err    error
}

// Send queues and writes p's commit batch (see Commit) and returns
// without reading its results. A failure to send returns at once, with
// nothing applied.
func (f *Frontier) Send(ctx context.Context, runID int64, t *Task, p PageCommit) (*SentCommit, error) {
	batch, labels, err := commitBatch(runID, t, p, f.ttl)
	if err != nil {
		return nil, err
	}
	sc := &SentCommit{f: f, task: *t, next: p.Next, labels: labels}
	sc.br = f.pool.SendBatch(ctx, batch)
	return sc, nil
}

// commitBatch is p's commit batch, with a label per statement for errors.
func commitBatch(runID int64, t *Task, p PageCommit, ttl time.Duration) (*pgx.Batch, []string, error) {
	rows, drops := p.Rows, p.Drops
	if rows == nil {
		rows = &sinks.Batch{}
	}
	var outcome kinds.Outcome
	if p.Stop != "" {
		outcome = p.Outcome.OrDone()
	}
	batch := &pgx.Batch{}
	advanceTask.Queue(batch, advanceParams{ID: t.ID, Token: t.Token, Pages: t.Pages, Cursor: p.Next, Items: p.Items,
		Stop: CleanReason(p.Stop), Outcome: string(outcome), TTL: ttl, Dropped: drops.N, DropReason: CleanReason(drops.Reason), Saved: p.Saved, NewItems: p.NewItems})
	labels := append([]string{fmt.Sprintf("advance task %d", t.ID)}, sinks.Queue(batch, runID, rows)...)
	if p.Archive != nil {
		queueArchive(batch, runID, t, p.Archive)
		labels = append(labels, "archive page")
	}
	tasks, err := taskRows(p.Children)
	if err != nil {
		return nil, nil, fmt.Errorf("add tasks: %w", err)
	}
	if tasks != nil {
		insertTasks.Queue(batch, addParams(runID, &t.ID), tasks)
		labels = append(labels, "add tasks")
	}
	return batch, labels, nil
}

// Wait reads the results of the batch, once: the error is the commit's
// (ErrLeaseLost, errAlreadyApplied, or the database's).
func (sc *SentCommit) Wait(ctx context.Context) error {
	if sc.done {
		return sc.err
	}
	sc.done = true
	err := sinks.Results(sc.br, sc.labels)
	if cerr := sc.br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == db.NotAdvancedCode {
		err = sc.f.notAdvanced(ctx, &sc.task, sc.next)
	}
	sc.err = err
	return err
}

// notAdvanced tells why advancing t matched no row: errAlreadyApplied when
// the row already shows this page (a retried commit whose first attempt went
// through), ErrLeaseLost otherwise.
func (f *Frontier) notAdvanced(ctx context.Context, t *Task, next string) error {
	var applied bool
	if err := taskAdvanced.QueryRow(ctx, f.pool, advancedParams{ID: t.ID, Token: t.Token, Pages: t.Pages, Cursor: next}).Scan(&applied); err != nil {
		return fmt.Errorf("advance task %d: %w", t.ID, err)
	}
	if applied {
		return errAlreadyApplied
	}
	return ErrLeaseLost
}

// errAlreadyApplied rolls back a retried commit whose first attempt had
// gone through; commit treats it as success.
var errAlreadyApplied = errors.New("page already committed")

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

// Active counts the run's pending and leased tasks.
func (f *Frontier) Active(ctx context.Context, runID int64) (pending, leased int64, err error) {
	err = countActiveTasks.QueryRow(ctx, f.pool, runArg{runID}).Scan(&pending, &leased)
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
	if err := releaseOwnedTasks.QueryRow(ctx, f.pool, ownerParams{RunID: runID, Owner: f.owner + "#"}).Scan(&n); err != nil {
		return 0, fmt.Errorf("release leases of %s: %w", f.owner, err)
	}
	return n, nil
}
