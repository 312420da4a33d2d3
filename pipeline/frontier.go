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

// Task is a leased unit of work: one object, or one list walked page by page.
type Task struct {
	ID       int64
	RunID    int64
	Kind     string
	Key      string
	Params   map[string]string
	Depth    int
	MaxPages int
	Cursor   string
	Pages    int
	Items    int   // items of the pages fetched so far (ranks continue from it)
	Token    int64 // fencing token of the lease
}

// NewTask is a task to add to the frontier; (run, kind, key) dedupes it.
type NewTask struct {
	Kind     string
	Key      string
	Params   map[string]string
	Depth    int
	MaxPages int
}

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

const createRunSQL = `INSERT INTO crawl.runs (job_name, job, max_credits) VALUES ($1, $2, $3) RETURNING id`

// CreateRun records a new run with its seed tasks in one transaction.
func CreateRun(ctx context.Context, pool *pgxpool.Pool, job *Job, seeds []NewTask) (int64, error) {
	spec, err := json.Marshal(job)
	if err != nil {
		return 0, err
	}
	var runID int64
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, createRunSQL, job.Name, spec, job.Limits.MaxCredits).Scan(&runID); err != nil {
			return err
		}
		return addTasks(ctx, tx, runID, nil, seeds)
	})
	if err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	return runID, nil
}

// addTasksSQL adds tasks once per run. A task found again at a smaller
// depth while still pending takes that depth, so what a run reaches does not
// depend on which worker found it first.
const addTasksSQL = `
INSERT INTO crawl.tasks AS x (run_id, parent_id, kind, key, params, depth, max_pages)
SELECT $1, $2, t.kind, t.key, t.params::jsonb, t.depth, t.max_pages
FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::int[]) AS t(kind, key, params, depth, max_pages)
ON CONFLICT (run_id, kind, key) DO UPDATE SET depth = EXCLUDED.depth
WHERE x.state = 'pending' AND EXCLUDED.depth < x.depth`

// addTasks inserts tasks inside tx.
func addTasks(ctx context.Context, tx pgx.Tx, runID int64, parent *int64, tasks []NewTask) error {
	args, err := addTasksArgs(runID, parent, tasks)
	if err != nil || args == nil {
		return err
	}
	_, err = tx.Exec(ctx, addTasksSQL, args...)
	return err
}

// addTasksArgs are the arguments of addTasksSQL for tasks, nil when there
// are none.
func addTasksArgs(runID int64, parent *int64, tasks []NewTask) ([]any, error) {
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
	n := len(tasks)
	kinds, keys, params := make([]string, n), make([]string, n), make([]string, n)
	depths, maxPages := make([]int32, n), make([]int32, n)
	for i, t := range tasks {
		p, err := json.Marshal(t.Params)
		if err != nil {
			return nil, err
		}
		if t.Params == nil {
			p = []byte("{}")
		}
		kinds[i], keys[i], params[i] = t.Kind, t.Key, string(p)
		depths[i], maxPages[i] = int32(t.Depth), int32(t.MaxPages)
	}
	return []any{runID, parent, kinds, keys, params, depths, maxPages}, nil
}

// leaseSQL takes the next pending task and stamps it with a fresh fencing
// token. Breadth first: lower depth first. It reads only the partial index
// of pending tasks, so its cost does not grow with the done ones; expired
// leases come back through rescueSQL.
const leaseSQL = `
WITH next AS (
    SELECT id FROM crawl.tasks
    WHERE run_id = $1 AND state = 'pending'
    ORDER BY depth, id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE crawl.tasks t
SET state = 'leased', lease_owner = $2, lease_token = nextval('crawl.lease_tokens'),
    lease_expires_at = now() + $3::interval, attempts = t.attempts + 1, updated_at = now()
FROM next WHERE t.id = next.id
RETURNING t.id, t.kind, t.key, t.params, t.depth, t.max_pages, t.cursor, t.pages, t.items, t.lease_token`

// rescueSQL returns tasks whose lease expired (their worker died or lost
// its database) to the pending state. The next lease bumps the fencing
// token, so the old worker can no longer commit.
const rescueSQL = `
WITH o AS (
    SELECT id, run_id, credits_held FROM crawl.tasks
    WHERE run_id = $1 AND state = 'leased' AND lease_expires_at < now() AND id <> ALL($2::bigint[])
    FOR UPDATE
), ended AS (
    UPDATE crawl.tasks t SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now(), credits_held = 0
    FROM o WHERE t.id = o.id
    RETURNING o.run_id, o.credits_held AS held
)` + giveBackSQL + `
SELECT count(*) FROM ended`

// Rescue returns the run's expired leases to the frontier, and the credits
// they still held to the budget, and says how many tasks it rescued; it
// skips the tasks in keep: those this process is still working on (their
// lease may have expired while the database was away).
func (f *Frontier) Rescue(ctx context.Context, runID int64, keep ...int64) (int64, error) {
	if keep == nil {
		keep = []int64{}
	}
	var n int64
	if err := f.pool.QueryRow(ctx, rescueSQL, runID, keep).Scan(&n); err != nil {
		return 0, fmt.Errorf("rescue expired leases: %w", err)
	}
	return n, nil
}

// Lease takes one task for this owner, or returns nil when none is ready.
// retry runs the statement again while the database is unreachable (nil:
// once). Each lease is tagged with a unique owner string, so a retry whose
// first attempt committed without its answer arriving finds that task
// instead of leaving it leased to nobody until its lease expires.
func (f *Frontier) Lease(ctx context.Context, runID int64, retry func(context.Context, func(context.Context) error) error) (*Task, error) {
	if retry == nil {
		retry = func(ctx context.Context, op func(context.Context) error) error { return op(ctx) }
	}
	tag := f.owner + "#" + strconv.FormatInt(f.leases.Add(1), 10)
	var t *Task
	attempt := 0
	err := retry(ctx, func(ctx context.Context) error {
		attempt++
		var err error
		if attempt > 1 {
			if t, err = f.scanTask(ctx, runID, heldSQL, runID, tag); t != nil || err != nil {
				return err
			}
		}
		t, err = f.scanTask(ctx, runID, leaseSQL, runID, tag, f.ttl)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lease task: %w", err)
	}
	return t, nil
}

const heldSQL = `
SELECT id, kind, key, params, depth, max_pages, cursor, pages, items, lease_token
FROM crawl.tasks WHERE run_id = $1 AND lease_owner = $2 AND state = 'leased'`

func (f *Frontier) scanTask(ctx context.Context, runID int64, sql string, args ...any) (*Task, error) {
	t := &Task{RunID: runID}
	var params []byte
	err := f.pool.QueryRow(ctx, sql, args...).Scan(
		&t.ID, &t.Kind, &t.Key, &params, &t.Depth, &t.MaxPages, &t.Cursor, &t.Pages, &t.Items, &t.Token)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(params, &t.Params); err != nil {
		return nil, fmt.Errorf("task %d params: %w", t.ID, err)
	}
	return t, nil
}

const advanceSQL = `
UPDATE crawl.tasks SET
    cursor = $3, pages = pages + 1, items = items + $4,
    dropped = dropped + $8, drop_reason = COALESCE(NULLIF($9::text, ''), drop_reason),
    state = CASE WHEN $5::text = '' THEN 'leased' ELSE 'done' END,
    reason = NULLIF($5::text, ''),
    lease_expires_at = CASE WHEN $5::text = '' THEN now() + $6::interval END,
    finished_at = CASE WHEN $5::text = '' THEN NULL ELSE now() END,
    updated_at = now()
WHERE id = $1 AND lease_token = $2 AND state = 'leased' AND pages = $7`

// advanceCheckedSQL is advanceSQL for a commit batch: it fails with
// SQLSTATE CR001 (notAdvancedCode) when it matched no row, which rolls back
// the batch's implicit transaction.
const advanceCheckedSQL = `
WITH a AS (` + advanceSQL + `
    RETURNING 1
)
SELECT crawl.expect_advanced((SELECT count(*) FROM a))`

// notAdvancedCode is the SQLSTATE crawl.expect_advanced raises.
const notAdvancedCode = "CR001"

const advancedSQL = `SELECT lease_token = $2 AND pages = $3 + 1 AND cursor = $4 FROM crawl.tasks WHERE id = $1`

// Drops are a page's entries that were received but not stored, and why
// the last one was (see crawl.tasks.dropped).
type Drops struct {
	N      int
	Reason string
}

// Commit records a fetched page: the task's advance (the cursor to
// continue from and, when stop is not empty, the end of the task with stop
// as its reason, and the entries the page dropped), the page's rows and the
// tasks it discovered. They go as
// one pgx batch, which runs in one implicit transaction: a single round trip
// (no BEGIN, no COMMIT), which the next request of the list waits for.
//
// The advance goes first, under the fencing token: for a stale worker it
// matches no row, crawl.expect_advanced aborts the batch and Commit returns
// ErrLeaseLost. The expected page count makes it idempotent: when a commit
// whose answer was lost is retried, the row already shows this page, and
// Commit returns errAlreadyApplied without counting it again.
func (f *Frontier) Commit(ctx context.Context, runID int64, t *Task, rows *sinks.Batch, children []NewTask, next string, items int, stop string, drops Drops) error {
	var batch pgx.Batch
	batch.Queue(advanceCheckedSQL, t.ID, t.Token, next, items, CleanReason(stop), f.ttl, t.Pages, drops.N, CleanReason(drops.Reason))
	labels := append([]string{fmt.Sprintf("advance task %d", t.ID)}, sinks.Queue(&batch, runID, rows)...)
	args, err := addTasksArgs(runID, &t.ID, children)
	if err != nil {
		return fmt.Errorf("add tasks: %w", err)
	}
	if args != nil {
		batch.Queue(addTasksSQL, args...)
		labels = append(labels, "add tasks")
	}
	br := f.pool.SendBatch(ctx, &batch)
	err = sinks.Results(br, labels)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == notAdvancedCode {
		return f.notAdvanced(ctx, t, next)
	}
	return err
}

// notAdvanced tells why advancing t matched no row: errAlreadyApplied when
// the row already shows this page (a retried commit whose first attempt went
// through), ErrLeaseLost otherwise.
func (f *Frontier) notAdvanced(ctx context.Context, t *Task, next string) error {
	var applied bool
	if err := f.pool.QueryRow(ctx, advancedSQL, t.ID, t.Token, t.Pages, next).Scan(&applied); err != nil {
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

const extendSQL = `
UPDATE crawl.tasks SET lease_expires_at = now() + $3::interval
WHERE id = $1 AND lease_token = $2 AND state = 'leased'`

// Extend renews the lease of a task being worked on (the heartbeat).
func (f *Frontier) Extend(ctx context.Context, t *Task) error {
	tag, err := f.pool.Exec(ctx, extendSQL, t.ID, t.Token, f.ttl)
	if err != nil {
		return fmt.Errorf("extend lease of task %d: %w", t.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrLeaseLost
	}
	return nil
}

// endLeaseSQL ends the lease of task $1 under token $2 with the assignments
// given, giving back the credits the lease still holds.
func endLeaseSQL(set string) string {
	return `
WITH o AS (
    SELECT id, run_id, credits_held FROM crawl.tasks
    WHERE id = $1 AND lease_token = $2 AND state = 'leased'
    FOR UPDATE
), ended AS (
    UPDATE crawl.tasks t SET ` + set + `, credits_held = 0
    FROM o WHERE t.id = o.id
    RETURNING o.run_id, o.credits_held AS held
)` + giveBackSQL + `
SELECT count(*) FROM ended`
}

var finishSQL = endLeaseSQL(`state = $3, reason = $4, lease_expires_at = NULL, finished_at = now(), updated_at = now()`)

// Finish ends a task as failed or skipped with a reason.
func (f *Frontier) Finish(ctx context.Context, t *Task, state, reason string) error {
	var n int64
	if err := f.pool.QueryRow(ctx, finishSQL, t.ID, t.Token, state, CleanReason(reason)).Scan(&n); err != nil {
		return fmt.Errorf("finish task %d: %w", t.ID, err)
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

var releaseSQL = endLeaseSQL(`state = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()`)

// Release hands a leased task back to the frontier unfinished (shutdown, or
// a stop of the run); its cursor keeps the progress made.
func (f *Frontier) Release(ctx context.Context, t *Task) error {
	var n int64
	if err := f.pool.QueryRow(ctx, releaseSQL, t.ID, t.Token).Scan(&n); err != nil {
		return fmt.Errorf("release task %d: %w", t.ID, err)
	}
	return nil
}

// activeSQL counts pending and leased tasks, each through its partial index.
const activeSQL = `
SELECT (SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'pending'),
       (SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'leased')`

// Active counts the run's pending and leased tasks.
func (f *Frontier) Active(ctx context.Context, runID int64) (pending, leased int64, err error) {
	err = f.pool.QueryRow(ctx, activeSQL, runID).Scan(&pending, &leased)
	if err != nil {
		err = fmt.Errorf("count active tasks: %w", err)
	}
	return pending, leased, err
}

const releaseOwnedSQL = `
WITH o AS (
    SELECT id, run_id, credits_held FROM crawl.tasks
    WHERE run_id = $1 AND state = 'leased' AND starts_with(lease_owner, $2)
    FOR UPDATE
), ended AS (
    UPDATE crawl.tasks t SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now(), credits_held = 0
    FROM o WHERE t.id = o.id
    RETURNING o.run_id, o.credits_held AS held
)` + giveBackSQL + `
SELECT count(*) FROM ended`

// ReleaseOwned hands back every task this process still holds in the run:
// the catch-all at the end of a run, for leases whose worker was stopped
// between statements.
func (f *Frontier) ReleaseOwned(ctx context.Context, runID int64) (int64, error) {
	var n int64
	if err := f.pool.QueryRow(ctx, releaseOwnedSQL, runID, f.owner+"#").Scan(&n); err != nil {
		return 0, fmt.Errorf("release leases of %s: %w", f.owner, err)
	}
	return n, nil
}

// finishRunSQL records how a run ended, unless that would misstate it:
// "done" needs an empty frontier; a stop or failure is recorded only when
// no other process holds a live lease on the run, and never replaces "done".
const finishRunSQL = `
UPDATE crawl.runs r SET state = $2, stop_reason = NULLIF($3, ''), finished_at = now()
WHERE r.id = $1 AND (
    ($2 = 'done' AND NOT EXISTS (
        SELECT 1 FROM crawl.tasks t WHERE t.run_id = $1 AND t.state IN ('pending', 'leased')))
 OR ($2 <> 'done' AND r.state <> 'done' AND NOT EXISTS (
        SELECT 1 FROM crawl.tasks t WHERE t.run_id = $1 AND t.state = 'leased'
          AND t.lease_expires_at > now() AND NOT starts_with(t.lease_owner, $4))))
RETURNING state`

// FinishRun records the end of this process's work on a run as state (done,
// stopped, failed) and returns the state the run is in afterwards:
// "running" when other processes still work on it.
func FinishRun(ctx context.Context, pool *pgxpool.Pool, runID int64, owner, state, reason string) (string, error) {
	var got string
	err := pool.QueryRow(ctx, finishRunSQL, runID, state, CleanReason(reason), owner+"#").Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		if err := pool.QueryRow(ctx, `SELECT state FROM crawl.runs WHERE id = $1`, runID).Scan(&got); err != nil {
			return "", fmt.Errorf("run %d state: %w", runID, err)
		}
		if got != "done" {
			got = "running"
		}
		return got, nil
	}
	if err != nil {
		return "", fmt.Errorf("set run %d state: %w", runID, err)
	}
	return got, nil
}

const resumeSQL = `
UPDATE crawl.runs SET state = 'running', stop_reason = NULL, finished_at = NULL
WHERE id = $1 AND job_name = $2`

// ErrNoRun means the run to resume does not exist.
var ErrNoRun = errors.New("no such run")

// Resume marks run runID running again so this process can work on it; a
// run can be resumed after a stop or joined while another process runs it.
// The job must be the one the run was started with.
func Resume(ctx context.Context, pool *pgxpool.Pool, runID int64, jobName string) error {
	tag, err := pool.Exec(ctx, resumeSQL, runID, jobName)
	if err != nil {
		return fmt.Errorf("resume run %d: %w", runID, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var name string
	err = pool.QueryRow(ctx, `SELECT job_name FROM crawl.runs WHERE id = $1`, runID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("resume run %d: %w", runID, ErrNoRun)
	}
	if err != nil {
		return fmt.Errorf("resume run %d: %w", runID, err)
	}
	return fmt.Errorf("resume run %d: it belongs to job %q, not %q", runID, name, jobName)
}

// CountFailed counts the failed tasks of a run.
func CountFailed(ctx context.Context, pool *pgxpool.Pool, runID int64) (int64, error) {
	var n int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state = 'failed'`, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count failed tasks of run %d: %w", runID, err)
	}
	return n, nil
}

// retryFailedSQL puts failed tasks back to pending. A list keeps its cursor
// and page count, so it resumes at the page that failed.
const retryFailedSQL = `
UPDATE crawl.tasks SET state = 'pending', reason = NULL, finished_at = NULL, updated_at = now()
WHERE run_id = $1 AND state = 'failed'`

// RetryFailed re-queues the failed tasks of a run (crawler run --resume ID
// --retry-failed) and says how many.
func RetryFailed(ctx context.Context, pool *pgxpool.Pool, runID int64) (int64, error) {
	tag, err := pool.Exec(ctx, retryFailedSQL, runID)
	if err != nil {
		return 0, fmt.Errorf("re-queue failed tasks of run %d: %w", runID, err)
	}
	return tag.RowsAffected(), nil
}
