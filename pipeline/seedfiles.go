package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
)

// Seeding a run from its job's seed files (docs/seed-files.md). A run is
// created with its inline seeds and, when the job has seed files, marked
// seeds_pending; SeedFiles then reads the files (validated when the job
// was loaded) in batches of SeedBatch values. Each batch's tasks and the
// byte offset the files were read to commit in one transaction, so a
// seeding killed at any point goes on from the last batch committed: no
// value is lost, and the frontier's uniqueness (run, kind, key) keeps a
// value seeded twice (a duplicate line, a batch two processes raced for)
// one task. Memory holds one batch, whatever the files' size.

// SeedBatch is how many values of a seed file go into one transaction:
// large enough that a 2-million-line file seeds in seconds, small enough
// that a batch is a few MB and a kill loses little work.
const SeedBatch = 10_000

type seedProgressParams struct {
	RunID   int64 `db:"run_id"`
	Pending bool  `db:"pending"`
	File    int32 `db:"file"`
	Offset  int64 `db:"offset"`
}

var (
	markSeedsPending = db.Prepare[db.RunArg]("MarkSeedsPending")
	seedProgress     = db.Prepare[db.RunArg]("SeedProgress")
	lockSeedProgress = db.Prepare[db.RunArg]("LockSeedProgress")
	setSeedProgress  = db.Prepare[seedProgressParams]("SetSeedProgress")
)

// ErrSeedFilesChanged: the run's seeding is not finished and the job's
// seed files are not those it started with, so the recorded offsets mean
// nothing in them.
var ErrSeedFilesChanged = errors.New("seed files changed")

// SeedFiles adds the tasks of the job's seed files that are not yet in run
// runID (none when it is fully seeded) and says how many values it read.
// Several processes may call it on one run: batches take turns on the
// run's row. log, when set, hears of progress every few seconds.
func SeedFiles(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, runID int64, log *slog.Logger) (int64, error) {
	return seedFiles(ctx, pool, job, runID, log, SeedBatch, -1)
}

// seedFiles is SeedFiles in batches of batch values, stopping after
// batches of them when batches >= 0 (tests: a seeding killed there).
func seedFiles(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, runID int64, log *slog.Logger, batch, batches int) (int64, error) {
	var pending bool
	var file int32
	var offset int64
	var fp string
	if err := seedProgress.QueryRow(ctx, pool, db.RunArg{RunID: runID}).Scan(&pending, &file, &offset, &fp); err != nil {
		return 0, fmt.Errorf("seed progress of run %d: %w", runID, err)
	}
	if !pending {
		return 0, nil
	}
	if fp != "" && fp != Fingerprint(job) {
		return 0, fmt.Errorf("%w: run %d is still being seeded from files other than the job file's (its fingerprint differs); "+
			"restore the files it started with, or start a new run with --new-run", ErrSeedFilesChanged, runID)
	}
	s := &seeder{job: job, runID: runID, files: job.Seeds.FileList(), log: log, size: batch, started: time.Now(), logged: time.Now()}
	defer s.close()
	for n := 0; n != batches; n++ {
		done, err := s.batch(ctx, pool)
		if err != nil {
			return s.values, fmt.Errorf("seed run %d from files: %w", runID, err)
		}
		if done {
			if log != nil && s.values > 0 {
				log.Info("seeded from files", "values", s.values, "took", time.Since(s.started).Round(time.Millisecond))
			}
			return s.values, nil
		}
	}
	return s.values, nil
}

// seeder is one process's seeding of a run: the file it has open, read up
// to where the run's progress says (or it reopens it there).
type seeder struct {
	job     *jobfile.Job
	runID   int64
	files   []*kinds.SeedFile
	log     *slog.Logger
	size    int // values per batch
	r       *kinds.SeedReader
	at      int // index of the file r reads
	values  int64
	started time.Time
	logged  time.Time
}

func (s *seeder) close() {
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
}

// batch commits the next batch of values and the progress past it; done
// when the run has no seeding left.
func (s *seeder) batch(ctx context.Context, pool *pgxpool.Pool) (done bool, err error) {
	var read int64
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		done, read = false, 0
		var p seedProgressParams
		p.RunID = s.runID
		if err := lockSeedProgress.QueryRow(ctx, tx, db.RunArg{RunID: s.runID}).Scan(&p.Pending, &p.File, &p.Offset); err != nil {
			return err
		}
		if !p.Pending {
			done = true
			return nil
		}
		if int(p.File) >= len(s.files) {
			return fmt.Errorf("the run records seed file %d; the job has %d", p.File, len(s.files))
		}
		// Another process, or a failed commit, may have moved the run on:
		// read from where it says.
		if s.r == nil || s.at != int(p.File) || s.r.Offset() != p.Offset {
			s.close()
			r, err := s.files[p.File].Open(p.Offset)
			if err != nil {
				return err
			}
			s.r, s.at = r, int(p.File)
		}
		f := s.files[p.File]
		tasks := make([]kinds.NewTask, 0, s.size)
		eof := false
		for read < int64(s.size) {
			v, line, err := s.r.Next()
			if errors.Is(err, io.EOF) {
				eof = true
				break
			}
			if err != nil {
				return fmt.Errorf("%s:%d: %s: %w", f.Name(), line, f.Key(), err)
			}
			if msg := f.Invalid(v); msg != "" {
				return fmt.Errorf("%s: %s: %s: the file changed since the job was loaded", f.Name(), f.Key(), msg)
			}
			tasks = append(tasks, f.Tasks(s.job, v)...)
			read++
		}
		p.Offset = s.r.Offset()
		if eof {
			s.close()
			p.File, p.Offset = p.File+1, 0
			p.Pending = int(p.File) < len(s.files)
		}
		if err := frontier.AddTasks(ctx, tx, s.runID, tasks); err != nil {
			return err
		}
		_, err := setSeedProgress.Exec(ctx, tx, p)
		return err
	})
	if err != nil {
		s.close() // the reader is past what was committed
		return false, err
	}
	s.values += read
	if s.log != nil && time.Since(s.logged) >= 10*time.Second {
		s.logged = time.Now()
		s.log.Info("seeding from files", "values", s.values, "file", s.files[min(s.at, len(s.files)-1)].Name())
	}
	return done, nil
}
