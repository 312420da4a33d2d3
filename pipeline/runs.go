package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/adaptive"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/runs"
)

// The run lifecycle: a run is created with its seed tasks, resumed or
// joined by other processes, and finished by each of them (crawl.runs).
// Leasing and committing tasks is the frontier's (package frontier).

// db.RunArg is the parameter of the statements that take only a run.
type createRunParams struct {
	JobName     string `db:"job_name"`
	Job         []byte `db:"job"` // the job as JSON
	MaxCredits  *int64 `db:"max_credits"`
	Fingerprint string `db:"fingerprint"` // see Fingerprint
}

type finishRunParams struct {
	db.OwnerArg        // Owner: this process's lease owner prefix
	State       string `db:"state"`
	Reason      string `db:"reason"`
}

type resumeRunParams struct {
	RunID       int64  `db:"run_id"`
	JobName     string `db:"job_name"`
	UnlessSpent bool   `db:"unless_spent"`
	MaxCredits  *int64 `db:"max_credits"`
}

// Start records a new run of job with its seeds (its seed files too:
// SeedFiles) and budget, and returns its id.
func Start(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job) (int64, error) {
	runID, err := CreateRun(ctx, pool, job, job.SeedTasks())
	if err != nil {
		return 0, err
	}
	_, err = SeedFiles(ctx, pool, job, runID, nil)
	return runID, err
}

// CreateRun records a new run with its seed tasks in one transaction; when
// the job has seed files, the run is marked to be seeded from them
// (SeedFiles: Start and Run do).
func CreateRun(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, seeds []kinds.NewTask) (int64, error) {
	var runID int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) (err error) {
		runID, err = createRunTx(ctx, tx, job, Fingerprint(job), seeds)
		return err
	})
	return runID, err
}

var createRun = db.Prepare[createRunParams]("CreateRun")

// createRunTx is CreateRun inside tx.
func createRunTx(ctx context.Context, tx pgx.Tx, job *jobfile.Job, fingerprint string, seeds []kinds.NewTask) (int64, error) {
	spec, err := json.Marshal(job)
	if err != nil {
		return 0, err
	}
	var runID int64
	p := createRunParams{JobName: job.Name, Job: spec, MaxCredits: job.Limits.MaxCredits, Fingerprint: fingerprint}
	if err := createRun.QueryRow(ctx, tx, p).Scan(&runID); err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	if err := frontier.AddTasks(ctx, tx, runID, seeds); err != nil {
		return 0, fmt.Errorf("create run: %w", err)
	}
	if len(job.Seeds.Files) > 0 {
		if _, err := markSeedsPending.Exec(ctx, tx, db.RunArg{RunID: runID}); err != nil {
			return 0, fmt.Errorf("create run: %w", err)
		}
	}
	if job.Reuse.Adaptive {
		if err := adaptive.ScheduleRun(ctx, tx, job, runID); err != nil {
			return 0, fmt.Errorf("create run: %w", err)
		}
	}
	return runID, nil
}

var finishRun = db.Prepare[finishRunParams]("FinishRun")

var (
	runState   = db.Prepare[db.RunArg]("RunState")
	lockRunRow = db.Prepare[db.RunArg]("LockRunRow")
)

// FinishRun records the end of this process's work on a run as state (done,
// stopped, failed) and returns the state the run is in afterwards:
// "running" when other processes still work on it. "done" needs an empty
// frontier; a stop or failure is recorded only when no other process holds
// a live lease on the run, and never replaces "done".
func FinishRun(ctx context.Context, pool *pgxpool.Pool, runID int64, owner, state, reason string) (string, error) {
	var got string
	p := finishRunParams{db.OwnerArg{RunID: runID, Owner: owner + "#"}, state, frontier.CleanReason(reason)}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// The row first: FinishRun's own statement, blocked on it, would
		// check the tasks as they were before a second look sent some back.
		if _, err := lockRunRow.Exec(ctx, tx, db.RunArg{RunID: runID}); err != nil {
			return err
		}
		return finishRun.QueryRow(ctx, tx, p).Scan(&got)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		if err := runState.QueryRow(ctx, pool, db.RunArg{RunID: runID}).Scan(&got); err != nil {
			return "", fmt.Errorf("run %d state: %w", runID, err)
		}
		if got != "done" {
			got = "running"
		}
		return got, nil
	}
	if err != nil {
		return "", fmt.Errorf("set run %d state: %w", runID, err)
	}
	return got, nil
}

var otherLeases = db.Prepare[db.OwnerArg]("OtherLeases")

// FinishRunAfterDead is FinishRun for a process that stops while other
// processes hold live leases on the run (FinishRun said "running"): it
// waits while none of them shows a sign of life, until their leases lapse,
// and then records state. A process killed holding leases keeps them for
// up to leaseTimeout, and one that stops at once (its budget spent on
// arrival) would otherwise leave the run "running" with nobody left to
// end it. A holder that moves its leases on or beats its credit hold is
// alive and records the run's end itself when it stops: then, or when ctx
// ends, this returns "running". Bounded: every lease it waits for lapses
// within leaseTimeout of its holder's last sign of life.
func FinishRunAfterDead(ctx context.Context, pool *pgxpool.Pool, runID int64, owner, state, reason string, leaseTimeout time.Duration, log *slog.Logger) (string, error) {
	type life struct{ until, beat time.Time }
	seen := map[string]life{}
	for {
		rows, _ := otherLeases.Query(ctx, pool, db.OwnerArg{RunID: runID, Owner: owner + "#"})
		var holder string
		var l life
		var beat *time.Time
		var left float64        // seconds until the holder's latest lease lapses, by the server's clock
		earliest := math.Inf(1) // the least of them
		alive, n := false, 0
		if _, err := pgx.ForEachRow(rows, []any{&holder, &l.until, &left, &beat}, func() error {
			l.beat = time.Time{}
			if beat != nil {
				l.beat = *beat
			}
			if prev, ok := seen[holder]; ok && (l.until.After(prev.until) || l.beat.After(prev.beat)) {
				alive = true
			}
			if len(seen) == 0 {
				log.Info("waiting for the leases of a process that may have died to lapse before recording the run's end",
					"holder", holder, "lapse_in", time.Duration(left*float64(time.Second)).Round(time.Millisecond))
			}
			seen[holder], n = l, n+1
			earliest = min(earliest, left)
			return nil
		}); err != nil {
			return "running", fmt.Errorf("run %d leases: %w", runID, err)
		}
		switch {
		case alive:
			log.Info("another process on the run is alive; it records the run's end when it stops")
			return "running", nil
		case n == 0:
			return FinishRun(ctx, pool, runID, owner, state, reason)
		}
		// Until the earliest lapses, looking again every second (a live
		// holder's credit hold beats as often).
		wait := time.NewTimer(max(min(time.Duration(earliest*float64(time.Second))+10*time.Millisecond, time.Second, leaseTimeout/3), 10*time.Millisecond))
		select {
		case <-ctx.Done():
			wait.Stop()
			return "running", nil
		case <-wait.C:
		}
	}
}

var resumeRun = db.Prepare[resumeRunParams]("ResumeRun")

var markBudgetStop = db.Prepare[db.RunArg]("MarkBudgetStop")

var runJobName = db.Prepare[db.RunArg]("RunJobName")

// ErrSpent means a run stopped at its credit budget and was not given a
// larger one: ResumeUnlessSpent left it as it was.
var ErrSpent = errors.New("stopped at its credit budget")

// Resume marks run runID running again so this process can work on it; a
// run can be resumed after a stop or joined while another process runs it.
// The job must be the one the run was started with.
func Resume(ctx context.Context, pool *pgxpool.Pool, runID int64, jobName string) error {
	return resume(ctx, pool, resumeRunParams{RunID: runID, JobName: jobName})
}

// ResumeUnlessSpent is Resume for `crawler run --resume ID`, with the
// budget the run is to have (nil: its own): a run that stopped at its
// budget, given no larger one, is not touched and the error is ErrSpent,
// as `crawler run JOB` leaves it (its resumed_at would restart
// resume_within, and its budget_stop would be lost).
func ResumeUnlessSpent(ctx context.Context, pool *pgxpool.Pool, runID int64, jobName string, maxCredits *int64) error {
	return resume(ctx, pool, resumeRunParams{RunID: runID, JobName: jobName, UnlessSpent: true, MaxCredits: maxCredits})
}

func resume(ctx context.Context, pool *pgxpool.Pool, p resumeRunParams) error {
	runID, jobName := p.RunID, p.JobName
	tag, err := resumeRun.Exec(ctx, pool, p)
	if err != nil {
		return fmt.Errorf("resume run %d: %w", runID, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var name string
	var pruned bool
	var billed int64
	var stop *int64
	err = runJobName.QueryRow(ctx, pool, db.RunArg{RunID: runID}).Scan(&name, &pruned, &billed, &stop)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("resume run %d: %w", runID, runs.ErrNoRun)
	}
	if err != nil {
		return fmt.Errorf("resume run %d: %w", runID, err)
	}
	if name != jobName {
		return fmt.Errorf("resume run %d: it belongs to job %q, not %q", runID, name, jobName)
	}
	if pruned {
		return fmt.Errorf("resume run %d: %w (crawler prune removed its tasks): start a new run", runID, runs.ErrPruned)
	}
	if stop != nil {
		return fmt.Errorf("run %d %w (%d credits billed of %d): not resumed with the same budget", runID, ErrSpent, billed, *stop)
	}
	return fmt.Errorf("resume run %d: it changed while being resumed: try again", runID)
}

var countFailedTasks = db.Prepare[db.RunArg]("CountFailedTasks")

// CountFailed counts the failed tasks of a run.
func CountFailed(ctx context.Context, pool *pgxpool.Pool, runID int64) (int64, error) {
	var n int64
	if err := countFailedTasks.QueryRow(ctx, pool, db.RunArg{RunID: runID}).Scan(&n); err != nil {
		return 0, fmt.Errorf("count failed tasks of run %d: %w", runID, err)
	}
	return n, nil
}

var retryFailedTasks = db.Prepare[db.RunArg]("RetryFailedTasks")

// RetryFailed re-queues the failed tasks of a run (crawler run --resume ID
// --retry-failed) and says how many. A list keeps its cursor and page
// count, so it resumes at the page that failed.
func RetryFailed(ctx context.Context, pool *pgxpool.Pool, runID int64) (int64, error) {
	tag, err := retryFailedTasks.Exec(ctx, pool, db.RunArg{RunID: runID})
	if err != nil {
		return 0, fmt.Errorf("re-queue failed tasks of run %d: %w", runID, err)
	}
	return tag.RowsAffected(), nil
}
