package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/socialcrawl/crawler/pipeline"
)

func cmdStatus(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "status", "", "Show a run (default: the latest) and the row counts of the data tables.")
	runID := fs.Int64("run", 0, "run `ID` to show (default: the latest)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("status takes no arguments, got %q", fs.Args())
	}
	pool, err := connect(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := migrate(ctx, pool); err != nil {
		return err
	}
	st, err := pipeline.LoadRunStatus(ctx, pool, *runID)
	if errors.Is(err, pipeline.ErrNoRun) {
		return usagef("no run found (id %d)", *runID)
	}
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "run %d\tjob %q\t%s\n", st.ID, st.Job, st.State)
	if st.StopReason != "" {
		fmt.Fprintf(w, "  stop reason\t%s\n", st.StopReason)
	}
	fmt.Fprintf(w, "  started\t%s\n", st.StartedAt.Format("2006-01-02 15:04:05 MST"))
	if st.FinishedAt != nil {
		fmt.Fprintf(w, "  took\t%s\n", st.FinishedAt.Sub(st.StartedAt).Round(1e6))
	}
	fmt.Fprintf(w, "  pages fetched\t%d\n  items seen\t%d\n", st.Pages, st.Items)
	fmt.Fprintf(w, "  entries dropped\t%d\n", st.Dropped)
	for _, d := range st.Drops {
		fmt.Fprintf(w, "  dropped %s\t%d (latest: %s)\n", d.Kind, d.N, d.Reason)
	}
	if cr, err := pipeline.LoadCredits(ctx, pool, st.ID); err == nil {
		budget := "no cap"
		if cr.Max != nil {
			budget = fmt.Sprintf("max %d", *cr.Max)
		}
		held := ""
		if n := cr.Committed - cr.Billed; n != 0 {
			held = fmt.Sprintf("; %d reserved by requests in flight", n)
		}
		fmt.Fprintf(w, "  credits billed\t%d (%s%s)\n", cr.Billed, budget, held)
	}
	if sv, err := pipeline.LoadSavings(ctx, pool, st.ID); err == nil && (sv.FetchesSkipped > 0 || sv.ListsStopped > 0) {
		fmt.Fprintf(w, "  credits saved\t%d (%d fetches skipped as fresh; ~%d pages not walked by %d lists stopped at seen)\n",
			sv.Saved, sv.FetchesSkipped, sv.PagesNotWalked, sv.ListsStopped)
	}
	for _, state := range slices.Sorted(maps.Keys(st.Tasks)) {
		fmt.Fprintf(w, "  tasks %s\t%d\n", state, st.Tasks[state])
	}
	for _, r := range st.Reasons {
		fmt.Fprintf(w, "  %s %s\t%d (%s)\n", r.State, r.Kind, r.N, r.Reason)
		fmt.Fprintf(w, "    e.g.\t%s: %s\n", strings.Join(r.Keys, ", "), clip(r.Example, 200))
	}
	counts, err := pipeline.TableCounts(ctx, pool)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\ntable\trows\n")
	for _, c := range counts {
		fmt.Fprintf(w, "%s\t%d\n", c.Table, c.Rows)
	}
	return w.Flush()
}

// clip cuts s to at most n bytes without splitting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
