package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/runs"
	"github.com/socialcrawl/crawler/sources"
)

const statusSummary = `Show one run's figures (default: the latest run): its state, pages and
rows it wrote, credits, tasks by state, why tasks failed or were skipped,
entries dropped, and the processes (with their crawler versions) that
worked on it, with their requests in flight against their adaptive limit
and why it last moved. Read-only: it never migrates; when the database's schema is
behind this binary it says so and exits 1 (run crawler migrate).`

// statusJSON is the --json form of crawler status.
type statusJSON struct {
	runs.Header
	runs.Totals
	Items       int64 `json:"items"`
	CreditsHeld int64 `json:"credits_reserved"`
	// CreditsUnknown: of credits_reserved, what dead processes hold:
	// charged by the upstream or not, unknown.
	CreditsUnknown int64              `json:"credits_unknown"`
	Tasks          map[string]int64   `json:"tasks"`
	Reasons        []runs.ReasonCount `json:"reasons"`
	Dropped        int64              `json:"entries_dropped"`
	Drops          []runs.ReasonCount `json:"drops"`
	Processes      []runs.Process     `json:"processes"`
	Drift          *runs.Drift        `json:"schema_drift"`
}

func cmdStatus(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "status", "", statusSummary)
	runID := fs.Int64("run", 0, "run `ID` to show (default: the latest)")
	asJSON := fs.Bool("json", false, "print the figures as one JSON object")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("status takes no arguments, got %q", fs.Args())
	}
	pool, err := connectCurrent(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	st, err := runs.LoadStatus(ctx, pool, *runID)
	if err != nil {
		return noRun(err, *runID)
	}
	cr, err := budget.LoadCredits(ctx, pool, st.ID)
	if err != nil {
		return err
	}
	procs, err := runs.LoadProcesses(ctx, pool, st.ID)
	if err != nil {
		return err
	}
	drift, err := runs.LoadDrift(ctx, pool, st.ID)
	if err != nil {
		return err
	}
	var rows int64
	for _, p := range procs {
		rows += p.Rows
	}
	if *asJSON {
		tot := runs.Totals{Seconds: st.Elapsed().Seconds(), Pages: st.Pages, Rows: rows, CreditsBilled: cr.Billed, MaxCredits: cr.Max, CreditsRemaining: cr.Remaining}
		out := statusJSON{Header: st.Header, Totals: tot, Items: st.Items, CreditsHeld: cr.Committed - cr.Billed, CreditsUnknown: cr.Unknown, Tasks: st.Tasks,
			Reasons: st.Reasons, Dropped: st.Dropped, Drops: st.Drops, Processes: procs, Drift: drift}
		return printJSON(env.stdout, out)
	}
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "run %d\tjob %q\t%s\n", st.ID, st.Job, st.State)
	if st.StopReason != "" {
		fmt.Fprintf(w, "  stop reason\t%s\n", st.StopReason)
	}
	fmt.Fprintf(w, "  started\t%s\n", st.StartedAt.Format("2006-01-02 15:04:05 MST"))
	if st.FinishedAt != nil {
		fmt.Fprintf(w, "  took\t%s\n", st.FinishedAt.Sub(st.StartedAt).Round(1e6))
	} else {
		fmt.Fprintf(w, "  running for\t%s\n", st.Elapsed().Round(time.Second))
	}
	fmt.Fprintf(w, "  pages fetched\t%d\n  items seen\t%d\n", st.Pages, st.Items)
	fmt.Fprintf(w, "  rows written\t%d\n", rows)
	fmt.Fprintf(w, "  entries dropped\t%d\n", st.Dropped)
	for _, d := range st.Drops {
		fmt.Fprintf(w, "  dropped %s\t%d (latest: %s)\n", d.Kind, d.N, d.Reason)
	}
	budget := "no cap"
	if cr.Max != nil {
		budget = fmt.Sprintf("max %d", *cr.Max)
	}
	held := ""
	if n := cr.Committed - cr.Billed - cr.Unknown; n != 0 {
		held = fmt.Sprintf("; %d reserved by requests in flight", n)
	}
	fmt.Fprintf(w, "  credits billed\t%d (%s%s)\n", cr.Billed, budget, held)
	if cr.Unknown > 0 {
		fmt.Fprintf(w, "  credits charged or not\t%d: unknown (held by a process that died: its requests in flight and answers not yet posted; "+
			"the upstream billed at most %d; counted as spent)\n", cr.Unknown, cr.Billed+cr.Unknown)
	}
	if cr.Remaining != nil {
		fmt.Fprintf(w, "  credits remaining\t%d (the account's balance, as the upstream last reported it)\n", *cr.Remaining)
	}
	if sv, err := runs.LoadSavings(ctx, pool, st.ID); err == nil && (sv.FetchesSkipped > 0 || sv.ListsStopped > 0) {
		fmt.Fprintf(w, "  credits saved\t%d (%d fetches skipped as fresh; ~%d credits of pages not walked by %d lists stopped at seen)\n",
			sv.Saved, sv.FetchesSkipped, sv.CreditsNotWalked, sv.ListsStopped)
	}
	printDrift(w, drift)
	for _, state := range slices.Sorted(maps.Keys(st.Tasks)) {
		fmt.Fprintf(w, "  tasks %s\t%d\n", state, st.Tasks[state])
	}
	for _, r := range st.Reasons {
		fmt.Fprintf(w, "  %s %s\t%d (%s)\n", r.State, r.Kind, r.N, r.Reason)
		fmt.Fprintf(w, "    e.g.\t%s: %s\n", strings.Join(r.Keys, ", "), sources.Truncate(r.Example, 200))
	}
	for _, p := range procs {
		state := p.State
		if state == "" {
			state = "working (or died)"
		}
		fmt.Fprintf(w, "  process %s\t%s: %d pages, %d rows, %d requests, %d 429s%s; crawler %s\n", p.Owner, state, p.Pages, p.Rows, p.Requests, p.RateLimited, inFlightText(p), p.Version)
	}
	return w.Flush()
}

// inFlightText says a process's requests in flight against its adaptive
// limit as of its latest sample, and why the limit last moved: "; 57.3 in
// flight of 64 (latency down)"; "" before its first sample.
func inFlightText(p runs.Process) string {
	if p.InFlight == nil || p.ConcurrencyLimit == nil {
		return ""
	}
	s := fmt.Sprintf("; %.1f in flight of %d", *p.InFlight, *p.ConcurrencyLimit)
	if p.ConcurrencyMove != nil {
		s += " (" + *p.ConcurrencyMove + ")"
	}
	return s
}

// schemaCurrent fails, without changing anything, when the database's
// schema is behind (or ahead of) this binary's migrations.
func schemaCurrent(ctx context.Context, pool *pgxpool.Pool) error {
	current, latest, err := migrations.Versions(ctx, pool)
	if err != nil {
		return err
	}
	switch {
	case current == 0:
		return fmt.Errorf("the database has no crawler schema yet (migrations never applied): run crawler migrate (or crawler run)")
	case current < latest:
		return fmt.Errorf("the database schema is at version %d, behind this crawler's %d; this command only reads and does not migrate: run crawler migrate", current, latest)
	case current > latest:
		return fmt.Errorf("the database schema is at version %d, ahead of this crawler's %d: use a newer crawler", current, latest)
	}
	return nil
}

// noRun turns "no such run" into a usage error naming the run asked for.
func noRun(err error, runID int64) error {
	if errors.Is(err, runs.ErrNoRun) {
		return usagef("no run found (id %d)", runID)
	}
	return err
}

// printJSON prints v to w as one indented JSON value (the --json forms).
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printDrift prints the schema drift's summary and its first keys.
func printDrift(w io.Writer, drift *runs.Drift) {
	line := drift.Summary()
	if line == "" {
		return
	}
	fmt.Fprintf(w, "  schema drift\t%s\n", line)
	for i, k := range append(slices.Clone(drift.New), drift.Gone...) {
		if i == 10 {
			fmt.Fprintf(w, "    ...\t(crawler status --json and crawler report list them all)\n")
			return
		}
		change := "new"
		if i >= len(drift.New) {
			change = "gone"
		}
		fmt.Fprintf(w, "    %s\t%s %s (%d sampled answers)\n", change, k.Endpoint, k.Key, k.Answers)
	}
}
