package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/sinks"
)

// Replay rebuilds a run's normalized rows from its page archive
// (crawl.pages) with no request upstream and no transport: each archived
// page is decoded as the kind's call decodes an answer, when the call the
// kind makes for the page's task is the one archived (same endpoint and
// query), and mapped by the kind's own mapping; its rows are written as the
// run's, in batches of pages. Child tasks are
// not added: the run's frontier is history. Upserts are idempotent, so a
// replay over rows that are still there rewrites the same content.

// ReplaySummary is what a replay did.
type ReplaySummary struct {
	RunID   int64
	Pages   int64 // archived pages mapped and written
	Rows    int64 // rows written
	Failed  int64 // pages whose mapping failed now (reasons logged)
	Elapsed time.Duration
	// Requests counts the calls the kinds made, every one answered from
	// the archive: none left the process.
	Requests int64
	// Harvest is what the run's processes wrote and how long the run took
	// (from its start to its end), for comparison.
	HarvestRows    int64
	HarvestSeconds float64
}

// RowsPerSecond is the replay's write rate.
func (s *ReplaySummary) RowsPerSecond() float64 { return perSecond(s.Rows, s.Elapsed.Seconds()) }

// HarvestRowsPerSecond is the original harvest's.
func (s *ReplaySummary) HarvestRowsPerSecond() float64 {
	return perSecond(s.HarvestRows, s.HarvestSeconds)
}

func perSecond(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// ErrNoArchive means the run kept no pages (its job did not set archive).
var ErrNoArchive = errors.New("the run has no archived pages (its job did not set archive: true)")

// Replay chunking: pages read per query, pages written per batch.
const (
	replayReadChunk  = 500
	replayBatchPages = 100
	replayWriters    = 1
)

// replayBatch is the rows of a few pages, written in one transaction.
type replayBatch struct{ rows []*sinks.Batch }

// writeReplayBatch writes b in one round trip, retrying a deadlock or
// serialization failure with back-off.
func writeReplayBatch(ctx context.Context, pool *pgxpool.Pool, runID int64, b *replayBatch) error {
	return backoff.Retry(func() error {
		var batch pgx.Batch
		var labels []string
		for _, r := range b.rows {
			labels = append(labels, sinks.Queue(&batch, runID, r)...)
		}
		br := pool.SendBatch(ctx, &batch)
		err := sinks.Results(br, labels)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil && db.Classify(err) != db.Conflict {
			return backoff.Permanent(err)
		}
		return err
	}, db.ConflictBackOff(ctx))
}

type archivedPagesParams struct {
	RunID     int64 `db:"run_id"`
	AfterTask int64 `db:"after_task"`
	AfterPage int   `db:"after_page"`
	Limit     int   `db:"lim"`
}

// replayPage is an archived page with its task, as read.
type replayPage struct {
	task           kinds.Task
	endpoint, qury string
	body           []byte // zstd
}

var runJobSpec = db.Prepare[db.RunArg]("RunJobSpec")

// Replay maps run runID's archived pages again and writes their rows.
func Replay(ctx context.Context, pool *pgxpool.Pool, runID int64, log *slog.Logger) (*ReplaySummary, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sum := &ReplaySummary{RunID: runID}
	var spec []byte
	var archived int64
	err := runJobSpec.QueryRow(ctx, pool, db.RunArg{RunID: runID}).Scan(&spec, &sum.HarvestRows, &sum.HarvestSeconds, &archived)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("replay run %d: %w", runID, ErrNoRun)
	}
	if err != nil {
		return nil, fmt.Errorf("replay run %d: %w", runID, err)
	}
	if archived == 0 {
		return nil, fmt.Errorf("replay run %d: %w", runID, ErrNoArchive)
	}
	job := &jobfile.Job{}
	if err := json.Unmarshal(spec, job); err != nil {
		return nil, fmt.Errorf("replay run %d: the run's job: %w", runID, err)
	}
	if job.Expand == nil {
		job.Expand = &kinds.Expand{}
	}
	log = log.With("run_id", runID)
	var requests atomic.Int64

	start := time.Now()
	// The mapping feeds one writer, which sends replayBatchPages pages at a
	// time as one implicit transaction while the next are mapped. One, in
	// task order: a page may refer to rows an earlier task wrote (a
	// follows edge to its profile's user row, under a foreign key).
	batches := make(chan *replayBatch, replayWriters)
	g, gctx := errgroup.WithContext(ctx)
	for range replayWriters {
		g.Go(func() error {
			for b := range batches {
				if err := writeReplayBatch(gctx, pool, runID, b); err != nil {
					return fmt.Errorf("replay run %d: write: %w", runID, err)
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(batches)
		cur := &replayBatch{}
		send := func() bool {
			if len(cur.rows) == 0 {
				return true
			}
			select {
			case batches <- cur:
				cur = &replayBatch{}
				return true
			case <-gctx.Done():
				return false
			}
		}
		after := archivedPagesParams{RunID: runID, AfterTask: 0, AfterPage: -1, Limit: replayReadChunk}
		for {
			pages, err := readArchived(gctx, pool, after)
			if err != nil {
				return fmt.Errorf("replay run %d: %w", runID, err)
			}
			for _, p := range pages {
				res, err := replayOne(job, p, &requests)
				if err != nil {
					sum.Failed++
					log.Warn("archived page not mapped", "task_id", p.task.ID, "kind", p.task.Kind, "page", p.task.Pages, "err", err)
					continue
				}
				sum.Pages++
				sum.Rows += int64(res.Batch.Len())
				cur.rows = append(cur.rows, &res.Batch)
				if len(cur.rows) >= replayBatchPages && !send() {
					return gctx.Err()
				}
			}
			if len(pages) < replayReadChunk {
				break
			}
			last := pages[len(pages)-1].task
			after.AfterTask, after.AfterPage = last.ID, last.Pages
		}
		send()
		return gctx.Err()
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sum.Elapsed = time.Since(start)
	sum.Requests = requests.Load()
	return sum, nil
}

var archivedPages = db.Prepare[archivedPagesParams]("ArchivedPages")

// readArchived reads one chunk of archived pages.
func readArchived(ctx context.Context, pool *pgxpool.Pool, p archivedPagesParams) ([]replayPage, error) {
	rows, err := archivedPages.Query(ctx, pool, p)
	if err != nil {
		return nil, err
	}
	var out []replayPage
	var rp replayPage
	var params []byte
	_, err = pgx.ForEachRow(rows, []any{&rp.task.ID, &rp.task.Pages, &rp.task.Cursor, &rp.task.Items, &rp.endpoint, &rp.qury, &rp.body,
		&rp.task.Kind, &rp.task.Key, &params, &rp.task.Depth, &rp.task.MaxPages}, func() error {
		rp.task.RunID = p.RunID
		rp.task.Params = nil
		if err := json.Unmarshal(params, &rp.task.Params); err != nil {
			return fmt.Errorf("task %d params: %w", rp.task.ID, err)
		}
		rp.body = bytes.Clone(rp.body)
		out = append(out, rp)
		return nil
	})
	return out, err
}

// replayOne maps one archived page through its kind's call and mapping,
// counting the call in requests when the archive answers it.
func replayOne(job *jobfile.Job, p replayPage, requests *atomic.Int64) (*kinds.Result, error) {
	k := kinds.Of(p.task.Kind)
	if k == nil {
		return nil, fmt.Errorf("unknown task kind %s", p.task.Kind)
	}
	body, err := unarchive(p.body)
	if err != nil {
		return nil, err
	}
	t := p.task
	res, err := k.Replay(job, &t, p.endpoint, p.qury, body)
	if !errors.Is(err, kinds.ErrReplayMismatch) {
		requests.Add(1)
	}
	return res, err
}
