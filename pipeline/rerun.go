package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline/budget"
)

// The same command is safe to rerun: `crawler run JOB` continues the job's
// interrupted run, or joins it while another process works on it, instead
// of starting over (docs/operating.md#rerunning-a-job). A job is its name;
// whether an earlier run is the same work is its fingerprint.

// What FindOrCreateRun did.
const (
	RunNew      = "new"      // a new run was created
	RunContinue = "continue" // an interrupted run (no process on it) is continued
	RunJoin     = "join"     // another process is working on the run: this one joins
	// RunSpent: the interrupted run stopped because its budget was spent,
	// within resume_within, and the job gives it no larger budget: nothing
	// is done (its activity unchanged, so the window runs out and the next
	// start is a new run); `crawler run` exits 5.
	RunSpent = "spent"
)

// RunChoice is the run `crawler run JOB` works on, and why.
type RunChoice struct {
	RunID  int64
	Action string // RunNew, RunContinue, RunJoin
	// Abandoned is the earlier run marked abandoned instead of being
	// continued (0: none), and AbandonReason why.
	Abandoned     int64
	AbandonReason string
	// Idle is how long the continued run had shown no activity.
	Idle time.Duration
	// Billed and BudgetStop, for RunSpent: what the run billed, and the
	// budget it stopped at.
	Billed, BudgetStop int64
}

// ErrJobChanged means the job's run in progress was started from a
// different definition (seeds, expand, max_depth or page limits) than the
// job file given: the process neither joins it nor starts a second run.
var ErrJobChanged = errors.New("job changed")

// Fingerprint identifies what a job harvests: its seed tasks (kind, key,
// params and page limit; sorted, so reordering seeds changes nothing), its
// expand section (edges and their options) and limits.max_depth. The jobfile.API
// section, workers, lease timeout, budget and resume window are not part of
// it: changing them does not make an interrupted run a different harvest.
// A job with seed files adds each file's key, column and content hash
// (taken when the job was loaded: a changed file is a changed job) and
// limits.max_pages (the page limit of their lists); a job without any
// keeps the fingerprint it always had.
func Fingerprint(job *jobfile.Job) string {
	seeds := job.SeedTasks()
	keys := make([]string, 0, len(seeds))
	for _, t := range seeds {
		params, _ := json.Marshal(t.Params) // map keys marshal sorted
		keys = append(keys, fmt.Sprintf("%s\x00%s\x00%s\x00%d", t.Kind, t.Key, params, t.MaxPages))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	expand, _ := json.Marshal(job.Expand)
	h := sha256.New()
	fmt.Fprintf(h, "seeds\x00%s\x00expand\x00%s\x00max_depth\x00%d", strings.Join(keys, "\x01"), expand, job.Limits.MaxDepth)
	if files := job.Seeds.FileList(); len(files) > 0 {
		fmt.Fprintf(h, "\x00max_pages\x00%d", job.Limits.MaxPages)
		for _, f := range files {
			fmt.Fprintf(h, "\x00file\x00%s\x00%s\x00%s", f.Key(), f.Column, f.SHA256)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

type latestRunParams struct {
	JobName      string        `db:"job_name"`
	LeaseTimeout time.Duration `db:"lease_timeout"`
}

type abandonRunParams struct {
	RunID  int64  `db:"run_id"`
	Reason string `db:"reason"`
}

// PriorRun is the latest run of a job as FindOrCreateRun sees it.
type PriorRun struct {
	ID          int64
	State       string
	Fingerprint string // "" for runs created before fingerprints were kept
	Billed      int64
	// Spent: it stopped because its budget was spent (BudgetStop: the
	// budget it had then), and the job gives it no larger one.
	Spent      bool
	BudgetStop *int64
	Idle       time.Duration // since its last activity
	InProgress bool          // a process is working on it
}

var latestRun = db.Prepare[latestRunParams]("LatestRun")

// LatestRun returns the latest run of the job named name, or nil.
func LatestRun(ctx context.Context, q db.Querier, job *jobfile.Job) (*PriorRun, error) {
	var r PriorRun
	var idle float64
	err := latestRun.QueryRow(ctx, q, latestRunParams{JobName: job.Name, LeaseTimeout: time.Duration(job.Limits.LeaseTimeout)}).
		Scan(&r.ID, &r.State, &r.Fingerprint, &r.Billed, &r.BudgetStop, &idle, &r.InProgress)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("latest run of job %q: %w", job.Name, err)
	}
	r.Idle = time.Duration(idle * float64(time.Second)).Round(time.Second)
	// The job's max_credits (or --max-credits) is the budget a continued
	// run takes; without one it keeps its own.
	r.Spent = r.BudgetStop != nil && (job.Limits.MaxCredits == nil || *job.Limits.MaxCredits <= *r.BudgetStop)
	return &r, nil
}

// Decide says what `crawler run JOB` does given the job's latest run
// (nil: none): the action, and, when an unfinished run is not continued,
// why it is abandoned ("" when it is not). forceNew is --new-run.
//
//   - no run, or the latest is done or abandoned: a new run (a finished
//     run is never continued: tomorrow's harvest is a new run);
//   - the latest is in progress (a live lease, or just created): join it,
//     whatever its age; ErrJobChanged when its fingerprint differs;
//     with forceNew a new run beside it (it is not abandoned);
//   - the latest is interrupted (stopped, failed, or running with no live
//     lease: killed): continue it if it was active within resume_within
//     and has the job's fingerprint; otherwise, or with forceNew, abandon
//     it and start a new run. A run that stopped because its budget was
//     spent, and that the job gives no larger budget, is not continued
//     within resume_within: nothing is done (RunSpent), and after it the
//     next start is a new run, with a budget of its own.
func Decide(prev *PriorRun, fingerprint string, within time.Duration, forceNew bool) (action, abandon string, err error) {
	same := prev == nil || prev.Fingerprint == "" || prev.Fingerprint == fingerprint
	switch {
	case prev == nil || prev.State == "done" || prev.State == "abandoned":
		return RunNew, "", nil
	case prev.InProgress && forceNew:
		return RunNew, "", nil
	case prev.InProgress && !same:
		return "", "", fmt.Errorf("%w: run %d of this job is in progress with a different definition (seeds, expand, max_depth or page limits): "+
			"wait for it to end, stop it, or start a separate run with --new-run", ErrJobChanged, prev.ID)
	case prev.InProgress:
		return RunJoin, "", nil
	case forceNew:
		return RunNew, "superseded by run %d (--new-run)", nil
	case !same:
		return RunNew, "superseded by run %d: the job's seeds, expand, max_depth or page limits changed", nil
	case prev.Idle > within:
		return RunNew, fmt.Sprintf("not continued: no activity for %s, longer than resume_within %s; superseded by run %%d", prev.Idle, within), nil
	case prev.Spent:
		return RunSpent, "", nil
	}
	return RunContinue, "", nil
}

var lockJob = db.Prepare[db.JobArg]("LockJob")

var abandonRun = db.Prepare[abandonRunParams]("AbandonRun")

// FindOrCreateRun picks the run `crawler run JOB` works on (see Decide)
// and records the choice: a new run with its seed tasks, or the chosen run
// marked running again. Every process starting the job serializes here on
// an advisory lock keyed by the job name, so two overlapping starts never
// create two runs: the second sees the first's run, in progress, and joins
// it. With the job file's limits.max_credits set (or --max-credits), a
// continued or joined run takes it as its budget; otherwise it keeps its own.
func FindOrCreateRun(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, forceNew bool) (RunChoice, error) {
	fp := Fingerprint(job)
	var ch RunChoice
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ch = RunChoice{}
		if _, err := lockJob.Exec(ctx, tx, db.JobArg{JobName: job.Name}); err != nil {
			return fmt.Errorf("lock job %q: %w", job.Name, err)
		}
		prev, err := LatestRun(ctx, tx, job)
		if err != nil {
			return err
		}
		action, abandon, err := Decide(prev, fp, time.Duration(job.ResumeWithin), forceNew)
		if err != nil {
			return err
		}
		ch.Action = action
		if action == RunSpent {
			ch.RunID, ch.Idle, ch.Billed, ch.BudgetStop = prev.ID, prev.Idle, prev.Billed, *prev.BudgetStop
			return nil // nothing changes: resume_within runs from the stop
		}
		if action != RunNew {
			ch.RunID, ch.Idle = prev.ID, prev.Idle
			if _, err := resumeRun.Exec(ctx, tx, resumeRunParams{RunID: prev.ID, JobName: job.Name}); err != nil {
				return fmt.Errorf("resume run %d: %w", prev.ID, err)
			}
			if job.Limits.MaxCredits != nil {
				if err := budget.SetMaxCredits(ctx, tx, prev.ID, job.Limits.MaxCredits); err != nil {
					return err
				}
			}
			return nil
		}
		if ch.RunID, err = createRunTx(ctx, tx, job, fp, job.SeedTasks()); err != nil {
			return err
		}
		if abandon != "" {
			ch.Abandoned, ch.AbandonReason = prev.ID, fmt.Sprintf(abandon, ch.RunID)
			if _, err := abandonRun.Exec(ctx, tx, abandonRunParams{RunID: prev.ID, Reason: ch.AbandonReason}); err != nil {
				return fmt.Errorf("abandon run %d: %w", prev.ID, err)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrJobChanged) {
		err = fmt.Errorf("find or create the run of job %q: %w", job.Name, err)
	}
	return ch, err
}
