// Package retention removes the bookkeeping of old runs (crawler prune;
// docs/retention.md): a nightly job adds a run's tasks, samples and page
// archive every night, which no one reads once the run is old, while its
// data (entities, edges, snapshots) is what the harvest is for and stays.
//
// A prune marks the runs it takes (crawl.runs.pruned_at, under the job's
// advisory lock), then deletes their rows table by table in batches, each
// its own short transaction, and marks them finished
// (crawl.runs.prune_finished_at). It keeps every task that reuse
// (refresh_after, stop_at_seen) reads, so the next run decides exactly as
// it would have without the prune. It is incremental: a finished run is
// never read again; what it kept is examined again through the keys of the
// runs pruned later, the only runs whose tasks can supersede it.
package retention

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	// Runs are the runs whose rows the prune went over, ascending: those
	// it marked pruned (NewlyPruned of them), those an interrupted prune
	// left unfinished and, with Snapshots, those whose snapshot rows no
	// prune with Snapshots went over yet.
	Runs        []int64
	NewlyPruned int
	// Before counts the runs the rules select that earlier prunes
	// finished: not read again.
	Before int
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
	// batchParams are those of the Prune* statements of the bookkeeping
	// tables but crawl.tasks: the runs' rows, @lim at a time.
	batchParams struct {
		RunIDs []int64 `db:"run_ids"`
		Lim    *int64  `db:"lim"` // nil: every row (dry run)
		DryRun bool    `db:"dry_run"`
	}
	// snapshotParams are those of the --snapshots statements.
	snapshotParams struct {
		RunID   int64   `db:"run_id"`
		Work    []int64 `db:"work"`
		Earlier []int64 `db:"earlier"`
		Lim     *int64  `db:"lim"` // nil: every row (dry run)
		DryRun  bool    `db:"dry_run"`
	}
	tasksParams struct {
		RunID      int64    `db:"run_id"`
		ObsRun     []int64  `db:"obs_run"`
		ObsOf      []int64  `db:"obs_of"`
		Work       []int64  `db:"work"`
		Earlier    []int64  `db:"earlier"`
		FreshKinds []string `db:"fresh_kinds"`
		WalkKinds  []string `db:"walk_kinds"`
		AfterKind  string   `db:"after_kind"`
		AfterKey   string   `db:"after_key"`
		Lim        int64    `db:"lim"` // tasks of the run read per statement
		DryRun     bool     `db:"dry_run"`
	}
)

var (
	candidates = db.Prepare[candidatesParams]("PruneCandidates")
	markPruned = db.Prepare[runIDsParams]("MarkPruned")
	// lockJob is the lock `crawler run JOB` takes to choose or create the
	// job's run (pipeline.FindOrCreateRun): a prune marks runs while no
	// start of the job is deciding.
	lockJob           = db.Prepare[db.JobArg]("LockJob")
	session           = db.Prepare[struct{}]("PruneSession")
	pruneRuns         = db.Prepare[struct{}]("PruneRuns")
	markFinished      = db.Prepare[runIDsParams]("MarkPruneFinished")
	markSnapshotsDone = db.Prepare[runIDsParams]("MarkSnapshotsPruned")
	pruneTasks        = db.Prepare[tasksParams]("PruneTasks")
)

// table is a table the prune deletes from by run, but crawl.tasks.
type table[P any] struct {
	name string
	stmt db.Stmt[P]
}

// before are the tables before crawl.tasks, in deletion order;
// crawl.credit_usage and crawl.run_processes stay (a few rows a run: its
// cost per endpoint and the versions, pages and rows of its processes,
// which crawler runs shows).
var before = []table[batchParams]{
	{"crawl.pages", db.Prepare[batchParams]("PrunePages")},
	{"crawl.run_samples", db.Prepare[batchParams]("PruneSamples")},
	{"crawl.revisit_plan", db.Prepare[batchParams]("PruneRevisitPlan")},
	{"crawl.response_keys", db.Prepare[batchParams]("PruneResponseKeys")},
	{"crawl.rate_members", db.Prepare[batchParams]("PruneRateMembers")},
	{"crawl.rate_quota", db.Prepare[batchParams]("PruneRateQuota")},
}

// snapshots are the per-run data tables --snapshots prunes, after tasks.
var snapshots = []table[snapshotParams]{
	{"shortvideo.user_snapshots", db.Prepare[snapshotParams]("PruneUserSnapshots")},
	{"shortvideo.video_snapshots", db.Prepare[snapshotParams]("PruneVideoSnapshots")},
	{"shortvideo.hashtag_snapshots", db.Prepare[snapshotParams]("PruneHashtagSnapshots")},
	{"shortvideo.song_snapshots", db.Prepare[snapshotParams]("PruneSongSnapshots")},
	{"shortvideo.live_status", db.Prepare[snapshotParams]("PruneLiveStatus")},
	{"shortvideo.search_results", db.Prepare[snapshotParams]("PruneSearchResults")},
	{"shortvideo.feed_entries", db.Prepare[snapshotParams]("PruneFeedEntries")},
	{"shortvideo.popular_creators", db.Prepare[snapshotParams]("PrunePopularCreators")},
	{"photosocial.profile_snapshots", db.Prepare[snapshotParams]("PruneProfileSnapshots")},
	{"photosocial.reel_snapshots", db.Prepare[snapshotParams]("PruneReelSnapshots")},
	{"photosocial.reel_search_results", db.Prepare[snapshotParams]("PruneReelSearchResults")},
}

// querier is a pool (each statement its own transaction) or the dry run's
// transaction.
type querier interface {
	db.Querier
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Prune removes the bookkeeping of the runs opts lets go (see Options),
// or, with opts.DryRun, counts what it would remove and changes nothing.
// A second prune with the same options finds nothing to do and reads no
// row of the runs the first one pruned.
func Prune(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Result, error) {
	if opts.OlderThan <= 0 && opts.KeepRuns <= 0 {
		return nil, ErrNoRule
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if !opts.DryRun {
		// One connection, each statement its own transaction.
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer conn.Release()
		return prune(ctx, localConn{conn}, opts)
	}
	// The same statements with their deletes switched off, in one
	// repeatable-read transaction (one state of the database), rolled
	// back; the runs it would mark are taken as marked. It takes no job's
	// lock: a dry run never holds up the start of a run.
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return nil, fmt.Errorf("dry run: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := session.Exec(ctx, tx, struct{}{}); err != nil {
		return nil, err
	}
	return prune(ctx, tx, opts)
}

// localConn runs each statement of a real prune in its own transaction
// with the prune's settings (PruneSession) local to it. Set on the
// session, they would outlive the prune on a connection PgBouncer hands
// to other clients in transaction pooling, and a reset at the end could
// land on another server connection (issue 33.7). Query (the light reads
// of the runs) runs without them.
type localConn struct{ c *pgxpool.Conn }

func (l localConn) in(ctx context.Context, f func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, l.c, func(tx pgx.Tx) error {
		if _, err := session.Exec(ctx, tx, struct{}{}); err != nil {
			return err
		}
		return f(tx)
	})
}

func (l localConn) Exec(ctx context.Context, sql string, args ...any) (tag pgconn.CommandTag, err error) {
	err = l.in(ctx, func(tx pgx.Tx) error {
		tag, err = tx.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

func (l localConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return l.c.Query(ctx, sql, args...)
}

func (l localConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return localRow{l, ctx, sql, args}
}

// Begin starts a transaction with the prune's settings local to it.
func (l localConn) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := l.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := session.Exec(ctx, tx, struct{}{}); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, err
	}
	return tx, nil
}

// localRow is a QueryRow of localConn: it runs when scanned.
type localRow struct {
	l    localConn
	ctx  context.Context
	sql  string
	args []any
}

func (r localRow) Scan(dest ...any) error {
	return r.l.in(r.ctx, func(tx pgx.Tx) error { return tx.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...) })
}

// prune marks the runs to prune, then removes the rows of those not
// finished, table by table, and marks them finished.
func prune(ctx context.Context, q querier, opts Options) (*Result, error) {
	res := &Result{DryRun: opts.DryRun}
	selected, newly, err := mark(ctx, q, opts)
	if err != nil {
		return nil, err
	}
	res.NewlyPruned = len(newly)
	all, err := loadRuns(ctx, q)
	if err != nil {
		return nil, err
	}
	if opts.DryRun {
		all.markPruned(newly) // as the prune would
	}
	var work, snapWork []int64
	for _, id := range selected {
		r := all.info[id]
		if !r.pruned {
			continue // it started working again since: left alone
		}
		bookkeeping := !r.finished
		snaps := opts.Snapshots && !r.snapshots
		if bookkeeping {
			work = append(work, id)
		}
		if snaps {
			snapWork = append(snapWork, id)
		}
		if bookkeeping || snaps {
			res.Runs = append(res.Runs, id)
		} else {
			res.Before++
		}
	}
	if len(res.Runs) == 0 {
		return res, nil
	}
	if len(work) > 0 {
		for _, t := range before {
			tc, err := deleteByRuns(ctx, q, t, work, opts)
			if err != nil {
				return nil, err
			}
			res.Tables = append(res.Tables, tc)
		}
		tc, err := deleteTasks(ctx, q, all, work, opts)
		if err != nil {
			return nil, err
		}
		res.Tables = append(res.Tables, tc)
		if _, err := markFinished.Exec(ctx, q, runIDsParams{work}); err != nil {
			return nil, fmt.Errorf("mark runs finished: %w", err)
		}
	}
	if len(snapWork) > 0 {
		earlier := all.where(func(r runInfo) bool { return r.snapshots })
		for _, t := range snapshots {
			tc, err := deleteSnapshots(ctx, q, t, snapWork, earlier, opts)
			if err != nil {
				return nil, err
			}
			res.Tables = append(res.Tables, tc)
		}
		if _, err := markSnapshotsDone.Exec(ctx, q, runIDsParams{snapWork}); err != nil {
			return nil, fmt.Errorf("mark runs' snapshots pruned: %w", err)
		}
	}
	return res, nil
}

// candidate is a run PruneCandidates selects.
type candidate struct {
	id     int64
	job    string
	pruned bool
}

// listCandidates returns the runs PruneCandidates selects (of job, or all
// jobs when "").
func listCandidates(ctx context.Context, q db.Querier, opts Options, job string) ([]candidate, error) {
	rows, _ := candidates.Query(ctx, q, candidatesParams{OlderThanUS: opts.OlderThan.Microseconds(), KeepRuns: opts.KeepRuns, JobName: job})
	var (
		out []candidate
		c   candidate
	)
	_, err := pgx.ForEachRow(rows, []any{&c.id, &c.job, &c.pruned}, func() error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runs to prune: %w", err)
	}
	return out, nil
}

// mark marks the runs to prune, one job at a time under the job's lock,
// choosing them again under it, and returns every run the rules select
// (those pruned before included) and how many it marked. A run that
// started working again since is not marked. A dry run marks nothing: it
// returns the runs it would mark (as marked, for the counts).
func mark(ctx context.Context, q querier, opts Options) ([]int64, []int64, error) {
	found, err := listCandidates(ctx, q, opts, "")
	if err != nil {
		return nil, nil, err
	}
	var jobs []string
	var selected, marked []int64
	for _, c := range found {
		selected = append(selected, c.id)
		if !c.pruned && !slices.Contains(jobs, c.job) {
			jobs = append(jobs, c.job)
		}
		if !c.pruned && opts.DryRun {
			marked = append(marked, c.id)
		}
	}
	if opts.DryRun {
		return selected, marked, nil
	}
	for _, job := range jobs {
		err := pgx.BeginFunc(ctx, q, func(tx pgx.Tx) error {
			if _, err := lockJob.Exec(ctx, tx, db.JobArg{JobName: job}); err != nil {
				return fmt.Errorf("lock job %q: %w", job, err)
			}
			again, err := listCandidates(ctx, tx, opts, job)
			if err != nil {
				return err
			}
			var newly []int64
			for _, c := range again {
				if !c.pruned {
					newly = append(newly, c.id)
				}
			}
			rows, _ := markPruned.Query(ctx, tx, runIDsParams{newly})
			got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return fmt.Errorf("mark runs pruned: %w", err)
			}
			marked = append(marked, got...)
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("prune job %q: %w", job, err)
		}
	}
	return selected, marked, nil
}

// runInfo is what a prune knows of a run: marked pruned, its bookkeeping
// removed (finished), its snapshot rows removed.
type runInfo struct {
	id                          int64
	pruned, finished, snapshots bool
}

// runSet is every run, by id and in id order.
type runSet struct {
	ids  []runInfo
	info map[int64]runInfo
}

func loadRuns(ctx context.Context, q db.Querier) (*runSet, error) {
	rows, _ := pruneRuns.Query(ctx, q, struct{}{})
	s := &runSet{info: map[int64]runInfo{}}
	var r runInfo
	_, err := pgx.ForEachRow(rows, []any{&r.id, &r.pruned, &r.finished, &r.snapshots}, func() error {
		s.ids = append(s.ids, r)
		s.info[r.id] = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return s, nil
}

// markPruned marks runs pruned in s (not in the database).
func (s *runSet) markPruned(runs []int64) {
	for i, r := range s.ids {
		if slices.Contains(runs, r.id) {
			r.pruned = true
			s.ids[i], s.info[r.id] = r, r
		}
	}
}

// where lists the runs that match.
func (s *runSet) where(match func(runInfo) bool) []int64 {
	var out []int64
	for _, r := range s.ids {
		if match(r) {
			out = append(out, r.id)
		}
	}
	return out
}

// observers maps each pruned run to its observer: the first run after it
// that is not pruned, else the next run to come. Only runs from the
// observer on can read a pruned run's tasks through reuse and not see
// them as another pruned run's.
func (s *runSet) observers() (runs, of []int64) {
	next := int64(1)
	if n := len(s.ids); n > 0 {
		next = s.ids[n-1].id + 1
	}
	for i := len(s.ids) - 1; i >= 0; i-- {
		r := s.ids[i]
		if !r.pruned {
			next = r.id
			continue
		}
		runs, of = append(runs, r.id), append(of, next)
	}
	return runs, of
}

// deleteByRuns deletes t's rows of runs in batches (counts them in a dry
// run).
func deleteByRuns(ctx context.Context, q db.Querier, t table[batchParams], runs []int64, opts Options) (Table, error) {
	p := batchParams{RunIDs: runs, Lim: limit(opts), DryRun: opts.DryRun}
	return batches(t.name, opts, func() (int64, error) {
		var n int64
		err := t.stmt.QueryRow(ctx, q, p).Scan(&n)
		return n, err
	})
}

// deleteSnapshots deletes t's rows of runs, run by run, and the rows of
// the earlier runs of the same keys, that later rows supersede.
func deleteSnapshots(ctx context.Context, q db.Querier, t table[snapshotParams], runs, earlier []int64, opts Options) (Table, error) {
	tc := Table{Name: t.name}
	for _, run := range runs {
		p := snapshotParams{RunID: run, Work: runs, Earlier: earlier, Lim: limit(opts), DryRun: opts.DryRun}
		one, err := batches(t.name, opts, func() (int64, error) {
			var n int64
			err := t.stmt.QueryRow(ctx, q, p).Scan(&n)
			return n, err
		})
		tc.Rows, tc.Batches = tc.Rows+one.Rows, tc.Batches+one.Batches
		if err != nil {
			return tc, err
		}
	}
	return tc, nil
}

// limit is the rows one delete takes: opts.Batch, or all of them in a dry
// run (nothing is deleted, one statement counts them).
func limit(opts Options) *int64 {
	if opts.DryRun {
		return nil
	}
	n := int64(opts.Batch)
	return &n
}

// batches runs del, which deletes at most opts.Batch rows, until it
// deletes fewer; a dry run's del counts them all at once.
func batches(name string, opts Options, del func() (int64, error)) (Table, error) {
	tc := Table{Name: name}
	for {
		n, err := del()
		if err != nil {
			return tc, fmt.Errorf("prune %s: %w", name, err)
		}
		tc.Rows += n
		if opts.DryRun {
			return tc, nil
		}
		if n > 0 {
			tc.Batches++
		}
		if n < int64(opts.Batch) {
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
// run, each run's in key order a page at a time, and the tasks of the same
// keys that earlier prunes kept and that reuse no longer reads.
func deleteTasks(ctx context.Context, q db.Querier, all *runSet, runs []int64, opts Options) (Table, error) {
	tc := Table{Name: "crawl.tasks"}
	fresh, walks := reuseKinds()
	obsRun, obsOf := all.observers()
	earlier := all.where(func(r runInfo) bool { return r.finished })
	for _, run := range runs {
		p := tasksParams{RunID: run, ObsRun: obsRun, ObsOf: obsOf, Work: runs, Earlier: earlier,
			FreshKinds: fresh, WalkKinds: walks, Lim: int64(opts.Batch), DryRun: opts.DryRun}
		for {
			var n, read int64
			if err := pruneTasks.QueryRow(ctx, q, p).Scan(&n, &read, &p.AfterKind, &p.AfterKey); err != nil {
				return tc, fmt.Errorf("prune crawl.tasks of run %d: %w", run, err)
			}
			tc.Rows += n
			if n > 0 && !opts.DryRun {
				tc.Batches++
			}
			if read < int64(opts.Batch) {
				break
			}
		}
	}
	return tc, nil
}
