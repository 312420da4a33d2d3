package frontier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/loop"
	"github.com/socialcrawl/crawler/sinks"
)

// The Committer writes the page commits of all the process's tasks, many
// pages in one round trip: the group in one transaction (BEGIN, every
// page's advance, each table's rows of all the pages in one statement,
// the tasks they found in one statement, COMMIT: queueGroup), in one
// pipeline on one connection, held only for that round trip: each
// statement is written as soon as it is encoded, so PostgreSQL runs the
// first while the next are encoded (sendPipelined). A page's rows
// and its advance commit together, as a commit alone; one statement per
// table rather than one per table and page is what brings the writer
// near COPY (BENCHMARKS.md, workload 4). A task waits
// for its page's commit only when it must (before its next statement of
// its own, or at its end), so its next request leaves meanwhile, and
// thousands of tasks in progress share a few connections.
//
// When the group's transaction fails (a lease lost, a page's data
// refused, a deadlock, the connection lost), nothing of it is committed,
// and its pages are sent again at once, each in a transaction of its
// own (BEGIN, its statements, COMMIT), in one batch. After a statement
// fails there, the server skips the rest of the batch: the failing page
// gets the error (its task handles it as a commit's error:
// lease lost, data refused, a conflict retried alone) and the pages after
// it go in the next group. A connection lost mid-batch leaves the failing
// page's commit, and the later pages', unknown: they are sent again, which
// the advance's expected page count makes safe (ErrAlreadyApplied).
type Committer struct {
	pool  *pgxpool.Pool
	runID int64
	f     *Frontier

	mu     sync.Mutex
	queue  []*GroupCommit
	closed bool
	kick   chan struct{}
}

// Grouping of the Committer.
const (
	// GroupMax is the most pages one round trip (one transaction) commits.
	GroupMax = 32
	// committersMax is the most groups in flight at once (each on a
	// connection of its own).
	committersMax = 4
)

// GroupCommit is one page's commit in the Committer: queued, then sent in
// a group; done is closed once its outcome is known.
type GroupCommit struct {
	task Task // as it was at submit: the page count and cursor the advance expects
	next string
	// stmts are the page's statements: dropped once the page is
	// committed, kept for Retry when its commit failed.
	stmts *pageStmts
	// release gives back what the page held (its bodies' budget) once it
	// is committed: the task reads the outcome only after its next
	// request, an answer time later.
	release func()
	// sent is closed once the page's statements are written to the server
	// (or its outcome is known): the server commits a batch it has whole
	// even if the process dies before reading its results, so a task's
	// next request waits for it, and a kill costs at most the request in
	// flight per task.
	sent     chan struct{}
	sentOnce sync.Once
	done     chan struct{}
	err      error
	f        *Frontier
	runID    int64
	waited   bool
}

// NewCommitter starts the Committer's senders, which work until ctx ends
// (the run's hard stop: a group in flight then fails, its pages with it).
func NewCommitter(ctx context.Context, pool *pgxpool.Pool, runID int64, f *Frontier) *Committer {
	c := &Committer{pool: pool, runID: runID, f: f, kick: make(chan struct{}, 1)}
	senders := max(1, min(committersMax, int(pool.Config().MaxConns)/3))
	for range senders {
		go c.send(ctx)
	}
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.closed = true
		q := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, g := range q {
			g.finish(fmt.Errorf("commit not sent: %w", context.Cause(ctx)))
		}
	})
	return c
}

// Submit queues p's commit for task t (as it is now) and returns it; Wait
// gives its outcome. The statements keep what they send of p (its rows'
// columns), and nothing else: the caller need not keep p for a retry
// (Retry), and release, when not nil, is called by the committer as soon
// as the page is committed, before Wait returns.
func (c *Committer) Submit(t *Task, p PageCommit, release func()) (*GroupCommit, error) {
	stmts, err := commitStmts(c.runID, t, p, c.f.ttl)
	if err != nil {
		return nil, err
	}
	g := &GroupCommit{task: *t, next: p.Next, stmts: stmts, runID: c.runID, release: release, sent: make(chan struct{}), done: make(chan struct{}), f: c.f}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("commit not sent: the run is stopping")
	}
	c.queue = append(c.queue, g)
	c.mu.Unlock()
	loop.Kick(c.kick)
	return g, nil
}

// Wait waits for the page's commit and returns its error, once
// (ErrLeaseLost, ErrAlreadyApplied, or the database's).
func (g *GroupCommit) Wait(ctx context.Context) error {
	<-g.done
	if g.waited {
		return g.err
	}
	g.waited = true
	if pgErr := (*pgconn.PgError)(nil); errors.As(g.err, &pgErr) && pgErr.Code == db.NotAdvancedCode {
		g.err = g.f.notAdvanced(ctx, &g.task, g.next)
	}
	return g.err
}

// Sent is closed once the page's commit is written to the server.
func (g *GroupCommit) Sent() <-chan struct{} { return g.sent }

func (g *GroupCommit) written() { g.sentOnce.Do(func() { close(g.sent) }) }

// finish records the page's outcome. A committed page's statements go at
// once, and what it held is given back: thousands of tasks each wait an
// answer time before reading their previous page's outcome, and none
// keeps that page meanwhile (docs/how-a-run-works.md#memory).
func (g *GroupCommit) finish(err error) {
	g.err = err
	if err == nil {
		g.stmts = nil
		if g.release != nil {
			g.release()
		}
	}
	g.written()
	close(g.done)
}

// Retry sends the page's statements again, alone, and reads their
// results: the retry of a commit that failed with a lost connection or a
// conflict (Wait's error). As Wait, it answers ErrAlreadyApplied when the
// first attempt had gone through.
func (g *GroupCommit) Retry(ctx context.Context) error {
	if g.stmts == nil {
		return errors.New("retry of a page already committed")
	}
	var batch pgx.Batch
	labels := g.stmts.queue(&batch, g.runID)
	sc := &SentCommit{f: g.f, task: g.task, next: g.next, labels: labels}
	sc.br = g.f.pool.SendBatch(ctx, &batch)
	return sc.Wait(ctx)
}

// queueAgain queues the statements of from into b anew: pgx keeps a sent
// query's statement description, which is the connection's it was sent on.
func queueAgain(b, from *pgx.Batch) {
	for _, q := range from.QueuedQueries {
		b.Queue(q.SQL, q.Arguments...)
	}
}

// take removes up to GroupMax queued commits.
func (c *Committer) take() []*GroupCommit {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.queue), GroupMax)
	group := c.queue[:n:n]
	c.queue = c.queue[n:]
	if len(c.queue) > 0 {
		loop.Kick(c.kick)
	}
	return group
}

// requeue puts commits that were not run back in front of the queue.
func (c *Committer) requeue(gs []*GroupCommit) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		for _, g := range gs {
			g.finish(errors.New("commit not sent: the run is stopping"))
		}
		return
	}
	c.queue = append(gs[:len(gs):len(gs)], c.queue...)
	c.mu.Unlock()
	loop.Kick(c.kick)
}

// send is one sender: it sends the queued commits in groups until ctx ends.
func (c *Committer) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		for {
			group := c.take()
			if len(group) == 0 {
				break
			}
			if rest := c.sendGroup(ctx, group); len(rest) > 0 {
				c.requeue(rest)
			}
		}
	}
}

var (
	beginPage  = "BEGIN"
	commitPage = "COMMIT"
)

// sendGroup sends group in one batch and finishes each page's commit it
// knows the outcome of; it returns the pages to send again. A group of
// several pages goes first as one transaction (sendTogether), and page
// by page when that fails.
func (c *Committer) sendGroup(ctx context.Context, group []*GroupCommit) (again []*GroupCommit) {
	if len(group) > 1 && c.sendTogether(ctx, group) {
		return nil
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		// Nothing was sent: each page's task retries its commit alone
		// (waiting while the database is away).
		for _, g := range group {
			g.finish(err)
		}
		return nil
	}
	defer conn.Release()
	var batch pgx.Batch
	labels := make([][]string, len(group))
	for i, g := range group {
		batch.Queue(beginPage)
		labels[i] = g.stmts.queue(&batch, c.runID)
		batch.Queue(commitPage)
	}
	br := conn.SendBatch(ctx, &batch)
	for _, g := range group {
		// Written (a page sent again after another's failure was written
		// once already: its next request may have left before it is).
		g.written()
	}
	failed := -1
	for i, g := range group {
		err := pageResults(br, labels[i])
		if err != nil {
			failed = i
			g.finish(err)
			break
		}
		g.finish(nil)
	}
	// Every page read as committed is: an error closing the batch after
	// that is its trailing Sync's.
	_ = br.Close()
	if failed < 0 {
		return nil
	}
	// The failing page's transaction is left open, aborted, and pgx's
	// statement cache may no longer match the server's (the statements
	// after the error were skipped): the connection is not reused (rare:
	// a lease lost, a page refused).
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	_ = conn.Conn().Close(cctx)
	cancel()
	return group[failed+1:]
}

// sendTogether commits group in one transaction, in one round trip
// (commitGroup), and says whether it did; then every page is committed.
// When it did not, nothing of the group is (a statement failed and the
// transaction was left aborted, or the connection was lost before its
// COMMIT was read: a commit that went through nonetheless is found by
// each page's advance when the pages are sent again, ErrAlreadyApplied),
// and the caller sends the pages one transaction each, which tells which
// page failed and commits the others.
func (c *Committer) sendTogether(ctx context.Context, group []*GroupCommit) bool {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return false
	}
	defer conn.Release()
	pages := make([]*pageStmts, len(group))
	for i, g := range group {
		pages[i] = g.stmts
	}
	err = commitGroup(ctx, conn.Conn(), c.runID, pages, func() {
		for _, g := range group {
			g.written()
		}
	})
	if err != nil {
		// As in sendGroup: an aborted transaction may be left open, and
		// pgx's statement cache may no longer match the server's.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = conn.Conn().Close(cctx)
		cancel()
		return false
	}
	for _, g := range group {
		g.finish(nil)
	}
	return true
}

// commitGroup sends pages in one transaction, in one pipeline (BEGIN,
// queueGroup, COMMIT: sendPipelined, one round trip's wait), calls written
// once the whole of it is written to the server, and returns the first
// error. Without an error, the group is committed; with one, nothing of
// it is, and conn may be left in the group's aborted transaction.
func commitGroup(ctx context.Context, conn *pgx.Conn, runID int64, pages []*pageStmts, written func()) error {
	var batch pgx.Batch
	batch.Queue(beginPage)
	labels := append([]string{"begin group"}, queueGroup(&batch, runID, pages)...)
	batch.Queue(commitPage)
	labels = append(labels, "commit group")
	var br interface {
		Exec() (pgconn.CommandTag, error)
		Close() error
	}
	if conn.Config().DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		br = sendPipelined(ctx, conn, &batch)
	} else {
		// Another mode (cache_describe through PgBouncer, which keeps no
		// prepared statement: docs/pgbouncer.md): pgx's batch, as is.
		br = conn.SendBatch(ctx, &batch)
	}
	written()
	err := sinks.Results(br, labels)
	// The group's COMMIT read as done, it is: an error closing the
	// pipeline after that is its trailing Sync's.
	_ = br.Close()
	return err
}

// WriteRows writes the rows of pages on conn as the Committer writes a
// full group's, in one transaction (commitGroup), without the tasks'
// advances: the writer that testkit/bench's workload 4 compares with
// COPY. Nothing is written when it returns an error, and conn is then
// to be closed.
func WriteRows(ctx context.Context, conn *pgx.Conn, runID int64, pages []*sinks.Batch) error {
	stmts := make([]*pageStmts, len(pages))
	for i, b := range pages {
		stmts[i] = &pageStmts{rows: b, after: &pgx.Batch{}}
	}
	return commitGroup(ctx, conn, runID, stmts, func() {})
}

// pageResults reads one page's results in a group: BEGIN, its statements
// (by their labels), COMMIT.
func pageResults(br pgx.BatchResults, labels []string) error {
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("begin page: %w", err)
	}
	if err := sinks.Results(br, labels); err != nil {
		return err
	}
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("commit page: %w", err)
	}
	return nil
}
