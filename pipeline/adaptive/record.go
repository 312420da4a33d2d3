package adaptive

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/loop"
	"github.com/socialcrawl/crawler/revisit"
)

// What a run saw of the items it revisits (a list's entries no earlier run
// stored, a profile's counters changed or not) is recorded in
// crawl.revisit_items as its visits end: each process queues the visits
// its workers end and records them every recordEvery, recordBatch at a
// time, off the workers' path. When a run ends (no process works on it any
// more), its end goes once through its visits not recorded yet (those of
// a process that died), marks the walks it left unfinished as cut and
// clears crawl.runs.revisit_pending. A run whose end did not get that far
// (killed, abandoned, out of time) keeps revisit_pending: the next
// schedule of its job records it first, and so does the end of the job's
// next run. Recording is idempotent (an item a run recorded is left as it
// is) and serialized per job, so runs recorded twice, or by two processes
// at once, record each visit once.

// recordEvery is how often a run records the visits its workers ended;
// recordBatch is the most visits recorded in one transaction.
const (
	recordEvery = 2 * time.Second
	recordBatch = 500
)

// visitLog queues the visits a process's workers end and records them.
type visitLog struct {
	pool  *pgxpool.Pool
	job   string
	runID int64
	log   *slog.Logger

	mu    sync.Mutex
	ended []int64 // task ids
	kick  chan struct{}
	stop  context.CancelFunc
	done  chan struct{}
}

func (l *visitLog) add(id int64) {
	l.mu.Lock()
	l.ended = append(l.ended, id)
	full := len(l.ended) >= recordBatch
	l.mu.Unlock()
	if full {
		loop.Kick(l.kick)
	}
}

// take takes up to recordBatch queued visits.
func (l *visitLog) take() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(len(l.ended), recordBatch)
	ids := l.ended[:n:n]
	l.ended = l.ended[n:]
	return ids
}

func (l *visitLog) loop(ctx context.Context) {
	defer close(l.done)
	loop.Every(ctx, recordEvery, l.kick, func() {
		for ids := l.take(); len(ids) > 0 && ctx.Err() == nil; ids = l.take() {
			// A visit not recorded now is recorded at the run's end.
			if err := l.record(ctx, ids); err != nil && ctx.Err() == nil {
				l.log.Warn("could not record what the run saw of the items it revisits; its end will", "err", err)
			}
		}
	})
}

func (l *visitLog) record(ctx context.Context, ids []int64) error {
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error { return recordVisits(ctx, tx, l.job, l.runID, ids) })
}

type (
	revisitEndedParams struct {
		JobName   string   `db:"job_name"`
		RunID     int64    `db:"run_id"`
		Kinds     []string `db:"kinds"`
		AfterKind string   `db:"after_kind"`
		AfterKey  string   `db:"after_key"`
		Batch     int      `db:"batch"`
	}
	revisitVisitsParams struct {
		RunID int64    `db:"run_id"`
		IDs   []int64  `db:"ids"`
		Kinds []string `db:"kinds"`
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
		Surprise    float32   `db:"surprise"`
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
	capturedParams struct {
		RunID      int64   `db:"run_id"`
		Items      int     `db:"items"`
		Events     float64 `db:"events"`
		Credits    int64   `db:"credits"`
		NewItems   int     `db:"new_items"`
		NewCredits int64   `db:"new_credits"`
	}
	runsToRecordParams struct {
		JobName string `db:"job_name"`
		Before  int64  `db:"before"`
	}
)

var (
	setRevisitPending   = db.Prepare[db.RunArg]("SetRevisitPending")
	revisitRunsToRecord = db.Prepare[runsToRecordParams]("RevisitRunsToRecord")
	revisitEnded        = db.Prepare[revisitEndedParams]("RevisitEnded")
	revisitVisits       = db.Prepare[revisitVisitsParams]("RevisitVisits")
	lockRevisitItems    = db.Prepare[db.JobArg]("LockRevisitItems")
	revisitKnown        = db.Prepare[itemsParams]("RevisitKnown")
	upsertRevisit       = db.Prepare[upsertRevisitParams]("UpsertRevisitItem")
	setListCounters     = db.Prepare[listCountersParams]("SetListCounters")
	addRunCaptured      = db.Prepare[capturedParams]("AddRunCaptured")
	markWalksCut        = db.Prepare[markCutParams]("MarkWalksCut")
	endRevisitRecord    = db.Prepare[db.RunArg]("EndRevisitRecord")
)

// inTx runs f in a transaction (a new one, or one under way).
type inTx func(ctx context.Context, f func(pgx.Tx) error) error

// recordUnfinished records, in tx, the runs of job before run before that
// no process finished recording and none works on (killed, abandoned).
func recordUnfinished(ctx context.Context, tx pgx.Tx, job string, before int64) error {
	rows, err := revisitRunsToRecord.Query(ctx, tx, runsToRecordParams{JobName: job, Before: before})
	if err != nil {
		return fmt.Errorf("runs to record: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("runs to record: %w", err)
	}
	within := func(ctx context.Context, f func(pgx.Tx) error) error { return f(tx) }
	for _, id := range ids {
		if err := recordRun(ctx, within, job, id); err != nil {
			return fmt.Errorf("record run %d: %w", id, err)
		}
	}
	return nil
}

// recordRun records what run runID of job saw that is not recorded yet,
// recordBatch visits a transaction, then marks the walks it left
// unfinished as cut and the run as recorded.
func recordRun(ctx context.Context, in inTx, job string, runID int64) error {
	p := revisitEndedParams{JobName: job, RunID: runID, Kinds: revisitKinds(), Batch: recordBatch}
	for {
		var ids []int64
		err := in(ctx, func(tx pgx.Tx) error {
			rows, err := revisitEnded.Query(ctx, tx, p)
			if err != nil {
				return err
			}
			var id int64
			if _, err := pgx.ForEachRow(rows, []any{&id, &p.AfterKind, &p.AfterKey}, func() error {
				ids = append(ids, id)
				return nil
			}); err != nil || len(ids) == 0 {
				return err
			}
			return recordVisits(ctx, tx, job, runID, ids)
		})
		if err != nil {
			return fmt.Errorf("record revisits: %w", err)
		}
		if len(ids) < recordBatch {
			break
		}
	}
	return in(ctx, func(tx pgx.Tx) error {
		if _, err := lockRevisitItems.Exec(ctx, tx, db.JobArg{JobName: job}); err != nil {
			return err
		}
		if _, err := markWalksCut.Exec(ctx, tx, markCutParams{JobName: job, RunID: runID, Kinds: revisitKinds()}); err != nil {
			return fmt.Errorf("mark cut walks: %w", err)
		}
		_, err := endRevisitRecord.Exec(ctx, tx, db.RunArg{RunID: runID})
		return err
	})
}

// recordVisits records in crawl.revisit_items, in tx, what run runID of job
// saw of the visits among tasks ids, with the items' new estimates, and
// adds what they captured to the run's totals. Items the run recorded
// already are left as they are.
func recordVisits(ctx context.Context, tx pgx.Tx, job string, runID int64, ids []int64) error {
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
	if _, err := lockRevisitItems.Exec(ctx, tx, db.JobArg{JobName: job}); err != nil {
		return err
	}
	rows, err := revisitVisits.Query(ctx, tx, revisitVisitsParams{RunID: runID, IDs: ids, Kinds: revisitKinds()})
	if err != nil {
		return fmt.Errorf("revisit visits: %w", err)
	}
	var visits []visit
	var v visit
	if _, err := pgx.ForEachRow(rows, []any{&v.kind, &v.key, &v.owner, &v.at, &v.pages, &v.items, &v.newItems, &v.capped, &v.complete,
		&v.changed, &v.counter, &v.counterRun, &v.followers, &v.following}, func() error {
		visits = append(visits, v)
		v = visit{} // the next row's pointers are its own
		return nil
	}); err != nil {
		return fmt.Errorf("revisit visits: %w", err)
	}
	if len(visits) == 0 {
		return nil
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
		rate      float64
	}
	byItem := map[[2]string]*known{}
	kp := itemsParams{JobName: job}
	for _, v := range visits {
		kp.Kinds, kp.Keys = append(kp.Kinds, v.kind), append(kp.Keys, v.key)
	}
	krows, err := revisitKnown.Query(ctx, tx, kp)
	if err != nil {
		return fmt.Errorf("revisit items: %w", err)
	}
	var kind, key string
	var k known
	if _, err := pgx.ForEachRow(krows, []any{&kind, &key, &k.visits, &k.lastRun, &k.lastAt, &k.intervals, &k.events, &k.censored, &k.pageSize, &k.fullPages, &k.edges, &k.rate}, func() error {
		kk := k
		byItem[[2]string{kind, key}] = &kk
		k = known{}
		return nil
	}); err != nil {
		return fmt.Errorf("revisit items: %w", err)
	}
	var (
		batch    pgx.Batch
		captured = capturedParams{RunID: runID}
		counters = listCountersParams{JobName: job, RunID: runID}
	)
	for _, v := range visits {
		kind, _ := revisitKind(v.kind)
		k := byItem[[2]string{v.kind, v.key}]
		if k != nil && k.lastRun >= runID {
			continue // recorded already
		}
		p := upsertRevisitParams{JobName: job, Kind: v.kind, Key: v.key, Owner: v.owner, Visits: 1, LastRun: runID,
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
				if kind == revisit.List && len(k.intervals) > 0 {
					// What the estimate (learnt from a visit at least,
					// not the prior alone) did not foresee, beyond chance.
					want := k.rate * days
					p.Surprise = float32(max(0, events-want-2*math.Sqrt(want)) / days)
				}
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
	addRunCaptured.Queue(&batch, captured)
	// Close reads every result and returns the first error.
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
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
