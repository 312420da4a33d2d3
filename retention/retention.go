// Package retention removes the bookkeeping of old runs (crawler prune;
// docs/retention.md): a nightly job adds a run's tasks, samples and page
// archive every night, which no one reads once the run is old, while its
// data (entities, edges, snapshots) is what the harvest is for and stays.
//
// A prune marks the runs it takes (crawl.runs.pruned_at, under the job's
// advisory lock), then deletes their rows table by table in batches, each
// its own short transaction. It keeps every task that reuse
// (refresh_after, stop_at_seen) reads, so the next run decides exactly as
// it would have without the prune.
package retention

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/kinds"
)

// DefaultBatch is how many rows one delete removes at most: small enough
// that each transaction takes well under a second and holds few locks.
const DefaultBatch = 5000

// ErrNoRule means neither OlderThan nor KeepRuns was given: a prune needs
// at least one rule saying which runs may go.
var ErrNoRule = errors.New("say which runs may go: an age (older than) or a number of runs to keep per job, or both")

// Options say which runs a prune takes and how.
type Options struct {
	// OlderThan: only runs that ended longer ago than this (0: no age
	// rule).
	OlderThan time.Duration
	// KeepRuns: never the KeepRuns latest runs of each job (0: no such
	// rule). With both rules, a run goes only when both let it go.
	KeepRuns int
	// Snapshots: also the runs' per-run data rows (snapshots, rankings,
	// live status), but each entity's or search's latest.
	Snapshots bool
	// DryRun: count what would go, change nothing.
	DryRun bool
	// Batch: rows per delete (0: DefaultBatch).
	Batch int
}

// Result is what a prune removed, or would remove in a dry run.
type Result struct {
	DryRun bool
	// Runs are the runs whose bookkeeping is gone (or would go), ascending;
	// NewlyPruned of them were not pruned before.
	Runs        []int64
	NewlyPruned int
	// Tables lists every table a prune deletes from, in the order it does.
	Tables []Table
}

// Table is what a prune removed from one table.
type Table struct {
	Name    string
	Rows    int64
	Batches int // deletes that removed rows (0 in a dry run)
}

// Rows is the total of the tables' rows.
func (r *Result) Rows() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Rows
	}
	return n
}

type (
	candidatesParams struct {
		OlderThanUS int64  `db:"older_than_us"`
		KeepRuns    int    `db:"keep_runs"`
		JobName     string `db:"job_name"`
	}
	runIDsParams struct {
		RunIDs []int64 `db:"run_ids"`
	}
	jobNameParams struct {
		JobName string `db:"job_name"`
	}
	observerParams struct {
		RunID  int64   `db:"run_id"`
		RunIDs []int64 `db:"run_ids"`
	}
	// batchParams are those of the Prune* statements of whole tables.
	batchParams struct {
		RunIDs []int64 `db:"run_ids"`
		Lim    *int64  `db:"lim"` // nil: every row (dry run)
		DryRun bool    `db:"dry_run"`
	}
	tasksParams struct {
		RunID      int64    `db:"run_id"`
		Observer   int64    `db:"observer"`
		FreshKinds []string `db:"fresh_kinds"`
		WalkKinds  []string `db:"walk_kinds"`
		AfterKind  string   `db:"after_kind"`
		AfterKey   string   `db:"after_key"`
		Lim        *int64   `db:"lim"`
		DryRun     bool     `db:"dry_run"`
	}
)

var (
	candidates = db.Prepare[candidatesParams]("PruneCandidates")
	markPruned = db.Prepare[runIDsParams]("MarkPruned")
	// lockJob is the lock `crawler run JOB` takes to choose or create the
	// job's run (pipeline.FindOrCreateRun): a prune marks runs while no
	// start of the job is deciding.
	lockJob    = db.Prepare[jobNameParams]("LockJob")
	observer   = db.Prepare[observerParams]("PruneObserver")
	pruneTasks = db.Prepare[tasksParams]("PruneTasks")
)

// table is a table the prune deletes from by run, but crawl.tasks.
type table struct {
	name string
	stmt db.Stmt[batchParams]
}

// tables before crawl.tasks, in deletion order; crawl.credit_usage and
// crawl.run_processes stay (a few rows a run: its cost per endpoint and the
// versions, pages and rows of its processes, which crawler runs shows).
var before = []table{
	{"crawl.pages", db.Prepare[batchParams]("PrunePages")},
	{"crawl.run_samples", db.Prepare[batchParams]("PruneSamples")},
	{"crawl.revisit_plan", db.Prepare[batchParams]("PruneRevisitPlan")},
	{"crawl.response_keys", db.Prepare[batchParams]("PruneResponseKeys")},
	{"crawl.rate_members", db.Prepare[batchParams]("PruneRateMembers")},
	{"crawl.rate_quota", db.Prepare[batchParams]("PruneRateQuota")},
}

// snapshots are the per-run data tables --snapshots prunes, after tasks.
var snapshots = []table{
	{"shortvideo.user_snapshots", db.Prepare[batchParams]("PruneUserSnapshots")},
	{"shortvideo.video_snapshots", db.Prepare[batchParams]("PruneVideoSnapshots")},
	{"shortvideo.hashtag_snapshots", db.Prepare[batchParams]("PruneHashtagSnapshots")},
	{"shortvideo.song_snapshots", db.Prepare[batchParams]("PruneSongSnapshots")},
	{"shortvideo.live_status", db.Prepare[batchParams]("PruneLiveStatus")},
	{"shortvideo.search_results", db.Prepare[batchParams]("PruneSearchResults")},
	{"shortvideo.feed_entries", db.Prepare[batchParams]("PruneFeedEntries")},
	{"shortvideo.popular_creators", db.Prepare[batchParams]("PrunePopularCreators")},
	{"photosocial.profile_snapshots", db.Prepare[batchParams]("PruneProfileSnapshots")},
	{"photosocial.reel_snapshots", db.Prepare[batchParams]("PruneReelSnapshots")},
	{"photosocial.reel_search_results", db.Prepare[batchParams]("PruneReelSearchResults")},
}

// Prune removes the bookkeeping of the runs opts lets go (see Options),
// or, with opts.DryRun, counts what it would remove and changes nothing.
// It is idempotent: a second prune with the same options removes nothing.
func Prune(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Result, error) {
	if opts.OlderThan <= 0 && opts.KeepRuns <= 0 {
		return nil, ErrNoRule
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.DryRun {
		// One snapshot, so the counts are of one state of the database;
		// rolled back, so nothing a statement could write stays (the
		// deletes are gated off by dry_run, yet a statement holding a
		// DELETE may not run in a read-only transaction).
		tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		if err != nil {
			return nil, fmt.Errorf("dry run: %w", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		var newly []int64
		runs, err := listCandidates(ctx, tx, opts, "", &newly)
		if err != nil {
			return nil, err
		}
		res, err := remove(ctx, tx, runs, opts)
		if err != nil {
			return nil, err
		}
		res.NewlyPruned = len(newly)
		return res, nil
	}
	runs, newly, err := mark(ctx, pool, opts)
	if err != nil {
		return nil, err
	}
	res, err := remove(ctx, pool, runs, opts)
	if res != nil {
		res.NewlyPruned = newly
	}
	return res, err
}

// remove deletes (counts, in a dry run) the rows of runs, table by table.
func remove(ctx context.Context, q db.Querier, runs []int64, opts Options) (*Result, error) {
	res := &Result{DryRun: opts.DryRun, Runs: runs}
	if len(runs) == 0 {
		return res, nil
	}
	for _, t := range before {
		tc, err := deleteTable(ctx, q, t, res.Runs, opts)
		if err != nil {
			return nil, err
		}
		res.Tables = append(res.Tables, tc)
	}
	tc, err := deleteTasks(ctx, q, res.Runs, opts)
	if err != nil {
		return nil, err
	}
	res.Tables = append(res.Tables, tc)
	if opts.Snapshots {
		for _, t := range snapshots {
			tc, err := deleteTable(ctx, q, t, res.Runs, opts)
			if err != nil {
				return nil, err
			}
			res.Tables = append(res.Tables, tc)
		}
	}
	return res, nil
}

// listCandidates returns the runs PruneCandidates selects (of job, or all
// jobs when ""); newly, when not nil, gets those not pruned before.
func listCandidates(ctx context.Context, q db.Querier, opts Options, job string, newly *[]int64) ([]int64, error) {
	rows, _ := candidates.Query(ctx, q, candidatesParams{OlderThanUS: opts.OlderThan.Microseconds(), KeepRuns: opts.KeepRuns, JobName: job})
	var (
		ids    []int64
		id     int64
		name   string
		pruned bool
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &name, &pruned}, func() error {
		ids = append(ids, id)
		if newly != nil && !pruned {
			*newly = append(*newly, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runs to prune: %w", err)
	}
	return ids, nil
}

// jobsOf lists the jobs that have runs to prune.
func jobsOf(ctx context.Context, pool *pgxpool.Pool, opts Options) ([]string, error) {
	rows, _ := candidates.Query(ctx, pool, candidatesParams{OlderThanUS: opts.OlderThan.Microseconds(), KeepRuns: opts.KeepRuns})
	var (
		jobs   []string
		seen   = map[string]bool{}
		id     int64
		name   string
		pruned bool
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &name, &pruned}, func() error {
		if !seen[name] {
			seen[name] = true
			jobs = append(jobs, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runs to prune: %w", err)
	}
	return jobs, nil
}

// mark marks the runs to prune, one job at a time under the job's lock,
// choosing them again under it, and returns every run to prune (those
// pruned before included: a prune finishes what an interrupted one began)
// and how many it marked.
func mark(ctx context.Context, pool *pgxpool.Pool, opts Options) ([]int64, int, error) {
	jobs, err := jobsOf(ctx, pool, opts)
	if err != nil {
		return nil, 0, err
	}
	var all []int64
	marked := 0
	for _, job := range jobs {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := lockJob.Exec(ctx, tx, jobNameParams{job}); err != nil {
				return fmt.Errorf("lock job %q: %w", job, err)
			}
			var newly []int64
			ids, err := listCandidates(ctx, tx, opts, job, &newly)
			if err != nil {
				return err
			}
			rows, _ := markPruned.Query(ctx, tx, runIDsParams{newly})
			got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return fmt.Errorf("mark runs pruned: %w", err)
			}
			// A run that started working again since is left out.
			ok := map[int64]bool{}
			for _, id := range got {
				ok[id] = true
			}
			for _, id := range ids {
				if ok[id] || !slices.Contains(newly, id) {
					all = append(all, id)
				}
			}
			marked += len(got)
			return nil
		})
		if err != nil {
			return nil, 0, fmt.Errorf("prune job %q: %w", job, err)
		}
	}
	slices.Sort(all)
	return all, marked, nil
}

// deleteTable deletes t's rows of runs in batches (counts them in a dry
// run).
func deleteTable(ctx context.Context, q db.Querier, t table, runs []int64, opts Options) (Table, error) {
	tc := Table{Name: t.name}
	p := batchParams{RunIDs: runs, DryRun: opts.DryRun}
	if !opts.DryRun {
		lim := int64(opts.Batch)
		p.Lim = &lim
	}
	for {
		var n int64
		if err := t.stmt.QueryRow(ctx, q, p).Scan(&n); err != nil {
			return tc, fmt.Errorf("prune %s: %w", t.name, err)
		}
		tc.Rows += n
		if n > 0 && !opts.DryRun {
			tc.Batches++
		}
		if opts.DryRun || n < int64(opts.Batch) {
			return tc, nil
		}
	}
}

// reuseKinds are the kinds whose done tasks reuse reads: those with a
// refresh_after rule (pipeline freshOf: LastFetch) and the stop_at_seen
// lists (pipeline listWalk: LastFullWalk).
func reuseKinds() (fresh, walks []string) {
	for _, k := range kinds.All() {
		if k.Fresh != nil {
			fresh = append(fresh, k.Name)
		}
		if k.Seen != nil && k.Pages != "" {
			walks = append(walks, k.Name)
		}
	}
	return fresh, walks
}

// deleteTasks deletes the tasks of runs that reuse does not read, run by
// run, each run's in key order a batch at a time.
func deleteTasks(ctx context.Context, q db.Querier, runs []int64, opts Options) (Table, error) {
	tc := Table{Name: "crawl.tasks"}
	fresh, walks := reuseKinds()
	for _, run := range runs {
		var obs int64
		if err := observer.QueryRow(ctx, q, observerParams{RunID: run, RunIDs: runs}).Scan(&obs); err != nil {
			return tc, fmt.Errorf("prune crawl.tasks of run %d: %w", run, err)
		}
		p := tasksParams{RunID: run, Observer: obs, FreshKinds: fresh, WalkKinds: walks, DryRun: opts.DryRun}
		if !opts.DryRun {
			lim := int64(opts.Batch)
			p.Lim = &lim
		}
		for {
			var n int64
			if err := pruneTasks.QueryRow(ctx, q, p).Scan(&n, &p.AfterKind, &p.AfterKey); err != nil {
				return tc, fmt.Errorf("prune crawl.tasks of run %d: %w", run, err)
			}
			tc.Rows += n
			if n > 0 && !opts.DryRun {
				tc.Batches++
			}
			if opts.DryRun || n < int64(opts.Batch) {
				break
			}
		}
	}
	return tc, nil
}
