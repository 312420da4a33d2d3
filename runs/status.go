package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
)

// Header is what names a run and its course: the head of crawler
// status and of the run report, in their text and JSON forms.
type Header struct {
	ID         int64      `json:"id"`
	Job        string     `json:"job"`
	State      string     `json:"state"`
	StopReason string     `json:"stop_reason,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Elapsed is how long the run took, or has been running.
func (h Header) Elapsed() time.Duration {
	if h.FinishedAt != nil {
		return h.FinishedAt.Sub(h.StartedAt)
	}
	return time.Since(h.StartedAt)
}

// Totals are a run's figures that crawler status and the run report both
// show, under the same JSON names.
type Totals struct {
	Seconds       float64 `json:"duration_seconds"`
	Pages         int64   `json:"pages"`
	Rows          int64   `json:"rows_written"`
	CreditsBilled int64   `json:"credits_billed"`
	MaxCredits    *int64  `json:"max_credits"`
	// CreditsRemaining is the account's balance as the upstream last
	// reported it (the lowest credits_remaining of the run), nil: never.
	CreditsRemaining *int64 `json:"credits_remaining,omitempty"`
}

// Status describes a run for people: its state and what its tasks did.
type Status struct {
	Header
	Tasks   map[string]int64 // by state
	Pages   int64
	Items   int64
	Reasons []ReasonCount // why tasks failed or were skipped
	Dropped int64         // list entries received but not stored
	Drops   []ReasonCount // by kind: N entries, Reason the latest one's
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

// The statements of the reports (internal/db/queries/status.sql).

// runStatusParams selects run RunID, or the latest run when it is nil.
type runStatusParams struct {
	RunID *int64 `db:"run_id"`
}

var runStatus = db.Prepare[runStatusParams]("RunStatus")

var taskStates = db.Prepare[db.RunArg]("TaskStates")

var failureReasons = db.Prepare[db.RunArg]("FailureReasons")

// LoadStatus reads run id, or the latest run when id is 0.
func LoadStatus(ctx context.Context, conn db.Querier, id int64) (*Status, error) {
	var arg *int64
	if id != 0 {
		arg = &id
	}
	s := &Status{Tasks: map[string]int64{}, Reasons: []ReasonCount{}, Drops: []ReasonCount{}} // lists print as [] in JSON, never null
	err := runStatus.QueryRow(ctx, conn, runStatusParams{arg}).Scan(&s.ID, &s.Job, &s.State, &s.StopReason, &s.StartedAt, &s.FinishedAt, &s.Pages, &s.Items)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNoRun
	}
	if err != nil {
		return nil, fmt.Errorf("run status: %w", err)
	}
	rows, _ := taskStates.Query(ctx, conn, db.RunArg{RunID: s.ID})
	var state string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { s.Tasks[state] = n; return nil }); err != nil {
		return nil, fmt.Errorf("run status: %w", err)
	}
	rows, _ = failureReasons.Query(ctx, conn, db.RunArg{RunID: s.ID})
	var rc ReasonCount
	if _, err := pgx.ForEachRow(rows, []any{&rc.State, &rc.Kind, &rc.Reason, &rc.N, &rc.Keys, &rc.Example}, func() error {
		s.Reasons = append(s.Reasons, rc)
		rc = ReasonCount{}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("run status: %w", err)
	}
	if err := loadDrops(ctx, conn, s); err != nil {
		return nil, err
	}
	return s, nil
}

var droppedEntries = db.Prepare[db.RunArg]("DroppedEntries")

// loadDrops fills s.Dropped and s.Drops: entries dropped, by kind.
func loadDrops(ctx context.Context, conn db.Querier, s *Status) error {
	rows, _ := droppedEntries.Query(ctx, conn, db.RunArg{RunID: s.ID})
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

// Process is one process that worked on a run (crawl.run_processes).
type Process struct {
	Owner       string     `json:"owner"`
	Version     string     `json:"crawler_version"`
	State       string     `json:"state,omitempty"` // "" while it works, or if it died
	StartedAt   time.Time  `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	Pages       int64      `json:"pages"`
	Rows        int64      `json:"rows_written"`
	Requests    int64      `json:"requests"`
	RateLimited int64      `json:"rate_limited"`
	// InFlight is its requests in flight on average over the interval
	// before its latest sample, ConcurrencyLimit its adaptive limit of
	// them then, ConcurrencyMove the limit's latest move and why ("latency
	// down"); nil before its first sample.
	InFlight         *float64 `json:"in_flight,omitempty"`
	ConcurrencyLimit *int64   `json:"concurrency_limit,omitempty"`
	ConcurrencyMove  *string  `json:"concurrency_move,omitempty"`
}

// Summary is one line of the list of runs (crawler runs).
type Summary struct {
	Header
	CreditsBilled int64 `json:"credits_billed"`
	// CreditsSaved are credits a run did not spend thanks to what earlier
	// runs fetched (refresh_after, stop_at_seen; see crawl.run_ledger).
	CreditsSaved int64    `json:"credits_saved"`
	Pages        int64    `json:"pages"`
	FailedTasks  int64    `json:"failed_tasks"`
	Versions     []string `json:"crawler_versions"`
	// PrunedAt is when crawler prune removed the run's bookkeeping (nil:
	// never): its pages and failed tasks stay as recorded, its status and
	// report show only what was kept (docs/retention.md).
	PrunedAt *time.Time `json:"pruned_at,omitempty"`
}

var (
	runProcesses = db.Prepare[db.RunArg]("RunProcesses")
	listRuns     = db.Prepare[listRunsParams]("ListRuns")
)

type listRunsParams struct {
	JobName string `db:"job_name"`
	MaxRuns int64  `db:"max_runs"`
}

// LoadProcesses lists the processes that worked on run runID.
func LoadProcesses(ctx context.Context, conn db.Querier, runID int64) ([]Process, error) {
	rows, _ := runProcesses.Query(ctx, conn, db.RunArg{RunID: runID})
	var p Process
	out := []Process{} // prints as [] in JSON, never null
	if _, err := pgx.ForEachRow(rows, []any{&p.Owner, &p.Version, &p.State, &p.StartedAt, &p.FinishedAt, &p.Pages, &p.Rows, &p.Requests, &p.RateLimited,
		&p.InFlight, &p.ConcurrencyLimit, &p.ConcurrencyMove}, func() error {
		out = append(out, p)
		p = Process{}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("processes of run %d: %w", runID, err)
	}
	return out, nil
}

// List lists the latest max runs, of job (all jobs when ""), newest
// first.
func List(ctx context.Context, conn db.Querier, job string, max int64) ([]Summary, error) {
	rows, _ := listRuns.Query(ctx, conn, listRunsParams{JobName: job, MaxRuns: max})
	var r Summary
	out := []Summary{}
	if _, err := pgx.ForEachRow(rows, []any{&r.ID, &r.Job, &r.State, &r.StopReason, &r.StartedAt, &r.FinishedAt, &r.CreditsBilled, &r.Pages, &r.FailedTasks, &r.Versions, &r.CreditsSaved, &r.PrunedAt}, func() error {
		out = append(out, r)
		r = Summary{}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
