package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/socialcrawl/crawler/retention"
)

const pruneSummary = `Remove the bookkeeping of old runs: their tasks, progress samples, page
archive, sampled answer shapes and quota rows, in batches of short
transactions. Entities, edges and snapshots stay (--snapshots: the old
runs' snapshot and ranking rows go too, but each entity's and search's
latest, and the rows a running run compares with). Never touched: a
running run, a run a process works on, the latest run of each job, its
latest ended and its latest done run, and the tasks refresh_after and
stop_at_seen read (the next run decides the same). A pruned run stays in
crawler runs, marked pruned, and cannot be resumed. Safe beside a running
job. Incremental: a run pruned before is not read again, so a second
prune does nothing. Give --older-than, --keep-runs or both (a run goes
when every rule given lets it go). See docs/retention.md.`

func cmdPrune(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "prune", "", pruneSummary)
	olderThan := fs.String("older-than", "", "prune runs that ended longer ago than `AGE`: days (90d) or a Go duration (36h)")
	keepRuns := fs.Int("keep-runs", 0, "keep the `N` latest runs of each job (0: no such rule)")
	snapshots := fs.Bool("snapshots", false, "also delete the pruned runs' snapshot and ranking rows (each entity's latest stays)")
	dryRun := fs.Bool("dry-run", false, "print what would be removed; delete nothing")
	batch := fs.Int("batch", retention.DefaultBatch, "delete at most `N` rows per transaction")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("prune takes no arguments, got %q", fs.Args())
	}
	opts := retention.Options{KeepRuns: *keepRuns, Snapshots: *snapshots, DryRun: *dryRun, Batch: *batch}
	if *olderThan != "" {
		d, err := parseAge(*olderThan)
		if err != nil {
			return usagef("--older-than: %v", err)
		}
		opts.OlderThan = d
	}
	if *keepRuns < 0 {
		return usagef("--keep-runs: %d is negative", *keepRuns)
	}
	if *batch < 1 {
		return usagef("--batch: %d is not a positive number", *batch)
	}
	if opts.OlderThan == 0 && opts.KeepRuns == 0 {
		return usagef("give --older-than AGE, --keep-runs N or both: %v", retention.ErrNoRule)
	}
	pool, err := connect(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	if *dryRun {
		err = schemaCurrent(ctx, pool) // a dry run writes nothing, migrations included
	} else {
		_, err = migrate(ctx, pool)
	}
	if err != nil {
		return err
	}
	res, err := retention.Prune(ctx, pool, opts)
	if err != nil {
		return err
	}
	printPrune(env, res)
	return nil
}

// parseAge reads "90d" (whole days) or a Go duration ("36h"); it must be
// positive.
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number of days (90d) or a duration (36h)", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a number of days (90d) or a duration (36h)", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive age", s)
	}
	return d, nil
}

func printPrune(env *cliEnv, res *retention.Result) {
	verb, removed := "pruned", "removed"
	if res.DryRun {
		verb, removed = "would prune", "would remove"
	}
	before := ""
	if res.Before > 0 {
		before = fmt.Sprintf("%d runs pruned before, not read again", res.Before)
	}
	if len(res.Runs) == 0 {
		if before != "" {
			before = " (" + before + ")"
		}
		fmt.Fprintf(env.stdout, "no run to prune%s\n", before)
		return
	}
	fmt.Fprintf(env.stdout, "%s %d runs (%d not pruned before): %s\n", verb, len(res.Runs), res.NewlyPruned, idRanges(res.Runs))
	if before != "" {
		fmt.Fprintln(env.stdout, before)
	}
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "TABLE\tROWS\tBATCHES\n")
	for _, t := range res.Tables {
		fmt.Fprintf(w, "%s\t%d\t%d\n", t.Name, t.Rows, t.Batches)
	}
	_ = w.Flush()
	fmt.Fprintf(env.stdout, "%s %d rows\n", removed, res.Rows())
}

// idRanges writes ascending ids as ranges: 1-5, 8, 10-11.
func idRanges(ids []int64) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.FormatInt(ids[i], 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
