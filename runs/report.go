package runs

// The run report's figures (credits per endpoint, pages/s and 429s over
// time, task outcomes by kind, rows per table, top movers against the
// job's previous run, what changed in the follow graph) for `crawler report`, which writes them as one
// self-contained HTML file with inline SVG charts (output/report) or as
// JSON.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
)

// ReportMoversLimit is how many top movers each list shows.
const ReportMoversLimit = 10

// ReportNewAccountsLimit is how many new accounts "What changed" lists;
// ReportListsLimit how many compared follow lists (the most changed).
const (
	ReportNewAccountsLimit = 10
	ReportListsLimit       = 20
)

// Report is what the report shows; its JSON form is `crawler report --json`.
type Report struct {
	Run       ReportRun         `json:"run"`
	Credits   []EndpointCredits `json:"credits_by_endpoint"`
	Timeline  []TimelinePoint   `json:"timeline"` // empty: the run recorded no samples
	Kinds     []KindOutcome     `json:"tasks_by_kind"`
	Reasons   []ReasonCount     `json:"top_failure_reasons"`
	Tables    []TableRows       `json:"rows_by_table"`
	Previous  *int64            `json:"previous_run_id"` // of the same job; nil: none
	Followers []Mover           `json:"top_follower_growth"`
	// FollowerFalls are the biggest follower losses (most negative first).
	FollowerFalls []Mover `json:"top_follower_falls"`
	Plays         []Mover `json:"top_play_count_growth"`
	// Changes is what changed in this run: new accounts, follow edges
	// gained and lost, how many follower counts moved.
	Changes *Changes `json:"what_changed"`
	// Drift is how the shape of the answers changed since the job's
	// previous run (new and vanished key paths).
	Drift *Drift `json:"schema_drift"`
	// Revisit is an adaptive run's schedule against what it captured;
	// nil when the run was not adaptive.
	Revisit   *RunRevisit `json:"adaptive_revisits"`
	Generated time.Time   `json:"generated_at"`
}

// ReportRun is the run's header.
type ReportRun struct {
	Header
	Totals
	// CreditsSaved: not spent thanks to refresh_after and stop_at_seen
	// (crawl.run_ledger).
	CreditsSaved int64 `json:"credits_saved"`
	// CreditsUnknown: charged or not, unknown: what processes that died
	// hold (crawl.run_ledger.credits_unknown).
	CreditsUnknown int64 `json:"credits_unknown"`
	// RowsCounted: no process recorded its rows (samples off), so Rows
	// is the sum of rows per table instead.
	RowsCounted bool `json:"rows_counted_from_tables,omitempty"`
}

// EndpointCredits is one endpoint's requests and credits.
type EndpointCredits struct {
	Endpoint    string `json:"endpoint"`
	Requests    int64  `json:"requests"`
	Billed      int64  `json:"billed"`
	Free        int64  `json:"free"`
	RateLimited int64  `json:"rate_limited"`
	Errors      int64  `json:"errors"`
	// Remaining is the account's balance the endpoint's answers last
	// reported (credits_remaining), nil when none did.
	Remaining *int64 `json:"credits_remaining,omitempty"`
}

// TimelinePoint is one interval of the run's timeline: pages per second committed
// and 429 answers got in the interval ending At seconds after the start,
// all processes together; and their requests in flight (on average over
// the interval), their adaptive limits of them (as the processes' latest
// samples in the interval had them) and the moves of those limits in the
// interval, by move ("latency down": see crawl.run_samples.concurrency_move).
// The concurrency figures are 0 for samples older than them.
type TimelinePoint struct {
	At               float64          `json:"at_seconds"`
	PagesPerSec      float64          `json:"pages_per_second"`
	RateLimited      int64            `json:"rate_limited"`
	InFlight         float64          `json:"in_flight"`
	ConcurrencyLimit int64            `json:"concurrency_limit"`
	Moves            map[string]int64 `json:"concurrency_moves,omitempty"`
}

// KindOutcome is how a kind's tasks ended.
type KindOutcome struct {
	Kind    string `json:"kind"`
	Done    int64  `json:"done"`
	Failed  int64  `json:"failed"`
	Skipped int64  `json:"skipped"`
	Open    int64  `json:"open"` // pending or leased
}

// TableRows is what the run wrote to one data table: rows it is named in
// (run_id), or, for entities, rows it saw first and rows it saw again
// whose latest sighting it still is.
type TableRows struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
	New   int64  `json:"new"`
	Again int64  `json:"seen_again"`
}

// Mover is one entity's counter in the previous run and this one.
type Mover struct {
	Key    string `json:"key"`
	Before int64  `json:"before"`
	After  int64  `json:"after"`
	Delta  int64  `json:"delta"`
}

// Changes is the report's "What changed" section. Edges are compared per
// follow list between this run's complete walk and the list's previous
// complete walk in any run (shortvideo.follow_changes), whatever the job;
// counter moves are against the job's previous run, as the movers.
type Changes struct {
	// NewAccounts: shortvideo.users rows this run saw first;
	// NewAccountsTop the most followed of them (by this run's snapshot,
	// then by handle).
	NewAccounts    int64        `json:"new_accounts"`
	NewAccountsTop []NewAccount `json:"new_accounts_top"`
	// ListsWalked: follow lists (followers or following of an account)
	// the run walked; ListsComplete: of them, walked to the list's end;
	// ListsCompared: of those, lists with an earlier complete walk.
	ListsWalked   int64 `json:"follow_lists_walked"`
	ListsComplete int64 `json:"follow_lists_complete"`
	ListsCompared int64 `json:"follow_lists_compared"`
	// Incomplete counts the walks not complete by why: page_limit,
	// stop_at_seen, repeated_cursor, empty_page_more, failed, skipped,
	// unfinished.
	Incomplete map[string]int64 `json:"follow_lists_incomplete"`
	// Gained and Lost: follow edges started and stopped over the compared
	// lists; Lists the most changed of them (only lists that changed);
	// Unchanged the compared lists that gained and lost nothing.
	Gained    int64        `json:"edges_gained"`
	Lost      int64        `json:"edges_lost"`
	Lists     []ListChange `json:"follow_lists"`
	Changed   int64        `json:"follow_lists_changed"`
	Unchanged int64        `json:"follow_lists_unchanged"`
	// FollowerRises, FollowerFalls, FollowerSame: accounts whose follower
	// count rose, fell or stayed since the job's previous run (0 without
	// one; the biggest moves are the top movers).
	FollowerRises int64 `json:"follower_counts_risen"`
	FollowerFalls int64 `json:"follower_counts_fallen"`
	FollowerSame  int64 `json:"follower_counts_unchanged"`
}

// NewAccount is an account the run saw first, with its follower count if
// the run fetched its profile.
type NewAccount struct {
	Account   string `json:"account"`
	Followers *int64 `json:"follower_count"`
}

// ListChange is one follow list's change between its previous complete
// walk (run PrevRun) and this run's.
type ListChange struct {
	Account string `json:"account"`
	List    string `json:"list"` // followers or following
	PrevRun int64  `json:"prev_run_id"`
	Gained  int64  `json:"gained"`
	Lost    int64  `json:"lost"`
	// CountBefore and CountAfter: the counter the profile reported in
	// PrevRun and in this run (follower_count or following_count); nil
	// when that run took no snapshot.
	CountBefore *int64 `json:"count_before"`
	CountAfter  *int64 `json:"count_after"`
	// Seen: entries this run's walk stored.
	Seen int64 `json:"entries_seen"`
}

type runLimitParams struct {
	RunID int64 `db:"run_id"`
	Limit int   `db:"lim"`
}

type runPrevParams struct {
	RunID  int64 `db:"run_id"`
	PrevID int64 `db:"prev_run_id"`
}

// moversParams are the two runs compared and how many movers to list.
type moversParams struct {
	runPrevParams
	Limit int `db:"lim"`
}

var (
	reportRun   = db.Prepare[runStatusParams]("ReportRun")
	reportNoJIT = db.Prepare[struct{}]("ReportNoJIT")
)

// LoadReport gathers the report of run id (0: the latest run). It only
// reads, in one read-only transaction: its figures are of one moment, and
// no statement is compiled by PostgreSQL's JIT (ReportNoJIT).
func LoadReport(ctx context.Context, pool *pgxpool.Pool, id int64) (*Report, error) {
	return loadReportTx(ctx, pool, id, true)
}

// LoadReportSummary is LoadReport without the charts' figures (timeline,
// rows per table, movers, drift, revisits): the run's header, credits per
// endpoint, tasks by kind, failure reasons and "What changed", read the
// same way. A run's end event tells these (package output/events).
func LoadReportSummary(ctx context.Context, pool *pgxpool.Pool, id int64) (*Report, error) {
	return loadReportTx(ctx, pool, id, false)
}

func loadReportTx(ctx context.Context, pool *pgxpool.Pool, id int64, full bool) (*Report, error) {
	var r *Report
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := reportNoJIT.Exec(ctx, tx, struct{}{}); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		var err error
		r, err = loadReport(ctx, tx, id, full)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func loadReport(ctx context.Context, conn db.Querier, id int64, full bool) (*Report, error) {
	var arg *int64
	if id != 0 {
		arg = &id
	}
	r := &Report{Generated: time.Now().UTC()}
	u := &r.Run
	err := reportRun.QueryRow(ctx, conn, runStatusParams{arg}).Scan(&u.ID, &u.Job, &u.State, &u.StopReason, &u.StartedAt, &u.FinishedAt,
		&u.CreditsBilled, &u.MaxCredits, &u.CreditsUnknown, &u.Pages, &u.Rows, &r.Previous)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNoRun
	}
	if err != nil {
		return nil, fmt.Errorf("report: run: %w", err)
	}
	sv, err := LoadSavings(ctx, conn, u.ID)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	u.CreditsSaved = sv.Saved
	u.Seconds = u.Elapsed().Seconds()
	steps := []func(context.Context, db.Querier) error{r.loadCredits, r.loadKinds, r.loadChanges}
	if full {
		steps = append(steps, r.loadTimeline, r.loadTables, r.loadMovers)
	}
	for _, step := range steps {
		if err := step(ctx, conn); err != nil {
			return nil, fmt.Errorf("report of run %d: %w", u.ID, err)
		}
	}
	st, err := LoadStatus(ctx, conn, u.ID)
	if err != nil {
		return nil, err
	}
	r.Reasons = st.Reasons
	if !full {
		return r, nil
	}
	if u.Rows == 0 {
		for _, t := range r.Tables {
			u.Rows += t.Rows
		}
		u.RowsCounted = u.Rows > 0
	}
	if r.Drift, err = LoadDrift(ctx, conn, u.ID); err != nil {
		return nil, err
	}
	if r.Revisit, err = LoadRunRevisit(ctx, conn, u.ID); err != nil {
		return nil, err
	}
	return r, nil
}

var reportCredits = db.Prepare[db.RunArg]("ReportCredits")

func (r *Report) loadCredits(ctx context.Context, conn db.Querier) error {
	rows, _ := reportCredits.Query(ctx, conn, db.RunArg{RunID: r.Run.ID})
	var e EndpointCredits
	r.Credits = []EndpointCredits{}
	_, err := pgx.ForEachRow(rows, []any{&e.Endpoint, &e.Requests, &e.Billed, &e.Free, &e.RateLimited, &e.Errors, &e.Remaining}, func() error {
		r.Credits = append(r.Credits, e)
		if left := e.Remaining; left != nil && (r.Run.CreditsRemaining == nil || *left < *r.Run.CreditsRemaining) {
			r.Run.CreditsRemaining = left
		}
		return nil
	})
	return err
}

// reportSample is a process's cumulative counters at a moment, with its
// requests in flight over the interval before it and its limit of them
// (NULL, nil here, in samples older than migration 00052).
type reportSample struct {
	owner         string
	at, procStart float64
	pages, r429   int64
	inFlight      *float64
	limit         *int64
	moves         map[string]int64 // cumulative
}

var reportSamples = db.Prepare[db.RunArg]("ReportSamples")

func (r *Report) loadTimeline(ctx context.Context, conn db.Querier) error {
	rows, _ := reportSamples.Query(ctx, conn, db.RunArg{RunID: r.Run.ID})
	var s reportSample
	var samples []reportSample
	if _, err := pgx.ForEachRow(rows, []any{&s.owner, &s.at, &s.procStart, &s.pages, &s.r429, &s.inFlight, &s.limit, &s.moves}, func() error {
		samples = append(samples, s)
		s = reportSample{}
		return nil
	}); err != nil {
		return err
	}
	r.Timeline = reportTimeline(samples)
	return nil
}

// reportTimeline turns the processes' cumulative samples into intervals: each
// sample's increase over its process's previous one (or its start) is
// spread over the interval it covers, and intervals are summed in buckets
// as wide as the median interval, so processes working together add up.
// Requests in flight spread the same way; a bucket's limit is the sum of
// the processes' limits as of their latest span reaching into it.
func reportTimeline(samples []reportSample) []TimelinePoint {
	type span struct {
		owner       string
		from, to    float64
		pages, r429 int64
		inFlight    float64
		limit       int64
		moves       map[string]int64
	}
	last := map[string]reportSample{}
	var spans []span
	var widths []float64
	for _, s := range samples {
		prev, ok := last[s.owner]
		if !ok {
			prev = reportSample{at: s.procStart}
		}
		last[s.owner] = s
		if s.at <= prev.at {
			continue
		}
		sp := span{owner: s.owner, from: prev.at, to: s.at, pages: s.pages - prev.pages, r429: s.r429 - prev.r429}
		if s.inFlight != nil {
			sp.inFlight = *s.inFlight
		}
		if s.limit != nil {
			sp.limit = *s.limit
		}
		for mv, n := range s.moves {
			if d := n - prev.moves[mv]; d > 0 {
				if sp.moves == nil {
					sp.moves = map[string]int64{}
				}
				sp.moves[mv] = d
			}
		}
		spans = append(spans, sp)
		widths = append(widths, s.at-prev.at)
	}
	if len(spans) == 0 {
		return []TimelinePoint{}
	}
	sort.Float64s(widths)
	w := math.Max(widths[len(widths)/2], 0.001)
	end := 0.0
	for _, sp := range spans {
		end = math.Max(end, sp.to)
	}
	n := int(math.Ceil(end/w - 1e-9))
	n = max(n, 1)
	out := make([]TimelinePoint, n)
	inFlight := make([]float64, n)
	limits := make([]map[string]int64, n) // per bucket, by process
	for _, sp := range spans {
		// Pages and requests in flight spread evenly over the span; 429s
		// and moves counted at its end.
		d := sp.to - sp.from
		for i := int(sp.from / w); i < n && float64(i)*w < sp.to; i++ {
			lo, hi := math.Max(sp.from, float64(i)*w), math.Min(sp.to, float64(i+1)*w)
			if hi > lo {
				out[i].PagesPerSec += float64(sp.pages) * (hi - lo) / d
				inFlight[i] += sp.inFlight * (hi - lo)
			}
			if limits[i] == nil {
				limits[i] = map[string]int64{}
			}
			limits[i][sp.owner] = sp.limit
		}
		at := min(int((sp.to-1e-9)/w), n-1)
		out[at].RateLimited += sp.r429
		for mv, k := range sp.moves {
			if out[at].Moves == nil {
				out[at].Moves = map[string]int64{}
			}
			out[at].Moves[mv] += k
		}
	}
	for i := range out {
		out[i].At = roundTo(float64(i+1)*w, 3)
		out[i].PagesPerSec = roundTo(out[i].PagesPerSec/w, 3)
		out[i].InFlight = roundTo(inFlight[i]/w, 3)
		for _, l := range limits[i] {
			out[i].ConcurrencyLimit += l
		}
	}
	return out
}

func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

var reportKinds = db.Prepare[db.RunArg]("ReportTaskKinds")

func (r *Report) loadKinds(ctx context.Context, conn db.Querier) error {
	rows, _ := reportKinds.Query(ctx, conn, db.RunArg{RunID: r.Run.ID})
	var k KindOutcome
	r.Kinds = []KindOutcome{}
	_, err := pgx.ForEachRow(rows, []any{&k.Kind, &k.Done, &k.Failed, &k.Skipped, &k.Open}, func() error {
		r.Kinds = append(r.Kinds, k)
		return nil
	})
	return err
}

var reportTables = db.Prepare[struct{}]("ReportTables")

// loadTables counts, per data table, the rows naming the run, each
// through an index: by run_id, or by last_seen_run for entities.
func (r *Report) loadTables(ctx context.Context, conn db.Querier) error {
	rows, _ := reportTables.Query(ctx, conn, struct{}{})
	type table struct {
		name          string
		runID, seenBy bool
	}
	var tb table
	var tables []table
	if _, err := pgx.ForEachRow(rows, []any{&tb.name, &tb.runID, &tb.seenBy}, func() error {
		tables = append(tables, tb)
		return nil
	}); err != nil {
		return err
	}
	r.Tables = []TableRows{}
	for _, t := range tables {
		var q string
		switch {
		case t.runID:
			q = `SELECT count(*), count(*), 0 FROM ` + quoteTable(t.name) + ` WHERE run_id = $1`
		case t.seenBy:
			// first_seen_run <= last_seen_run: the rows the run saw first
			// or last are among those last seen by it or a later run, read
			// through the index on last_seen_run (migration 00023), not
			// the whole table.
			q = `SELECT count(*), count(*) FILTER (WHERE first_seen_run = $1), count(*) FILTER (WHERE first_seen_run < $1)
			     FROM ` + quoteTable(t.name) + ` WHERE last_seen_run >= $1 AND (first_seen_run = $1 OR last_seen_run = $1)`
		default:
			continue
		}
		tr := TableRows{Table: t.name}
		if err := conn.QueryRow(ctx, q, r.Run.ID).Scan(&tr.Rows, &tr.New, &tr.Again); err != nil {
			return fmt.Errorf("rows of %s: %w", t.name, err)
		}
		if tr.Rows > 0 {
			r.Tables = append(r.Tables, tr)
		}
	}
	return nil
}

// quoteTable quotes a schema.table name from the catalog.
func quoteTable(name string) string {
	for i := range len(name) {
		if name[i] == '.' {
			return pgx.Identifier{name[:i], name[i+1:]}.Sanitize()
		}
	}
	return pgx.Identifier{name}.Sanitize()
}

var (
	followerMovers  = db.Prepare[moversParams]("ReportFollowerMovers")
	followerFalls   = db.Prepare[moversParams]("ReportFollowerFalls")
	playCountMovers = db.Prepare[moversParams]("ReportPlayMovers")
)

func (r *Report) loadMovers(ctx context.Context, conn db.Querier) error {
	r.Followers, r.FollowerFalls, r.Plays = []Mover{}, []Mover{}, []Mover{}
	if r.Previous == nil {
		return nil
	}
	p := moversParams{runPrevParams{RunID: r.Run.ID, PrevID: *r.Previous}, ReportMoversLimit}
	for _, l := range []struct {
		stmt db.Stmt[moversParams]
		out  *[]Mover
	}{{followerMovers, &r.Followers}, {followerFalls, &r.FollowerFalls}, {playCountMovers, &r.Plays}} {
		rows, _ := l.stmt.Query(ctx, conn, p)
		var m Mover
		if _, err := pgx.ForEachRow(rows, []any{&m.Key, &m.Before, &m.After, &m.Delta}, func() error {
			*l.out = append(*l.out, m)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

var (
	reportNewAccounts = db.Prepare[runLimitParams]("ReportNewAccounts")
	reportFollowLists = db.Prepare[db.RunArg]("ReportFollowLists")
	reportMoves       = db.Prepare[runPrevParams]("ReportFollowerMoves")
)

// loadChanges reads "What changed": new accounts, the follow lists the
// run walked and what their complete walks gained and lost since the
// previous complete walk, and how many follower counts moved.
func (r *Report) loadChanges(ctx context.Context, conn db.Querier) error {
	c := &Changes{NewAccountsTop: []NewAccount{}, Incomplete: map[string]int64{}, Lists: []ListChange{}}
	r.Changes = c
	rows, _ := reportNewAccounts.Query(ctx, conn, runLimitParams{RunID: r.Run.ID, Limit: ReportNewAccountsLimit})
	var a NewAccount
	if _, err := pgx.ForEachRow(rows, []any{&a.Account, &a.Followers, &c.NewAccounts}, func() error {
		c.NewAccountsTop = append(c.NewAccountsTop, a)
		return nil
	}); err != nil {
		return fmt.Errorf("new accounts: %w", err)
	}

	rows, _ = reportFollowLists.Query(ctx, conn, db.RunArg{RunID: r.Run.ID})
	var (
		l        ListChange
		complete bool
		why      string
		prev     *int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&l.Account, &l.List, &complete, &why, &l.Seen, &l.CountAfter, &prev, &l.CountBefore, &l.Gained, &l.Lost}, func() error {
		c.ListsWalked++
		switch {
		case !complete:
			c.Incomplete[why]++
		case prev == nil:
			c.ListsComplete++
		default:
			c.ListsComplete++
			c.ListsCompared++
			c.Gained += l.Gained
			c.Lost += l.Lost
			if l.Gained+l.Lost == 0 {
				c.Unchanged++
				break
			}
			c.Changed++
			if len(c.Lists) < ReportListsLimit {
				l.PrevRun = *prev
				c.Lists = append(c.Lists, l)
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("follow lists: %w", err)
	}

	if r.Previous != nil {
		err := reportMoves.QueryRow(ctx, conn, runPrevParams{RunID: r.Run.ID, PrevID: *r.Previous}).Scan(&c.FollowerRises, &c.FollowerFalls, &c.FollowerSame)
		if err != nil {
			return fmt.Errorf("follower moves: %w", err)
		}
	}
	return nil
}
