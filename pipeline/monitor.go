package pipeline

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/version"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
)

// SampleIntervalDefault is how often a run records a progress sample
// (crawl.run_samples) and refreshes the run-wide figures of its progress.
const SampleIntervalDefault = 5 * time.Second

// observeTick is how often observers get the progress: often enough for a
// live line to move, rarely enough to cost nothing.
const observeTick = time.Second

// Observer watches a run in this process: the live status line and the
// metrics. Its methods are called from the workers and must be quick and
// safe for concurrent use.
type Observer interface {
	// Request is called with the outcome of every attempt (the client's
	// AfterResponse hook), after the credit accounting.
	Request(o sources.Outcome)
	// PageCommitted is called after each page (or object) is committed,
	// with its rows and how long the worker spent on the commit, retries
	// included (a list page's results are read after its next page is
	// fetched: a commit that finished meanwhile costs no wait).
	PageCommitted(rows int, took time.Duration)
	// Progress is called about once a second while the run works, and a
	// last time with Final set when this process is done with the run.
	Progress(p Progress)
}

// Progress is a run as one process sees it: its own counters since it
// started on the run, and the whole run's figures as of the latest sample.
type Progress struct {
	RunID   int64
	Elapsed time.Duration // since this process started on the run
	// This process's counters.
	Pages, Rows int64
	Requests    int64 // attempts that got an answer
	Billed      int64 // answers billed
	RateLimited int64 // 429 answers
	Pauses      sources.Pauses
	Rate        float64 // the rate control's current ceiling, requests/s (0: none)
	// Concurrency is the adaptive limit of requests in flight: the limit,
	// the slots held now, its moves and why.
	Concurrency concurrency.Status
	Run         RunFigures
	Final       bool   // this process is done with the run
	State       string // with Final: how it ended (done, stopped, failed, running)
}

// RunFigures are the whole run's figures (all processes), read from the
// database at the latest sample.
type RunFigures struct {
	At                              time.Time // zero: not read yet
	CreditsBilled, CreditsCommitted int64
	MaxCredits                      *int64
	Pending, Leased, Done, Failed   int64
	Skipped                         int64
}

// CreditsReserved are the credits held by requests in flight.
func (f RunFigures) CreditsReserved() int64 { return f.CreditsCommitted - f.CreditsBilled }

// Statements of the monitor (internal/db/queries/monitor.sql).
var (
	joinRun      = db.Prepare[joinRunParams]("JoinRun")
	recordSample = db.Prepare[sampleParams]("RecordSample")
	progress     = db.Prepare[db.RunArg]("Progress")
)

type joinRunParams struct {
	RunID   int64  `db:"run_id"`
	Owner   string `db:"owner"`
	Version string `db:"crawler_version"`
}

type sampleParams struct {
	RunID         int64   `db:"run_id"`
	Owner         string  `db:"owner"`
	Pages         int64   `db:"pages"`
	Rows          int64   `db:"rows_written"`
	Requests      int64   `db:"requests"`
	RateLimited   int64   `db:"rate_limited"`
	PauseSeconds  float64 `db:"pause_seconds"`
	OutageSeconds float64 `db:"outage_seconds"`
	Rate          float64 `db:"rate"`
	Final         bool    `db:"final"`
	State         string  `db:"state"`
	// The adaptive limit of requests in flight (migration 00052).
	InFlight         float64          `db:"in_flight"`
	ConcurrencyLimit int              `db:"concurrency_limit"`
	ConcurrencyMove  *string          `db:"concurrency_move"`
	ConcurrencyMoves map[string]int64 `db:"concurrency_moves"`
}

// monitorState is what the crawl keeps for its observers.
type monitorState struct {
	started     time.Time
	requests    atomic.Int64
	billed      atomic.Int64
	rateLimited atomic.Int64
	figures     atomic.Pointer[RunFigures]
	shapes      shapeBook
	// slots is the limiter's slot-seconds and the time at the previous
	// sample: the mean in flight over an interval is their increase.
	slots struct {
		at      time.Time
		seconds float64
	}
}

// join records this process and its version on the run.
func (c *crawl) join(ctx context.Context) {
	v := c.opts.Version
	if v == "" {
		v = version.String()
	}
	err := c.retryDB(ctx, func(ctx context.Context) error {
		_, err := joinRun.Exec(ctx, c.opts.Pool, joinRunParams{RunID: c.runID, Owner: c.opts.Owner, Version: v})
		return err
	})
	if err != nil {
		c.log.Warn("could not record this process on the run", "err", err)
	}
}

// observeRequest counts an attempt's outcome and hands it to the observers.
func (c *crawl) observeRequest(o sources.Outcome) {
	if !o.NotSent {
		c.mon.requests.Add(1)
	}
	if o.Billed {
		c.mon.billed.Add(1)
	}
	if o.Status == 429 {
		c.mon.rateLimited.Add(1)
	}
	c.mon.shapes.add(o)
	for _, ob := range c.opts.Observers {
		ob.Request(o)
	}
}

// observeCommit hands a committed page to the observers.
func (c *crawl) observeCommit(rows int, took time.Duration) {
	for _, ob := range c.opts.Observers {
		ob.PageCommitted(rows, took)
	}
}

// progress is the current Progress.
func (c *crawl) progress() Progress {
	p := Progress{
		RunID: c.runID, Elapsed: time.Since(c.mon.started),
		Pages: c.pages.Load(), Rows: c.rows.Load(),
		Requests: c.mon.requests.Load(), Billed: c.mon.billed.Load(), RateLimited: c.mon.rateLimited.Load(),
		Pauses: c.client.Pauses(), Rate: c.client.RateLimit(), Concurrency: c.client.Concurrency(),
	}
	if f := c.mon.figures.Load(); f != nil {
		p.Run = *f
	}
	return p
}

// concurrencySample fills the sample's figures of the limit of requests
// in flight from st, read at now or before: the mean in flight since the
// previous sample (since this process started on the run, for the first),
// over the interval st's slot time counts to (st.At).
func (m *monitorState) concurrencySample(sp *sampleParams, st concurrency.Status, now time.Time) {
	from, seconds := m.slots.at, m.slots.seconds
	if from.IsZero() {
		from = m.started
	}
	to := now
	if !st.At.IsZero() {
		to = st.At
	}
	if d := to.Sub(from).Seconds(); d > 0 {
		sp.InFlight = (st.SlotSeconds - seconds) / d
	}
	m.slots.at, m.slots.seconds = to, st.SlotSeconds
	sp.ConcurrencyLimit = st.Limit
	if st.Last.Reason != "" {
		move := st.Last.String()
		sp.ConcurrencyMove = &move
	}
	sp.ConcurrencyMoves = make(map[string]int64, len(st.Moves))
	for mv, n := range st.Moves {
		sp.ConcurrencyMoves[mv.String()] = n
	}
}

// refresh reads the run-wide figures: with sampling on, in the statement
// that records the sample (final: this process's last one, with state).
func (c *crawl) refresh(ctx context.Context, final bool, state string) error {
	if err := c.mon.shapes.flush(ctx, c); err != nil {
		c.log.Debug("could not record the answers' shapes", "err", err)
	}
	p := c.progress()
	f := RunFigures{At: time.Now()}
	var row interface{ Scan(...any) error }
	if c.opts.SampleInterval > 0 {
		sp := sampleParams{
			RunID: c.runID, Owner: c.opts.Owner, Pages: p.Pages, Rows: p.Rows, Requests: p.Requests,
			RateLimited: p.RateLimited, PauseSeconds: p.Pauses.RateLimited.Seconds(), OutageSeconds: p.Pauses.Outage.Seconds(),
			Rate: p.Rate, Final: final, State: state}
		c.mon.concurrencySample(&sp, p.Concurrency, f.At)
		row = recordSample.QueryRow(ctx, c.opts.Pool, sp)
	} else {
		row = progress.QueryRow(ctx, c.opts.Pool, db.RunArg{RunID: c.runID})
	}
	if err := row.Scan(&f.CreditsBilled, &f.CreditsCommitted, &f.MaxCredits, &f.Pending, &f.Leased, &f.Done, &f.Failed, &f.Skipped); err != nil {
		return err
	}
	c.mon.figures.Store(&f)
	return nil
}

// monitor refreshes the run-wide figures every sample interval, logs a
// progress line every progress interval, and hands the progress to the
// observers every second, until ctx ends.
func (c *crawl) monitor(ctx context.Context) {
	sampleEvery := c.opts.SampleInterval
	if sampleEvery <= 0 {
		sampleEvery = SampleIntervalDefault // the figures still refresh, unrecorded
	}
	tick := min(observeTick, sampleEvery)
	if c.opts.ProgressInterval > 0 {
		tick = min(tick, c.opts.ProgressInterval)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var lastSample, lastLog time.Time
	lastLog = c.mon.started
	for {
		now := time.Now()
		if now.Sub(lastSample) >= sampleEvery {
			if err := c.refresh(ctx, false, ""); err != nil && ctx.Err() == nil {
				c.log.Debug("progress sample failed", "err", err) // the database may be away; the workers say so
			}
			lastSample = now
		}
		p := c.progress()
		for _, ob := range c.opts.Observers {
			ob.Progress(p)
		}
		if c.opts.ProgressInterval > 0 && now.Sub(lastLog) >= c.opts.ProgressInterval {
			c.logProgress(p)
			lastLog = now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// finalProgress records this process's last sample (and its end on its
// crawl.run_processes row) and hands the final progress to the observers.
func (c *crawl) finalProgress(ctx context.Context, state string) {
	if err := c.refresh(ctx, true, state); err != nil {
		c.log.Warn("could not record the last progress sample", "err", err)
	}
	p := c.progress()
	p.Final, p.State = true, state
	for _, ob := range c.opts.Observers {
		ob.Progress(p)
	}
}
