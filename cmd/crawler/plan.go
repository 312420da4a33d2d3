package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/plan"
	"github.com/socialcrawl/crawler/revisit"
	"github.com/socialcrawl/crawler/sources"
)

const planSummary = `Check that JOBFILE can run, and say what it would do and cost, without
spending a credit or writing anything (the database is read in a read-only
transaction; migrations are checked, never applied: on a database never
migrated, the plan has no history and crawler run migrates it first).

Checks: the job file, the API key variable (set; never printed), the
database in DATABASE_URL (reachable, migrations current), and what
"crawler run JOBFILE" would do now (new run, continue or join one). Prints
the seed tasks, an upper bound of the credits the job can cost (from page
limits, edges and depth; see docs/planning.md), and, when the job has a
completed run, the expected cost from its history.

Exit codes: 0 the job can run; 2 it cannot (the reason is printed).`

func cmdPlan(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "plan", "JOBFILE", planSummary)
	baseURL := fs.String("base-url", "", "override api.base_url of the job file (as crawler run --base-url)")
	insecure := fs.Bool("allow-insecure-http", false, "as crawler run --allow-insecure-http")
	maxCredits := fs.Int64("max-credits", -1, "override limits.max_credits (as crawler run --max-credits)")
	newRun := fs.Bool("new-run", false, "plan as crawler run --new-run would run")
	entries := fs.Int64("entries-per-page", plan.EntriesPerPageDefault, "list page size the bound assumes (the upstream documents none; a larger one seen in earlier runs is used instead)")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("plan takes exactly one job file, got %d arguments (see crawler plan --help)", fs.NArg())
	}
	if *entries < 1 {
		return usagef("--entries-per-page must be at least 1, got %d", *entries)
	}
	p, err := planJob(ctx, env, fs.Arg(0), jobfile.LoadOptions{BaseURL: *baseURL, AllowInsecureHTTP: *insecure}, *maxCredits, *newRun, *entries)
	if err != nil {
		// Whatever stops the plan stops the run: exit 2, with the reason.
		if *asJSON && !errors.Is(err, flag.ErrHelp) {
			_ = json.NewEncoder(env.stdout).Encode(map[string]any{"can_run": false, "reason": err.Error()})
		}
		var ue usageError
		if errors.As(err, &ue) {
			return err
		}
		return usageError{fmt.Errorf("cannot run: %w", err)}
	}
	if *asJSON {
		return printJSON(env.stdout, struct {
			CanRun bool `json:"can_run"`
			*plan.Plan
		}{true, p})
	}
	printPlan(env.stdout, p)
	return nil
}

func planJob(ctx context.Context, env *cliEnv, path string, opts jobfile.LoadOptions, maxCredits int64, newRun bool, entries int64) (*plan.Plan, error) {
	job, err := jobfile.LoadWith(path, opts)
	if err != nil {
		return nil, usageError{err}
	}
	key := env.getenv(job.API.KeyEnv)
	if key == "" {
		return nil, usagef("%s: api.key_env: environment variable %s is not set: export the API key there", path, job.API.KeyEnv)
	}
	if maxCredits >= 0 {
		job.Limits.MaxCredits = &maxCredits
	}
	if err := job.ClientConfig(sources.Secret(key), nil).Validate(); err != nil {
		return nil, usageError{fmt.Errorf("%s: api: %w", path, err)}
	}
	pool, err := connect(ctx, env, 2)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	var p *plan.Plan
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		pending, err := migrations.Pending(ctx, tx)
		if err != nil {
			return err
		}
		if len(pending) == len(migrations.Embedded()) {
			// A fresh database: nothing to read, the plan has no history.
			p = plan.Fresh(job, entries)
			return nil
		}
		if len(pending) > 0 {
			return fmt.Errorf("the database lacks migrations %v of this binary: run crawler migrate", pending)
		}
		p, err = plan.Make(ctx, tx, job, entries, newRun)
		if errors.Is(err, pipeline.ErrJobChanged) {
			return fmt.Errorf("%s: %w", path, err)
		}
		return err
	})
	return p, err
}

func credits(n int64) string {
	if n == math.MaxInt64 {
		return "unbounded (beyond 2^63)"
	}
	return fmt.Sprintf("%d", n)
}

func printPlan(w io.Writer, p *plan.Plan) {
	fmt.Fprintf(w, "plan: job %q can run (fingerprint %s)\n", p.Job, p.Fingerprint[:12])
	fmt.Fprintf(w, "next: crawler run would %s\n", p.Next)
	if p.Abandons != "" {
		fmt.Fprintf(w, "      and mark %s\n", p.Abandons)
	}
	fmt.Fprintf(w, "seeds: %d tasks\n", len(p.Seeds))
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  kind\tkey\tmax pages\tbound\testimate")
	for _, s := range p.Seeds {
		est := "-"
		if s.Estimate >= 0 {
			est = fmt.Sprintf("%d (%s)", s.Estimate, s.EstimateFrom)
		}
		pages := "-"
		if s.MaxPages > 0 {
			pages = fmt.Sprint(s.MaxPages)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", s.Kind, s.Key, pages, credits(s.Bound), est)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "credits: at most %s (lists of at most %d entries a page", credits(p.Bound), p.EntriesPerPage)
	if p.ObservedPerPage > 0 {
		fmt.Fprintf(w, "; earlier runs saw up to %d", p.ObservedPerPage)
	}
	fmt.Fprintln(w, ")")
	if p.MaxCredits != nil {
		fmt.Fprintf(w, "budget: max_credits %d caps the run at %d\n", *p.MaxCredits, min(*p.MaxCredits, p.Bound))
	}
	if p.Estimate >= 0 {
		fmt.Fprintf(w, "expected: %d credits (from run %d, the last completed one, which billed %d)\n", p.Estimate, p.HistoryRun, p.HistoryBilled)
	} else {
		fmt.Fprintln(w, "expected: no completed run of this job yet")
	}
	if len(p.Reuse) == 0 {
		fmt.Fprintln(w, "reuse: nothing skipped (refresh_after / stop_at_seen not set or not available)")
	}
	for _, r := range p.Reuse {
		fmt.Fprintf(w, "reuse: %s\n", r)
	}
	if a := p.Adaptive; a != nil {
		printAdaptive(w, a)
	}
}

// adaptiveShown is how many items of each decision crawler plan prints
// (--json lists them all).
const adaptiveShown = 20

// printAdaptive prints an adaptive job's schedule: its totals, then the
// items it refreshes and skips, in the order it spends in.
func printAdaptive(w io.Writer, a *plan.Adaptive) {
	perCredit := "-"
	if a.Cost > 0 {
		perCredit = fmt.Sprintf("%.2f", a.YieldPerCred)
	}
	fmt.Fprintf(w, "adaptive: of %d known items, refresh %d and skip %d; expected %.1f new entries and counter changes for %.1f of %.0f credits (%s per credit); expected unseen after the run: %.1f\n",
		a.Visit+a.Skip, a.Visit, a.Skip, a.Yield, a.Cost, a.Budget, perCredit, a.StalenessLeft)
	var reasons []string
	for r, n := range a.ByReason {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	slices.Sort(reasons)
	if len(reasons) > 0 {
		fmt.Fprintf(w, "adaptive: by reason: %s (items never seen are not listed: they are all visited)\n", strings.Join(reasons, ", "))
	}
	if a.ByReason[revisit.ReasonUnreached] > 0 {
		fmt.Fprintln(w, "adaptive: unreached: not found by the last run from the job's seeds now; no credit is kept for them, a run that finds them visits them if the budget has room")
	}
	if a.Forget > 0 {
		fmt.Fprintf(w, "adaptive: %d items unreached for twice max_age are forgotten by the next run\n", a.Forget)
	}
	for _, visit := range []bool{true, false} {
		shown, more := 0, 0
		for _, it := range a.Items {
			if it.Visit != visit {
				continue
			}
			if shown == adaptiveShown {
				more++
				continue
			}
			shown++
			verb := "refresh"
			if it.FullWalk {
				verb = "walk whole"
			}
			if !visit {
				verb = "skip"
			}
			fmt.Fprintf(w, "adaptive:   %s %s %s (%s): %.2f a day, last visit %.1f days ago, expected %.1f for %.1f credits (at most %.0f)\n",
				verb, it.Kind, it.Key, it.Reason, it.Rate, it.AgeDays, it.Yield, it.Cost, it.CostHigh)
		}
		if more > 0 {
			fmt.Fprintf(w, "adaptive:   ... and %d more (crawler plan --json lists them all)\n", more)
		}
	}
}
