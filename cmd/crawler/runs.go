package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/socialcrawl/crawler/runs"
)

const runsSummary = `List the latest runs, newest first: id, job, state, when it started, how
long it took (so far, while running), credits billed and saved, pages,
failed tasks and the crawler versions that worked on it. Read-only.`

func cmdRuns(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "runs", "", runsSummary)
	job := fs.String("job", "", "only the runs of job `NAME`")
	limit := fs.Int64("limit", 20, "list at most `N` runs")
	asJSON := fs.Bool("json", false, "print the runs as a JSON array")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("runs takes no arguments, got %q", fs.Args())
	}
	if *limit < 1 {
		return usagef("--limit: %d is not a positive number", *limit)
	}
	pool, err := connectCurrent(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	list, err := runs.List(ctx, pool, *job, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		type runJSON struct {
			runs.Summary
			Seconds float64 `json:"duration_seconds"`
		}
		out := make([]runJSON, len(list))
		for i, r := range list {
			out[i] = runJSON{r, r.Elapsed().Seconds()}
		}
		return printJSON(env.stdout, out)
	}
	if len(list) == 0 {
		fmt.Fprintln(env.stdout, "no runs")
		return nil
	}
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tJOB\tSTATE\tSTARTED\tDURATION\tCREDITS BILLED\tCREDITS SAVED\tPAGES\tFAILED TASKS\tVERSION")
	for _, r := range list {
		state := r.State
		if r.PrunedAt != nil {
			state += " (pruned)" // its bookkeeping is gone: crawler prune
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.ID, r.Job, state, r.StartedAt.Local().Format("2006-01-02 15:04:05"),
			r.Elapsed().Round(time.Second), r.CreditsBilled, r.CreditsSaved, r.Pages, r.FailedTasks, strings.Join(r.Versions, ", "))
	}
	return w.Flush()
}
