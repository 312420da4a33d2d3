package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The simulation's own statements on a timeline's database go through a
// pool of its own (conns), opened on first use: a connection each time
// cost the server a backend's start and exit (~40 ms of its CPU here, a
// few hundred times a short profile, the polls of expireWhileRunning and
// resumeID most). The pool is closed before the database is copied
// (CREATE DATABASE ... TEMPLATE wants nobody connected) or dropped.

// conns is a timeline's pool.
type conns struct {
	url  string
	mu   sync.Mutex
	pool *pgxpool.Pool
}

func (c *conns) get() (*pgxpool.Pool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool == nil {
		pool, err := pgxpool.New(context.Background(), c.url)
		if err != nil {
			return nil, err
		}
		c.pool = pool
	}
	return c.pool, nil
}

// close closes the pool's connections; the next statement opens it again.
func (c *conns) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool != nil {
		c.pool.Close()
		c.pool = nil
	}
}

func (tl *timeline) withConn(ctx context.Context, f func(*pgx.Conn) error) error {
	pool, err := tl.conns.get()
	if err != nil {
		return fmt.Errorf("sim: connect to %s: %w", tl.db, err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("sim: connect to %s: %w", tl.db, err)
	}
	defer conn.Release()
	return f(conn.Conn())
}

// Querier is a connection or a pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// AgeDB makes everything stored a day older: every timestamptz column of
// the crawler's schemas, as the day between two nights would (the
// crawler measures ages, windows and leases by the database's clock; the
// sandbox's world moves by a day).
func AgeDB(ctx context.Context, conn Querier) error { return ageDBBy(ctx, conn, 24*time.Hour) }

// ageDBBy makes everything stored older by d.
func ageDBBy(ctx context.Context, conn Querier, d time.Duration) error {
	// The catalogs, not information_schema: the same columns (of type
	// timestamptz or a domain over it, of base tables) for ~3 ms of the
	// server's CPU instead of ~50-170 ms, once per night and policy.
	rows, err := conn.Query(ctx, `SELECT n.nspname::text, c.relname::text, array_agg(a.attname::text ORDER BY a.attname)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		  JOIN pg_type ty ON ty.oid = a.atttypid
		WHERE n.nspname IN ('crawl', 'shortvideo', 'photosocial') AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
		  AND CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE ty.oid END = 'timestamptz'::regtype
		GROUP BY 1, 2 ORDER BY 1, 2`)
	if err != nil {
		return err
	}
	type table struct {
		schema, name string
		cols         []string
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (table, error) {
		var t table
		err := r.Scan(&t.schema, &t.name, &t.cols)
		return t, err
	})
	if err != nil {
		return err
	}
	for _, t := range tables {
		set := make([]string, len(t.cols))
		for i, c := range t.cols {
			id := pgx.Identifier{c}.Sanitize()
			set[i] = id + " = " + id + " - $1::interval"
		}
		if _, err := conn.Exec(ctx, "UPDATE "+pgx.Identifier{t.schema, t.name}.Sanitize()+" SET "+strings.Join(set, ", "), d); err != nil {
			return fmt.Errorf("age %s.%s: %w", t.schema, t.name, err)
		}
	}
	return nil
}

// expireLeases ends the leases of a killed process (its lease owner tag
// is host:pid:...), as lease_timeout passing would, and ages its hold. One row at a time:
// the crawlers still running lock the same rows, and a statement holding
// one lock while it waits for no other cannot deadlock with them.
func expireLeases(ctx context.Context, conn *pgx.Conn, pid int) error {
	rows, err := conn.Query(ctx, `SELECT id FROM crawl.tasks WHERE state = 'leased' AND lease_owner LIKE '%:' || $1::text || ':%'`, fmt.Sprint(pid))
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, id := range ids {
		_, err := conn.Exec(ctx, `UPDATE crawl.tasks SET lease_expires_at = now() - interval '1 second'
			WHERE id = $1 AND state = 'leased' AND lease_owner LIKE '%:' || $2::text || ':%'`, id, fmt.Sprint(pid))
		if err != nil {
			return err
		}
	}
	// Its hold on the budget has not beaten since it died: the other
	// processes count it as spent once it is older than the hold's dead
	// age (seconds), as they would after that time.
	_, err = conn.Exec(ctx, `UPDATE crawl.credit_holds SET beat_at = now() - interval '1 hour'
		WHERE owner LIKE '%:' || $1::text || ':%' AND beat_at > now() - interval '1 hour'`, fmt.Sprint(pid))
	return err
}

// heldAfter is what processes still hold of the runs' budgets once every
// process has ended: the holds of those killed (a dead process's hold
// stays spent, docs/budget.md).
func heldAfter(ctx context.Context, conn *pgx.Conn, runIDs []int64) (int64, error) {
	var held int64
	err := conn.QueryRow(ctx, `SELECT coalesce(sum(held), 0)::bigint FROM crawl.credit_holds WHERE run_id = ANY($1)`, runIDs).Scan(&held)
	return held, err
}

// runRow is a run of the job as the checkers read it.
type runRow struct {
	id     int64
	state  string
	reason string
	spent  bool // stopped by its credit budget (crawl.runs.budget_stop)
}

// runsAfter are the job's runs with an id above after.
func runsAfter(ctx context.Context, conn *pgx.Conn, after int64) ([]runRow, error) {
	rows, err := conn.Query(ctx, `SELECT id, state, coalesce(stop_reason, ''), budget_stop IS NOT NULL FROM crawl.runs
		WHERE job_name = $1 AND id > $2 ORDER BY id`, jobName, after)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (runRow, error) {
		var x runRow
		err := r.Scan(&x.id, &x.state, &x.reason, &x.spent)
		return x, err
	})
}

// taskRow is a task of a night's run.
type taskRow struct {
	kind, key, handle string // handle: params->>'handle' (a follow list's account)
	depth             int
	state, reason     string
	outcome           string // crawl.tasks.outcome: how it ended, "" while it has not
	// costHigh is what the run's adaptive schedule took the visit to cost
	// at most (crawl.revisit_plan.cost_high), -1 when it has no row there.
	costHigh float64
}

func tasksOf(ctx context.Context, conn *pgx.Conn, runIDs []int64) ([]taskRow, error) {
	rows, err := conn.Query(ctx, `SELECT t.kind, t.key, coalesce(t.params->>'handle', ''), t.depth, t.state, coalesce(t.reason, ''),
		  coalesce(t.outcome::text, ''), coalesce(p.cost_high, -1)::float8
		FROM crawl.tasks t
		LEFT JOIN crawl.revisit_plan p ON p.run_id = t.run_id AND p.kind = t.kind AND p.key = t.key
		WHERE t.run_id = ANY($1) ORDER BY t.kind, t.key`, runIDs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (taskRow, error) {
		var t taskRow
		err := r.Scan(&t.kind, &t.key, &t.handle, &t.depth, &t.state, &t.reason, &t.outcome, &t.costHigh)
		return t, err
	})
}

// planOf is the adaptive schedule of the runs: kind, key, whether to
// visit, a full walk, and why.
func planOf(ctx context.Context, conn *pgx.Conn, runIDs []int64) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT format('%s %s visit=%s full_walk=%s %s', kind, key, visit, full_walk, reason)
		FROM crawl.revisit_plan WHERE run_id = ANY($1) ORDER BY 1`, runIDs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// walk is a complete walk of a list (it reached the list's end), and
// what its run stored of the list: a follow list's edges, a post's
// top-level comments (counted: comments have no id to compare).
type walk struct {
	handle, list string // the account and followers or following; the post's URL and "comments"
	pages        int
	stored       []string
	comments     int64
}

func completeWalks(ctx context.Context, conn *pgx.Conn, runIDs []int64) ([]walk, error) {
	rows, err := conn.Query(ctx, `SELECT w.unique_id, w.list, w.pages,
		  CASE w.list WHEN 'followers'
		    THEN ARRAY(SELECT f.follower FROM shortvideo.follows f WHERE f.followee = w.unique_id AND f.last_seen_run = w.run_id)
		    ELSE ARRAY(SELECT f.followee FROM shortvideo.follows f WHERE f.follower = w.unique_id AND f.last_seen_run = w.run_id) END
		FROM shortvideo.follow_walks w WHERE w.run_id = ANY($1) AND w.complete ORDER BY 1, 2`, runIDs)
	if err != nil {
		return nil, err
	}
	walks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (walk, error) {
		var w walk
		err := row.Scan(&w.handle, &w.list, &w.pages, &w.stored)
		return w, err
	})
	if err != nil {
		return nil, err
	}
	rows, err = conn.Query(ctx, `SELECT t.key, 'comments', t.pages,
		  (SELECT count(*) FROM photosocial.comments c WHERE c.post_url = t.key AND c.last_seen_run = t.run_id AND c.parent_comment_id IS NULL)
		FROM crawl.tasks t WHERE t.run_id = ANY($1) AND t.kind = 'photosocial.comments' AND t.state = 'done'
		  AND t.outcome = 'done_end' ORDER BY 1`, runIDs)
	if err != nil {
		return nil, err
	}
	comments, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (walk, error) {
		var w walk
		err := row.Scan(&w.handle, &w.list, &w.pages, &w.comments)
		return w, err
	})
	return append(walks, comments...), err
}
