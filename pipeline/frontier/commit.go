package frontier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/sinks"
)

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
	// Walk, when not nil, is the end of a content list's walk, recorded
	// after the page's rows (crawl.content_walks).
	Walk *ContentWalk
}

// ContentWalk is the end of a walk of a content list (kinds.ChangeRule):
// the counter its parent page showed (nil: none) and its pages; Gone,
// when the walk reached the list's end, names its stored entries, those
// it did not find marked deleted.
type ContentWalk struct {
	Kind, Key string
	Count     *int64
	Pages     int
	Outcome   kinds.Outcome
	Gone      *kinds.GoneScope
}

type (
	contentWalkParams struct {
		Kind    string `db:"kind"`
		Key     string `db:"key"`
		Count   *int64 `db:"count"`
		RunID   int64  `db:"run_id"`
		Pages   int    `db:"pages"`
		Outcome string `db:"outcome"`
	}
	goneParams struct {
		RunID  int64  `db:"run_id"`
		Owner  string `db:"owner"`
		Parent string `db:"parent"`
	}
)

var (
	recordContentWalk = db.Prepare[contentWalkParams]("RecordContentWalk")
	markGone          = map[string]db.Stmt[goneParams]{
		"shortvideo":  db.Prepare[goneParams]("MarkSVCommentsGone"),
		"photosocial": db.Prepare[goneParams]("MarkPSCommentsGone"),
	}
)

// queue adds w's statements to batch, with their labels.
func (w *ContentWalk) queue(batch *pgx.Batch, runID int64) []string {
	recordContentWalk.Queue(batch, contentWalkParams{Kind: w.Kind, Key: w.Key, Count: w.Count, RunID: runID, Pages: w.Pages, Outcome: string(w.Outcome)})
	labels := []string{"record content walk"}
	if w.Gone != nil {
		stmt, ok := markGone[w.Gone.Platform]
		if !ok {
			panic("frontier: no comments table of platform " + w.Gone.Platform)
		}
		stmt.Queue(batch, goneParams{RunID: runID, Owner: w.Gone.Owner, Parent: w.Gone.Parent})
		labels = append(labels, "mark deleted entries")
	}
	return labels
}

// Commit records a fetched page: the task's advance (the cursor to
// continue from and, when stop is not empty, the end of the task with stop
// as its reason, and the entries the page dropped), the page's rows and the
// tasks it discovered. They go as one pgx batch, which runs in one implicit
// transaction: a single round trip (no BEGIN, no COMMIT). Send writes the
// batch without waiting for its results. What the page's requests cost is
// the budget's (package budget), not the commit's.
//
// The advance goes first, under the fencing token: for a stale worker it
// matches no row, crawl.expect_advanced aborts the batch and Commit returns
// ErrLeaseLost. The expected page count makes it idempotent: when a commit
// whose answer was lost is retried, the row already shows this page, and
// Commit returns ErrAlreadyApplied without counting it again.
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
	s, err := commitStmts(runID, t, p, ttl)
	if err != nil {
		return nil, nil, err
	}
	batch := &pgx.Batch{}
	return batch, s.queue(batch, runID), nil
}

// pageStmts are a page's commit statements in their parts: the task's
// advance, the rows, what follows them (the end of a content walk, the
// archived body) and the tasks the page found. A page alone sends them in
// that order (queue); a group of pages sends every advance, then each
// table's rows of all of them in one statement, then what follows, then
// the tasks of all of them in one statement (queueGroup).
type pageStmts struct {
	advance *pgx.Batch // one statement
	label   string
	rows    *sinks.Batch // nil: none
	after   *pgx.Batch
	labels  []string // after's
	tasks   []taskRow
}

// commitStmts are p's commit statements. They keep p's rows (and what
// the statements send of the rest), nothing else of p.
func commitStmts(runID int64, t *Task, p PageCommit, ttl time.Duration) (*pageStmts, error) {
	drops := p.Drops
	var outcome kinds.Outcome
	if p.Stop != "" {
		outcome = p.Outcome.OrDone()
	}
	s := &pageStmts{advance: &pgx.Batch{}, label: fmt.Sprintf("advance task %d", t.ID), after: &pgx.Batch{}}
	advanceTask.Queue(s.advance, advanceParams{ID: t.ID, Token: t.Token, Pages: t.Pages, Cursor: p.Next, Items: p.Items,
		Stop: CleanReason(p.Stop), Outcome: string(outcome), TTL: ttl, Dropped: drops.N, DropReason: CleanReason(drops.Reason), Saved: p.Saved, NewItems: p.NewItems})
	if p.Rows != nil && p.Rows.Len() > 0 {
		// A copy: p.Rows is part of what the task fetched (its body
		// among it), which the commit must not keep alive.
		s.rows = sinks.Merge(p.Rows)
	}
	if p.Walk != nil {
		s.labels = append(s.labels, p.Walk.queue(s.after, runID)...)
	}
	if p.Archive != nil {
		queueArchive(s.after, runID, t, p.Archive)
		s.labels = append(s.labels, "archive page")
	}
	id := t.ID
	tasks, err := taskRows(p.Children, &id)
	if err != nil {
		return nil, fmt.Errorf("add tasks: %w", err)
	}
	s.tasks = tasks
	return s, nil
}

// queue adds the page's statements to batch, as a page commits alone, and
// returns their labels.
func (s *pageStmts) queue(batch *pgx.Batch, runID int64) []string {
	queueAgain(batch, s.advance)
	labels := []string{s.label}
	if s.rows != nil {
		labels = append(labels, sinks.Queue(batch, runID, s.rows)...)
	}
	queueAgain(batch, s.after)
	labels = append(labels, s.labels...)
	if s.tasks != nil {
		insertTasks.Queue(batch, addParams(runID), s.tasks)
		labels = append(labels, "add tasks")
	}
	return labels
}

// queueGroup adds the statements of pages, to be committed in one
// transaction, to batch and returns their labels: every page's advance
// first (each fenced by its token: a lost lease aborts the group), then
// each table's rows of all the pages in one statement (sinks.Merge), then
// what follows each page's rows, then the tasks they found in one
// statement. Each page's statements keep the order they have alone, and
// the rows and tasks of the group are written in key order by one
// statement each, so concurrent groups lock shared rows in one order.
func queueGroup(batch *pgx.Batch, runID int64, pages []*pageStmts) []string {
	var labels []string
	var rows []*sinks.Batch
	var tasks [][]taskRow
	for _, s := range pages {
		if s.advance != nil { // nil: rows only (WriteRows)
			queueAgain(batch, s.advance)
			labels = append(labels, s.label)
		}
		if s.rows != nil {
			rows = append(rows, s.rows)
		}
		if s.tasks != nil {
			tasks = append(tasks, s.tasks)
		}
	}
	labels = append(labels, sinks.Queue(batch, runID, sinks.Merge(rows...))...)
	for _, s := range pages {
		queueAgain(batch, s.after)
		labels = append(labels, s.labels...)
	}
	if t := mergeTaskRows(tasks); t != nil {
		insertTasks.Queue(batch, addParams(runID), t)
		labels = append(labels, "add tasks")
	}
	return labels
}

// mergeTaskRows are the task rows of several pages as one statement's:
// one row per task, in key order, as the pages would leave it written
// one after the other: the first page's row, with the least depth of
// any.
func mergeTaskRows(pages [][]taskRow) []taskRow {
	switch len(pages) {
	case 0:
		return nil
	case 1:
		return pages[0]
	}
	first := map[[2]string]int{}
	var out []taskRow
	for _, rows := range pages {
		for _, r := range rows {
			k := [2]string{r.Kind, r.Key}
			if i, ok := first[k]; ok {
				out[i].Depth = min(out[i].Depth, r.Depth)
				continue
			}
			first[k] = len(out)
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b taskRow) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Key, b.Key)) })
	return out
}

// Wait reads the results of the batch, once: the error is the commit's
// (ErrLeaseLost, ErrAlreadyApplied, or the database's).
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

// notAdvanced tells why advancing t matched no row: ErrAlreadyApplied when
// the row already shows this page (a retried commit whose first attempt went
// through), ErrLeaseLost otherwise.
func (f *Frontier) notAdvanced(ctx context.Context, t *Task, next string) error {
	var applied bool
	if err := taskAdvanced.QueryRow(ctx, f.pool, advancedParams{ID: t.ID, Token: t.Token, Pages: t.Pages, Cursor: next}).Scan(&applied); err != nil {
		return fmt.Errorf("advance task %d: %w", t.ID, err)
	}
	if applied {
		return ErrAlreadyApplied
	}
	return ErrLeaseLost
}

// ErrAlreadyApplied rolls back a retried commit whose first attempt had
// gone through: the page counts as committed, once.
var ErrAlreadyApplied = errors.New("page already committed")

// Parameters of the statements that end a lease without a page.
type (
	endFreshParams struct {
		ID      int64  `db:"id"`
		Token   int64  `db:"token"`
		Outcome string `db:"outcome"`
		Reason  string `db:"reason"`
		Saved   int    `db:"saved"`
	}
)

var (
	endFresh    = db.Prepare[endFreshParams]("EndFresh")
	endReexpand = db.Prepare[leaseArg]("EndReexpand")
)

// EndFresh ends t's lease as skipped without a request (outcome: fresh
// or adaptive) with reason and saved credits, and adds children, the
// tasks it expands to from stored data, in one transaction (one batch).
func (f *Frontier) EndFresh(ctx context.Context, runID int64, t *Task, outcome kinds.Outcome, reason string, saved int, children []NewTask) error {
	return f.endWithChildren(ctx, runID, t, fmt.Sprintf("end fresh task %d", t.ID), func(b *pgx.Batch) {
		endFresh.Queue(b, endFreshParams{ID: t.ID, Token: t.Token, Outcome: string(outcome), Reason: CleanReason(reason), Saved: saved})
	}, children)
}

// EndReexpand ends the lease of t, expanded again from stored data at its
// new depth (children), as it ended before (done, or skipped: its outcome
// says), in one transaction (one batch).
func (f *Frontier) EndReexpand(ctx context.Context, runID int64, t *Task, children []NewTask) error {
	return f.endWithChildren(ctx, runID, t, fmt.Sprintf("end re-expanded task %d", t.ID), func(b *pgx.Batch) {
		endReexpand.Queue(b, leaseArg{ID: t.ID, Token: t.Token})
	}, children)
}

// endWithChildren ends t's lease by the statement end queues and adds
// children, in one transaction (one batch): a task ended without a
// request, its children from stored data.
func (f *Frontier) endWithChildren(ctx context.Context, runID int64, t *Task, label string, end func(*pgx.Batch), children []NewTask) error {
	var batch pgx.Batch
	end(&batch)
	labels := []string{label}
	id := t.ID
	rows, err := taskRows(children, &id)
	if err != nil {
		return fmt.Errorf("add tasks: %w", err)
	}
	if rows != nil {
		insertTasks.Queue(&batch, addParams(runID), rows)
		labels = append(labels, "add tasks")
	}
	br := f.pool.SendBatch(ctx, &batch)
	err = sinks.Results(br, labels)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == db.NotAdvancedCode {
		return ErrLeaseLost
	}
	return err
}
