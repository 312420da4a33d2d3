package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RunStatus describes a run for people: its state and what its tasks did.
type RunStatus struct {
	ID         int64
	Job        string
	State      string
	StopReason string
	StartedAt  time.Time
	FinishedAt *time.Time
	Tasks      map[string]int64 // by state
	Pages      int64
	Items      int64
	Reasons    []ReasonCount // why tasks failed or were skipped
	Dropped    int64         // list entries received but not stored
	Drops      []ReasonCount // by kind: N entries, Reason the latest one's
}

// ReasonCount is how many tasks of a kind ended with one kind of reason
// (its first two colon-separated parts, e.g. the endpoint and the error
// class), with a few of their keys and one full reason as examples.
type ReasonCount struct {
	State, Kind, Reason string
	N                   int64
	Keys                []string // up to 3 example task keys
	Example             string   // the full reason of the first of them
}

const runStatusSQL = `
SELECT r.id, r.job_name, r.state, coalesce(r.stop_reason, ''), r.started_at, r.finished_at,
       coalesce(sum(t.pages), 0), coalesce(sum(t.items), 0)
FROM crawl.runs r LEFT JOIN crawl.tasks t ON t.run_id = r.id
WHERE r.id = COALESCE($1, (SELECT max(id) FROM crawl.runs))
GROUP BY r.id`

const taskStatesSQL = `SELECT state, count(*) FROM crawl.tasks WHERE run_id = $1 GROUP BY state`

const reasonsSQL = `
SELECT state, kind, reason_class, count(*),
       (array_agg(key ORDER BY id))[1:3], (array_agg(coalesce(reason, '') ORDER BY id))[1]
FROM (SELECT state, kind, key, id, reason,
             split_part(coalesce(reason, ''), ':', 1) ||
             CASE WHEN strpos(coalesce(reason, ''), ':') > 0 THEN ':' || split_part(reason, ':', 2) ELSE '' END AS reason_class
      FROM crawl.tasks WHERE run_id = $1 AND state IN ('failed', 'skipped')) t
GROUP BY 1, 2, 3 ORDER BY state, 4 DESC, 3 LIMIT 20`

// LoadRunStatus reads run id, or the latest run when id is 0.
func LoadRunStatus(ctx context.Context, pool *pgxpool.Pool, id int64) (*RunStatus, error) {
	var arg *int64
	if id != 0 {
		arg = &id
	}
	s := &RunStatus{Tasks: map[string]int64{}}
	err := pool.QueryRow(ctx, runStatusSQL, arg).Scan(&s.ID, &s.Job, &s.State, &s.StopReason, &s.StartedAt, &s.FinishedAt, &s.Pages, &s.Items)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNoRun
	}
	if err != nil {
		return nil, fmt.Errorf("run status: %w", err)
	}
	rows, _ := pool.Query(ctx, taskStatesSQL, s.ID)
	var state string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { s.Tasks[state] = n; return nil }); err != nil {
		return nil, fmt.Errorf("run status: %w", err)
	}
	rows, _ = pool.Query(ctx, reasonsSQL, s.ID)
	var rc ReasonCount
	if _, err := pgx.ForEachRow(rows, []any{&rc.State, &rc.Kind, &rc.Reason, &rc.N, &rc.Keys, &rc.Example}, func() error {
		s.Reasons = append(s.Reasons, rc)
		rc = ReasonCount{}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("run status: %w", err)
	}
	if err := loadDrops(ctx, pool, s); err != nil {
		return nil, err
	}
	return s, nil
}

const dropsSQL = `
SELECT kind, sum(dropped)::bigint,
       coalesce((array_agg(drop_reason ORDER BY updated_at DESC, id DESC) FILTER (WHERE drop_reason IS NOT NULL))[1], '')
FROM crawl.tasks WHERE run_id = $1 AND dropped > 0
GROUP BY kind ORDER BY 2 DESC, 1`

// loadDrops fills s.Dropped and s.Drops: entries dropped, by kind.
func loadDrops(ctx context.Context, pool *pgxpool.Pool, s *RunStatus) error {
	rows, _ := pool.Query(ctx, dropsSQL, s.ID)
	rc := ReasonCount{State: "dropped"}
	if _, err := pgx.ForEachRow(rows, []any{&rc.Kind, &rc.N, &rc.Reason}, func() error {
		s.Drops = append(s.Drops, rc)
		s.Dropped += rc.N
		return nil
	}); err != nil {
		return fmt.Errorf("run status: %w", err)
	}
	return nil
}

// TableCount is the row count of one data table.
type TableCount struct {
	Table string
	Rows  int64
}

// TableCounts counts the rows of every table in the platform schemas.
func TableCounts(ctx context.Context, pool *pgxpool.Pool) ([]TableCount, error) {
	rows, err := pool.Query(ctx, `
		SELECT table_schema || '.' || table_name FROM information_schema.tables
		WHERE table_schema IN ('shortvideo', 'photosocial') AND table_type = 'BASE TABLE'
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	out := make([]TableCount, 0, len(names))
	for _, name := range names {
		var n int64
		// name comes from information_schema, quoted via the identifier rules.
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier(splitTable(name)).Sanitize()).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", name, err)
		}
		out = append(out, TableCount{Table: name, Rows: n})
	}
	return out, nil
}

func splitTable(name string) []string {
	for i := range name {
		if name[i] == '.' {
			return []string{name[:i], name[i+1:]}
		}
	}
	return []string{name}
}
