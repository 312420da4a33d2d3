package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/plan"
	"github.com/socialcrawl/crawler/retention"
	"github.com/socialcrawl/crawler/runs"
	"github.com/socialcrawl/crawler/sources"
)

// Workload 15: the cost of each command against the history a job
// accumulates when it runs every night for a year. For each history size
// (1, 30 and 365 runs of one job) a fresh database is filled with a
// synthetic history written by a few INSERT ... SELECT generate_series
// statements at a nightly run's realistic sizes (~3,000 tasks, two
// processes, ~60 samples, ~1,000 profile and video snapshots; the accounts,
// videos and follow edges accumulate over the runs), then each command is
// timed (median of several repetitions, taken in rounds over the sizes so
// that the shared machine's load weighs on all alike). A command whose
// statements read the current run or a bounded window through an index
// costs the same at 365 runs as at 1: its ratio to the 1-run time is the
// figure, held to 1.5 at the largest size.

// historyJob is the job the history is of, and the one the run command
// measures: the same name, so the history's reuse lookups (refresh_after,
// stop_at_seen) and the latest-run lookup apply.
const historyJob = "bench-history"

// historySeeds is the number of seed profiles of the job (each with a
// followers and a following list).
const historySeeds = 30

// Per synthetic run: the samples of each of its two processes.
const histSamples = 30

// histFill sizes a synthetic history: per run, the depth-1 profiles found
// in the seed lists (each with a followers and a following list: the
// run's tasks are the 30 seeds, their 60 lists and these, see
// fillHistory) and the profile and video snapshots; the follow edges
// stored at the least (they grow with the history).
type histFill struct {
	profiles, snapshots, minEdges int
}

// tasksPerRun is the number of tasks of each synthetic run.
func (f histFill) tasksPerRun() int { return 3*historySeeds + 3*f.profiles }

type historySizes struct {
	runs     []int // history sizes, the first is the reference
	reps     int   // repetitions of each read command
	runReps  int   // repetitions of the run command
	runPages int   // pages the run command commits per repetition
	listRuns int   // runs the runs command lists (crawler runs' --limit default, 20)
	// scaledRuns is the history (one of runs, at least 2) whose entity
	// tables are also filled at scale times their rows, for the report.
	scaledRuns, scale int
	fill              histFill
	// vacuumSchemas: VACUUM ANALYZE only these schemas' tables, not the
	// whole database (nil), whose catalogs cost the server ~1 s of CPU
	// each time, more than a smoke's rows.
	vacuumSchemas []string
}

// vacuum runs VACUUM ANALYZE on the database of q, as hs says.
func (hs historySizes) vacuum(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}) error {
	if hs.vacuumSchemas == nil {
		_, err := q.Exec(ctx, "VACUUM ANALYZE")
		return err
	}
	var tables string
	err := q.QueryRow(ctx, `SELECT string_agg(c.oid::regclass::text, ', ') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname = ANY($1)`, hs.vacuumSchemas).Scan(&tables)
	if err == nil {
		_, err = q.Exec(ctx, "VACUUM ANALYZE "+tables)
	}
	return err
}

func (e *env) historySizes() historySizes {
	if e.cfg.Smoke {
		// 7 runs: the smallest history whose prune keeps 2 days, as the
		// full one's does (1 day: the next night's prune would be of 0).
		// A tenth of a night's rows: the commands' figures are the same
		// computation, and the fill, its VACUUM and the prune cost the
		// server a tenth of their ~5 s of CPU.
		return historySizes{runs: []int{1, 2, 7}, reps: 3, runReps: 1, runPages: 20, listRuns: 3, scaledRuns: 2, scale: 3,
			fill: histFill{profiles: 97, snapshots: 100, minEdges: 1000}, vacuumSchemas: []string{"crawl", "shortvideo", "photosocial"}}
	}
	return historySizes{runs: []int{1, 30, 365}, reps: 9, runReps: 3, runPages: 150, listRuns: 20, scaledRuns: 30, scale: 100,
		fill: histFill{profiles: 970, snapshots: 1000, minEdges: 10000}}
}

// historyCommands are the commands timed, in the order of the figures.
// listsRuns marks the runs command, whose output is the same only from
// historySizes.listRuns runs on (it lists min(history, listRuns) runs):
// its figures are ratios to the time at the first size with at least that
// many runs, so that equal outputs are compared; a smaller history is
// reported, not compared. comparesPrevious names what a command compares
// with the job's previous run, which the 1-run history does not have: its
// work is the same only from 2 runs on, so its ratios are to the first
// history that has a previous run (the 1-run time is reported, not
// compared). The others are ratios to 1 run.
var historyCommands = []struct {
	name, what       string
	listsRuns        bool
	comparesPrevious string
}{
	{"run", "run start: ms per committed page over the first pages of a new run (FindOrCreateRun with its seeds, then the pages' leases and commits, reuse lookups on)", false, ""},
	{"sampler", "the sampler's statement (RecordSample: a process's counters and the run's tasks by state)", false, ""},
	{"status", "crawler status (LoadStatus, LoadCredits, LoadProcesses, LoadDrift, LoadSavings of the latest run)", false, "the schema drift"},
	{"runs", "crawler runs (the latest %d runs)", true, ""},
	{"report", "crawler report of the latest run (LoadReport)", false, "the follow lists' edges gained and lost since their previous complete walk, the top movers and follower moves, the schema drift"},
	{"plan", "crawler plan of the job (plan.Make in a read-only transaction)", false, ""},
}

// historyRef is the index in sizes of the reference of a command whose
// output is the same from equalFrom runs on: the first size with at least
// that many, else the largest.
func historyRef(sizes []int, equalFrom int) int {
	for i, n := range sizes {
		if n >= equalFrom {
			return i
		}
	}
	return len(sizes) - 1
}

func runHistory(ctx context.Context, e *env) (*outcome, error) {
	hs := e.historySizes()
	out := &outcome{setup: fmt.Sprintf("per history size (%s nightly runs of one job): a fresh migrated database, filled by INSERT ... SELECT generate_series with a synthetic history: "+
		"per run %d tasks (%d seed profiles, their followers and following lists ended end, page_limit or stop_at_seen, %d profiles found in them, mostly done, some skipped fresh, a few failed, and their lists, a third skipped 404), parent_id links, "+
		"2 processes, %d samples, 3 endpoints of credit usage, 120 answer key paths, %d profile and %d video snapshots; accounts and videos grow to ~20,000 and follow edges to ~200,000 at 365 runs; VACUUM ANALYZE. "+
		"Then each command is timed, median of %d repetitions (the run command: %d new runs of %d pages each against the sandbox, 4 workers, no latency, refresh_after and stop_at_seen on), "+
		"all histories filled first and timed in rounds (each repetition times every size, in a rotating order), so a change of the shared machine's load falls on every size alike. "+
		"Each figure is the median time and its ratio to the time with 1 run (crawler runs: with the first history of at least %d runs, the first whose output, %d runs, is the same as at the larger ones; crawler status and report: with the first history whose latest run has a previous run to compare with); the aim holds the ratio at the largest history. "+
		"Last, the %d-run history (its latest run one of the run command's) is vacuumed, ANALYZEd and copied, the copy's shortvideo.users, follows and videos get %d times their rows more, last seen by earlier runs, "+
		"and the report of the latest run is timed on both copies in alternating rounds (median of %d each).",
		joinInts(hs.runs), hs.fill.tasksPerRun(), historySeeds, hs.fill.profiles, 2*histSamples, hs.fill.snapshots, hs.fill.snapshots, hs.reps, hs.runReps, hs.runPages,
		hs.listRuns, hs.listRuns, hs.scaledRuns, hs.scale-1, hs.reps)}
	up, err := newUpstream(sandbox.Config{}, false)
	if err != nil {
		return out, err
	}
	defer up.close()
	job, err := jobfile.Parse(historyJob+".yaml", []byte(historyJobYAML(up.url)))
	if err != nil {
		return out, err
	}
	// Every history is filled first, then the commands are timed in
	// rounds over the sizes: a change of the machine's load (shared, two
	// cores) falls on every size alike, not on the one measured then.
	pools := make([]*pgxpool.Pool, len(hs.runs))
	dsns := make([]string, len(hs.runs))
	defer func() {
		for _, p := range pools {
			if p != nil {
				p.Close()
			}
		}
	}()
	for i, n := range hs.runs {
		begin := time.Now()
		dsn, err := e.freshDB(ctx, fmt.Sprintf("hist%d", n))
		if err != nil {
			return out, err
		}
		dsns[i] = dsn
		if pools[i], err = e.pool(ctx, dsn, job.Limits.Workers); err != nil {
			return out, err
		}
		if err := fillHistory(ctx, pools[i], job, n, hs); err != nil {
			return out, fmt.Errorf("history of %d runs: %w", n, err)
		}
		e.log.Info("history filled", "runs", n, "took", time.Since(begin).Round(time.Millisecond))
	}
	begin := time.Now()
	times, details, err := measureHistory(ctx, pools, job, hs)
	if err != nil {
		return out, err
	}
	e.log.Info("histories measured", "took", time.Since(begin).Round(time.Millisecond))
	// crawler prune last, on the largest history: it removes most of it.
	begin = time.Now()
	pf, err := measurePrune(ctx, pools[len(pools)-1], hs.runs[len(hs.runs)-1])
	if err != nil {
		return out, fmt.Errorf("history of %d runs: prune: %w", hs.runs[len(hs.runs)-1], err)
	}
	e.log.Info("prune measured", "took", time.Since(begin).Round(time.Millisecond))
	for _, c := range historyCommands {
		what, equalFrom := c.what, 1
		switch {
		case c.listsRuns:
			what, equalFrom = fmt.Sprintf(c.what, hs.listRuns), hs.listRuns
		case c.comparesPrevious != "":
			equalFrom = 2
		}
		ri := historyRef(hs.runs, equalFrom)
		ref, refRuns := times[c.name][ri], plural(hs.runs[ri], "run")
		for i, n := range hs.runs {
			t := times[c.name][i]
			ratio := float64(t) / float64(max(ref, time.Microsecond))
			f := Figure{
				Name:   fmt.Sprintf("%s, %d runs of history: time (ratio to %s)", c.name, n, refRuns),
				Value:  ratio,
				Text:   fmt.Sprintf("%s ms (×%.2f)", formatValue(ms(t)), ratio),
				Detail: fmt.Sprintf("%s: %s; %s: %s ms", what, details[c.name][i], refRuns, formatValue(ms(ref))),
			}
			switch {
			case i < ri && c.comparesPrevious != "":
				f.Text = fmt.Sprintf("%s ms (not compared)", formatValue(ms(t)))
				f.Detail += fmt.Sprintf("; not compared: with %s of history the latest run has no previous run and compares nothing (%s), "+
					"so the ratios are to %s, the first history whose latest run has one (ratio to %s: ×%.2f)",
					plural(n, "run"), c.comparesPrevious, refRuns, plural(n, "run"), float64(times[c.name][len(hs.runs)-1])/float64(max(t, time.Microsecond)))
			case i < ri:
				f.Text = fmt.Sprintf("%s ms (not compared)", formatValue(ms(t)))
				f.Detail += fmt.Sprintf("; not compared: with %s of history its output is %s, from %d runs on it is %d runs, "+
					"so the ratios are to %s, the first history with equal output", plural(n, "run"), plural(min(n, equalFrom), "run"), equalFrom, equalFrom, refRuns)
			}
			if i == len(hs.runs)-1 {
				f.Aim = Aim{Op: "<=", Bound: 1.5, Text: "ratio ≤ 1.5"}
				f.Why = "a statement that reads every run of the job, or scans a table that grows with the history, costs in proportion to the history; one that reads the current run or a bounded window through an index does not."
			}
			out.figures = append(out.figures, f)
		}
	}
	out.figures = append(out.figures, pf...)
	si := slices.Index(hs.runs, hs.scaledRuns)
	pools[si].Close() // the scaled copy is made from it: no connection may be open
	pools[si] = nil
	sf, err := measureScaledReport(ctx, e, hs, dsns[si], job.Limits.Workers)
	if err != nil {
		return out, fmt.Errorf("history of %d runs, entity tables x%d: %w", hs.scaledRuns, hs.scale, err)
	}
	out.figures = append(out.figures, sf)
	return out, nil
}

// measureScaledReport times the report of the latest run on the history
// of hs.scaledRuns runs at dsn and on a copy of it whose entity tables
// (shortvideo.users, follows, videos) get hs.scale - 1 times their rows
// more, seen last by the runs before the latest (a long history of other
// accounts, edges and videos): the report reads what its run saw, through
// indexes, whatever the tables hold. The history is vacuumed and ANALYZEd
// before it is copied, as autovacuum leaves it after the run command's
// runs: both copies plan with the same statistics of everything but the
// entity tables (a run's tasks that ANALYZE has not seen yet are estimated
// at one row, a plan of its own), and neither holds the dead rows of the
// runs' upserts (the copy's entity tables are vacuumed once scaled: only
// the original would). Median of hs.reps each, timed in rounds, each round
// timing both copies in alternating order, so that a change of the
// machine's load falls on both alike.
func measureScaledReport(ctx context.Context, e *env, hs historySizes, dsn string, workers int) (Figure, error) {
	one, err := e.pool(ctx, dsn, workers)
	if err != nil {
		return Figure{}, err
	}
	err = hs.vacuum(ctx, one)
	one.Close()
	if err != nil {
		return Figure{}, err
	}
	scaledDSN, err := e.cloneDB(ctx, fmt.Sprintf("hist%dx%d", hs.scaledRuns, hs.scale), dsn)
	if err != nil {
		return Figure{}, err
	}
	var pools [2]*pgxpool.Pool
	for i, u := range []string{dsn, scaledDSN} {
		if pools[i], err = e.pool(ctx, u, workers); err != nil {
			return Figure{}, err
		}
		defer pools[i].Close()
	}
	conn, err := pools[1].Acquire(ctx) // one session: scale_base is a temporary table
	if err != nil {
		return Figure{}, err
	}
	for i, s := range scaleSQL {
		if _, err := conn.Exec(ctx, s, pgx.NamedArgs{"n": hs.scaledRuns, "k": hs.scale - 1}); err != nil {
			conn.Release()
			return Figure{}, fmt.Errorf("scale statement %d: %w", i, err)
		}
	}
	conn.Release()
	var rows [2]int64
	for i, p := range pools {
		if err := p.QueryRow(ctx, `SELECT (SELECT count(*) FROM shortvideo.users) + (SELECT count(*) FROM shortvideo.follows) + (SELECT count(*) FROM shortvideo.videos)`).Scan(&rows[i]); err != nil {
			return Figure{}, err
		}
		// One untimed call warms the connection's prepared statements
		// and the cache, as in measureHistory.
		if _, err := runs.LoadReport(ctx, p, 0); err != nil {
			return Figure{}, err
		}
	}
	var ts [2][]time.Duration
	for rep := range hs.reps {
		for k := range 2 {
			i := (rep + k) % 2
			t0 := time.Now()
			if _, err := runs.LoadReport(ctx, pools[i], 0); err != nil {
				return Figure{}, err
			}
			ts[i] = append(ts[i], time.Since(t0))
		}
	}
	t1, tx := median(ts[0]), median(ts[1])
	ratio := float64(tx) / float64(max(t1, time.Microsecond))
	return Figure{
		Name:  fmt.Sprintf("report, %d runs of history, entity tables x%d: time (ratio to x1)", hs.scaledRuns, hs.scale),
		Value: ratio,
		Text:  fmt.Sprintf("%s ms (×%.2f)", formatValue(ms(tx)), ratio),
		Detail: fmt.Sprintf("crawler report of the latest run (LoadReport), median of %d, the two copies timed in alternating rounds: %s ms (min %s, max %s) with shortvideo.users, follows and videos at %d rows, "+
			"%s ms (min %s, max %s) at %d in the copy it was made from (x%d: the rows added last seen by earlier runs)",
			hs.reps, formatValue(ms(tx)), formatValue(ms(slices.Min(ts[1]))), formatValue(ms(slices.Max(ts[1]))), rows[1],
			formatValue(ms(t1)), formatValue(ms(slices.Min(ts[0]))), formatValue(ms(slices.Max(ts[0]))), rows[0], hs.scale),
		Aim: Aim{Op: "<=", Bound: 1.5, Text: "ratio ≤ 1.5"},
		Why: "a statement that scans an entity table costs in proportion to everything ever stored; the report reads the rows the run saw through indexes (last_seen_run, the lists' keys).",
	}, nil
}

// scaleSQL adds @k times the entity rows of a history of @n runs (n >= 2):
// accounts, edges among them and videos, each last seen by one of the runs
// before the latest (first seen by run 1), none by the latest.
var scaleSQL = []string{
	`CREATE TEMP TABLE scale_base AS SELECT (SELECT count(*) FROM shortvideo.users) AS u, (SELECT count(*) FROM shortvideo.follows) AS e,
       (SELECT count(*) FROM shortvideo.videos) AS v`,
	`INSERT INTO shortvideo.users (unique_id, nickname, raw, first_seen_run, last_seen_run)
SELECT 'x' || a, 'x' || a, '{}', 1, 1 + a % (@n::int - 1)
FROM scale_base, generate_series(0, @k::int * u - 1) a`,
	`INSERT INTO shortvideo.follows (follower, followee, raw, first_seen_run, last_seen_run)
SELECT 'x' || (g.i % (@k::int * b.u)), 'x' || (g.i / (@k::int * b.u)), '{}', 1, 1 + g.i % (@n::int - 1)
FROM scale_base b, generate_series(0, @k::int * b.e - 1) g(i)`,
	`INSERT INTO shortvideo.videos (video_id, author_unique_id, raw, first_seen_run, last_seen_run)
SELECT (8000000000000000000 + g.i)::text, 'x' || g.i, '{}', 1, 1 + g.i % (@n::int - 1)
FROM scale_base b, generate_series(0, @k::int * b.v - 1) g(i)`,
	`VACUUM ANALYZE shortvideo.users, shortvideo.follows, shortvideo.videos`,
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// plural is "1 run", "30 runs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// historyHandles are the seed profiles of the job: sandbox accounts with
// 5,000 followers and 300 followed.
func historyHandles() []string {
	h := make([]string, historySeeds)
	for i := range h {
		h[i] = fmt.Sprintf("hs%02d_f5000_g300", i)
	}
	return h
}

func historyJobYAML(baseURL string) string {
	return fmt.Sprintf(`name: %s
api:
  base_url: %s
  key_env: CRAWLER_API_KEY
limits:
  workers: 4
  max_pages: 5
seeds:
  shortvideo:
    profiles: [%s]
expand:
  followers: {max_pages: 5, stop_at_seen: true}
  following: {max_pages: 5, stop_at_seen: true}
  follower_profiles: {}
reuse:
  refresh_after: 20h
`, historyJob, baseURL, strings.Join(historyHandles(), ", "))
}

// fillHistory writes n nightly runs of job, run i started i-n-1 days ago
// and lasting 40 minutes, of the sizes of hs.fill. Run ids are 1..n, task
// ids (r-1)*hs.fill.tasksPerRun()+1.. .
func fillHistory(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, n int, hs historySizes) error {
	fill := hs.fill
	spec, err := json.Marshal(job)
	if err != nil {
		return err
	}
	handles := historyHandles()
	secs := make([]string, len(handles))
	for i, h := range handles {
		secs[i] = secUIDOf(h)
	}
	// The accounts, videos and edges stored grow with the history: ~20,000
	// accounts and videos and ~200,000 edges after a year.
	accounts := 1000 + 19000*n/365
	edges := max(fill.minEdges, 200000*n/365)
	args := pgx.NamedArgs{"n": n, "job_name": job.Name, "job": spec, "fp": pipeline.Fingerprint(job),
		"handles": handles, "secs": secs, "u": accounts, "e": edges,
		"tpr": fill.tasksPerRun(), "p1": 3*historySeeds + fill.profiles, "snaps": fill.snapshots}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// The rows are consistent by construction: as a superuser (the
	// harness's own cluster) the foreign keys' triggers are skipped, which
	// halves the time to write a year. Elsewhere they run.
	if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err == nil {
		defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "RESET session_replication_role") }()
	}
	for i, s := range historySQL {
		if _, err := conn.Exec(ctx, s, args); err != nil {
			return fmt.Errorf("statement %d (%s): %w", i, strings.Fields(s)[2], err)
		}
	}
	// Analyzed and vacuumed, as autovacuum leaves a year-old database.
	return hs.vacuum(ctx, conn)
}

// historySQL fills the history; the named arguments are fillHistory's.
// acct(a) is 'u' || a 15-hex-digit hash, as the sandbox names accounts.
// A run's rows are written run by run (ORDER BY r): they lie together, as
// a run writes them in its night. Without the order, the planner's nested
// loop wrote a seed's rows of every run together, and a run's seed tasks
// lay on 90 pages spread over the whole table at 365 runs (on 6 at 30):
// every read of the run's tasks touched them, a cost of the synthetic
// layout, not of the history.
var historySQL = []string{
	`INSERT INTO crawl.runs (id, job_name, job, state, started_at, finished_at, fingerprint, credits_billed, credits_committed)
SELECT r, @job_name, @job, 'done', now() - (@n::int - r + 1) * interval '1 day',
       now() - (@n::int - r + 1) * interval '1 day' + interval '40 minutes', @fp, 2600 + r % 50, 2600 + r % 50
FROM generate_series(1, @n::int) r`,
	`SELECT setval('crawl.runs_id_seq', @n::int)`,
	// Seed profiles: i 0..29.
	`INSERT INTO crawl.tasks (id, run_id, kind, key, depth, state, reason, outcome, pages, items, attempts, lease_owner, lease_token,
       created_at, updated_at, finished_at, refresh_after)
SELECT (r - 1) * @tpr::int + i + 1, r, 'shortvideo.profile', (@handles::text[])[i + 1], 0, 'done', 'done', 'done', 1, 1, 1,
       'bench-a:100:' || r || '#' || i, i + 1, t, t + interval '1 s', t + interval '1 s', interval '20 hours'
FROM generate_series(1, @n::int) r, generate_series(0, 29) i,
     LATERAL (SELECT now() - (@n::int - r + 1) * interval '1 day' + i * interval '800 ms' AS t) x
ORDER BY r, i`,
	// Seed lists: i 30..89, 2 per seed (followers, following), parent the
	// seed's profile. Walked whole every 7th run and in the latest (end, or
	// page_limit at 5 pages), cut short by stop_at_seen in the others.
	`INSERT INTO crawl.tasks (id, run_id, kind, key, params, depth, max_pages, parent_id, state, reason, outcome, cursor, pages, items, attempts,
       lease_owner, lease_token, created_at, updated_at, finished_at, credits_saved)
SELECT (r - 1) * @tpr::int + i + 1, r, CASE WHEN k % 2 = 0 THEN 'shortvideo.followers' ELSE 'shortvideo.following' END,
       (@secs::text[])[k / 2 + 1], jsonb_build_object('handle', (@handles::text[])[k / 2 + 1]), 0, 5, (r - 1) * @tpr::int + k / 2 + 1,
       'done', CASE WHEN NOT whole THEN 'stop_at_seen: page 1 held only entries stored by earlier runs (last full walk: run ' || greatest(1, r - r % 7) || ', 4 pages)'
                    WHEN pg = 5 THEN 'page_limit' ELSE 'end' END,
       (CASE WHEN NOT whole THEN 'done_stop_at_seen' WHEN pg = 5 THEN 'done_page_limit' ELSE 'done_end' END)::crawl.task_outcome,
       (pg * 50)::text, CASE WHEN whole THEN pg ELSE 1 END, CASE WHEN whole THEN pg * 50 - k % 7 ELSE 50 END, 1,
       'bench-a:100:' || r || '#' || i, i + 1, t, t + interval '30 s', t + interval '30 s', CASE WHEN whole THEN 0 ELSE 3 END
FROM generate_series(1, @n::int) r, generate_series(30, 89) i,
     LATERAL (SELECT i - 30 AS k, 2 + (i - 30) % 4 AS pg, r % 7 = 0 OR r = @n::int OR r = 1 AS whole,
                     now() - (@n::int - r + 1) * interval '1 day' + i * interval '800 ms' AS t) x
ORDER BY r, i`,
	// Profiles found in the seed lists: i 90..@p1-1 (1059 in a full
	// night), accounts of the pool.
	// 1 in 20 skipped as fresh, 1 in 197 failed.
	`INSERT INTO crawl.tasks (id, run_id, kind, key, depth, parent_id, state, reason, outcome, pages, items, attempts, lease_owner, lease_token,
       created_at, updated_at, finished_at, refresh_after, credits_saved)
SELECT (r - 1) * @tpr::int + i + 1, r, 'shortvideo.profile', 'u' || substr(md5('acct' || a), 1, 15), 1, (r - 1) * @tpr::int + 30 + j % 60 + 1,
       st, CASE st WHEN 'done' THEN 'done'
                   WHEN 'skipped' THEN 'fresh: within refresh_after 20h0m0s: fetched by run ' || greatest(1, r - 1) || ' at 2025-01-01T00:00:00Z'
                   ELSE '/shortvideo/profile: server_error (HTTP 502): bad gateway' END,
       (CASE st WHEN 'done' THEN 'done' WHEN 'skipped' THEN 'skipped_fresh' ELSE 'failed' END)::crawl.task_outcome,
       CASE st WHEN 'done' THEN 1 ELSE 0 END, CASE st WHEN 'done' THEN 1 ELSE 0 END, CASE st WHEN 'failed' THEN 4 ELSE 1 END,
       'bench-b:200:' || r || '#' || i, i + 1, t, t + interval '1 s', t + interval '1 s', interval '20 hours', CASE st WHEN 'skipped' THEN 1 ELSE 0 END
FROM generate_series(1, @n::int) r, generate_series(90, @p1::int - 1) i,
     LATERAL (SELECT i - 90 AS j, (r * 1009 + i - 90) % @u::int AS a,
                     CASE WHEN (i - 90) % 20 = 19 THEN 'skipped' WHEN (i - 90) % 197 = 5 THEN 'failed' ELSE 'done' END AS st,
                     now() - (@n::int - r + 1) * interval '1 day' + i * interval '800 ms' AS t) x
ORDER BY r, i`,
	// Their followers and following lists: i @p1..@tpr-1 (1060..2999 in a
	// full night), a third skipped
	// (404), the others walked to their end or their page limit.
	`INSERT INTO crawl.tasks (id, run_id, kind, key, params, depth, max_pages, parent_id, state, reason, outcome, cursor, pages, items, attempts,
       lease_owner, lease_token, created_at, updated_at, finished_at)
SELECT (r - 1) * @tpr::int + i + 1, r, CASE WHEN k % 2 = 0 THEN 'shortvideo.followers' ELSE 'shortvideo.following' END,
       'MS4wLjABAAAA' || md5('sec' || a), jsonb_build_object('handle', 'u' || substr(md5('acct' || a), 1, 15)), 1, 5,
       (r - 1) * @tpr::int + 90 + k / 2 + 1, st,
       CASE WHEN st = 'skipped' THEN 'not found: /shortvideo/user/followers: not_found (HTTP 404): no account with that secUid'
            WHEN pg = 5 THEN 'page_limit' ELSE 'end' END,
       (CASE WHEN st = 'skipped' THEN 'skipped_not_found' WHEN pg = 5 THEN 'done_page_limit' ELSE 'done_end' END)::crawl.task_outcome,
       CASE WHEN st = 'done' THEN (pg * 50)::text ELSE '' END, CASE WHEN st = 'done' THEN pg ELSE 0 END,
       CASE WHEN st = 'done' THEN pg * 50 - k % 13 ELSE 0 END, 1,
       'bench-b:200:' || r || '#' || i, i + 1, t, t + interval '5 s', t + interval '5 s'
FROM generate_series(1, @n::int) r, generate_series(@p1::int, @tpr::int - 1) i,
     LATERAL (SELECT i - @p1::int AS k, (r * 1009 + (i - @p1::int) / 2) % @u::int AS a, 1 + (i - @p1::int) % 5 AS pg,
                     CASE WHEN (i - @p1::int) % 3 = 0 THEN 'skipped' ELSE 'done' END AS st,
                     now() - (@n::int - r + 1) * interval '1 day' + i * interval '800 ms' AS t) x
ORDER BY r, i`,
	`SELECT setval('crawl.tasks_id_seq', @n::int * @tpr::int)`,
	// What FinishRun summarizes of a finished run's tasks (migration 00023),
	// when the schema has it.
	`DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'crawl' AND table_name = 'runs' AND column_name = 'entries_per_page') THEN
        UPDATE crawl.runs r SET entries_per_page = s.e, credits_saved = s.c
        FROM (SELECT run_id, coalesce(max(ceil(items::numeric / pages)) FILTER (WHERE pages > 1), 0)::bigint AS e,
                     coalesce(sum(credits_saved), 0)::bigint AS c
              FROM crawl.tasks GROUP BY run_id) s
        WHERE s.run_id = r.id;
    END IF;
END $$`,
	`INSERT INTO crawl.run_processes (run_id, owner, crawler_version, started_at, finished_at, state, pages, rows_written, requests, rate_limited)
SELECT r, o.owner, 'v1.' || (r / 30) || '.0', s, s + interval '40 minutes', 'done', 1300 + o.k, 40000 + o.k, 1700 + o.k, r % 3
FROM generate_series(1, @n::int) r, LATERAL (SELECT now() - (@n::int - r + 1) * interval '1 day' AS s) x,
     (VALUES (0, 'bench-a:100:'), (1, 'bench-b:200:')) o0(k, p), LATERAL (SELECT o0.k, o0.p || r AS owner) o`,
	`INSERT INTO crawl.run_samples (run_id, owner, at, pages, rows_written, requests, rate_limited, pause_seconds, outage_seconds, rate,
       credits_billed, credits_committed, tasks_pending, tasks_leased, tasks_done, tasks_failed, tasks_skipped)
SELECT r, o.p || r, now() - (@n::int - r + 1) * interval '1 day' + q * interval '80 s', q * 43, q * 1300, q * 56, 0, 0, 0, 0,
       q * 86, q * 86 + 4, greatest(0, @tpr::int - q * 100), 4, q * 95, q / 5, q * 4
FROM generate_series(1, @n::int) r, generate_series(1, 30) q, (VALUES ('bench-a:100:'), ('bench-b:200:')) o(p)`,
	`INSERT INTO crawl.credit_usage (run_id, endpoint, requests, billed, free, rate_limited, errors, credits_charged, credits_remaining)
SELECT r, ep, 900, 880, 0, r % 3, 20, 880, 1000000 - r * 2600
FROM generate_series(1, @n::int) r, unnest(ARRAY['/shortvideo/profile', '/shortvideo/user/followers', '/shortvideo/user/following']) ep
ORDER BY r`,
	`INSERT INTO crawl.response_keys (run_id, endpoint, key, answers)
SELECT r, ep, CASE WHEN q = 0 THEN '' ELSE 'data.field' || q END, CASE WHEN q = 0 THEN 60 ELSE 60 - q % 7 END
FROM generate_series(1, @n::int) r, unnest(ARRAY['/shortvideo/profile', '/shortvideo/user/followers', '/shortvideo/user/following']) ep,
     generate_series(0, 39) q`,
	// Accounts: the seeds and the pool. An account of the pool is seen by
	// run r when (a - 1009 r) mod u < 1000: its last sighting is among the
	// latest runs, its first is spread over the history.
	`INSERT INTO shortvideo.users (unique_id, user_id, sec_uid, nickname, profile_fetched, raw, first_seen_run, last_seen_run)
SELECT h, 'id' || h, s, h, true, jsonb_build_object('uniqueId', h), 1, @n::int
FROM unnest(@handles::text[], @secs::text[]) x(h, s)`,
	`INSERT INTO shortvideo.users (unique_id, user_id, sec_uid, nickname, profile_fetched, raw, first_seen_run, last_seen_run)
SELECT 'u' || substr(md5('acct' || a), 1, 15), 'id' || a, 'MS4wLjABAAAA' || md5('sec' || a), 'n' || a, true,
       jsonb_build_object('uniqueId', 'u' || substr(md5('acct' || a), 1, 15), 'nickname', 'n' || a), least(l, 1 + a * @n::int / @u::int), l
FROM generate_series(0, @u::int - 1) a,
     LATERAL (SELECT coalesce(max(r), 1) AS l FROM generate_series(greatest(1, @n::int - 40), @n::int) r
              WHERE ((a - r * 1009) % @u::int + @u::int) % @u::int < 1000) x`,
	`INSERT INTO shortvideo.follows (follower, followee, raw, first_seen_run, last_seen_run)
SELECT 'u' || substr(md5('acct' || f), 1, 15), 'u' || substr(md5('acct' || g), 1, 15), '{"entry": true}', least(l, 1 + e::bigint * @n::int / @e::int), l
FROM generate_series(0, @e::int - 1) e,
     LATERAL (SELECT e % @u::int AS f, (e % @u::int + 1 + (e / @u::int) * 37) % @u::int AS g, greatest(1, @n::int - e % 40) AS l) x`,
	`INSERT INTO shortvideo.user_snapshots (unique_id, run_id, follower_count, following_count, heart_count, video_count, digg_count, captured_at)
SELECT 'u' || substr(md5('acct' || ((r * 1009 + m) % @u::int)), 1, 15), r, 1000 + m + r, 300 + m % 50, 10000 + m, 40 + m % 9, 500,
       now() - (@n::int - r + 1) * interval '1 day'
FROM generate_series(1, @n::int) r, generate_series(0, @snaps::int - 1) m`,
	`INSERT INTO shortvideo.videos (video_id, author_unique_id, description, create_time, raw, first_seen_run, last_seen_run)
SELECT (7000000000000000000 + v)::text, 'u' || substr(md5('acct' || (v % @u::int)), 1, 15), 'video ' || v, now() - v * interval '1 hour',
       jsonb_build_object('id', (7000000000000000000 + v)::text), least(l, 1 + v * @n::int / @u::int), l
FROM generate_series(0, @u::int - 1) v,
     LATERAL (SELECT coalesce(max(r), 1) AS l FROM generate_series(greatest(1, @n::int - 40), @n::int) r
              WHERE ((v - r * 1013) % @u::int + @u::int) % @u::int < 1000) x`,
	`INSERT INTO shortvideo.video_snapshots (video_id, run_id, play_count, digg_count, comment_count, share_count, captured_at)
SELECT (7000000000000000000 + (r * 1013 + m) % @u::int)::text, r, 100000 + m * 7 + r * 11, 5000 + m, 100, 10,
       now() - (@n::int - r + 1) * interval '1 day'
FROM generate_series(1, @n::int) r, generate_series(0, @snaps::int - 1) m`,
}

// historySample is the parameters of the sampler's statement
// (pipeline/monitor.go), run here as a process of the latest run would.
type historySample struct {
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
	// The limit of requests in flight (migration 00052).
	InFlight         float64          `db:"in_flight"`
	ConcurrencyLimit int              `db:"concurrency_limit"`
	ConcurrencyMove  *string          `db:"concurrency_move"`
	ConcurrencyMoves map[string]int64 `db:"concurrency_moves"`
}

var historySampleStmt = db.Prepare[historySample]("RecordSample")

// measureHistory times each command on the histories in pools, in
// rounds: each repetition times every size, starting with a different one
// each round. For each command, the median per size and a line of detail.
func measureHistory(ctx context.Context, pools []*pgxpool.Pool, job *jobfile.Job, hs historySizes) (map[string][]time.Duration, map[string][]string, error) {
	reads := make([]map[string]func(context.Context) error, len(pools))
	for i, pool := range pools {
		r, err := historyReads(ctx, pool, job, hs)
		if err != nil {
			return nil, nil, fmt.Errorf("history of %d runs: %w", hs.runs[i], err)
		}
		reads[i] = r
	}
	med := map[string][]time.Duration{}
	detail := map[string][]string{}
	for _, c := range historyCommands {
		if _, ok := reads[0][c.name]; !ok {
			continue
		}
		// One untimed call warms the connection's prepared statements and
		// the cache, as a second call of the command would find them.
		for i := range pools {
			if err := reads[i][c.name](ctx); err != nil {
				return nil, nil, fmt.Errorf("history of %d runs: %s: %w", hs.runs[i], c.name, err)
			}
		}
		ts := make([][]time.Duration, len(pools))
		for rep := range hs.reps {
			for k := range pools {
				i := (rep + k) % len(pools)
				t0 := time.Now()
				if err := reads[i][c.name](ctx); err != nil {
					return nil, nil, fmt.Errorf("history of %d runs: %s: %w", hs.runs[i], c.name, err)
				}
				ts[i] = append(ts[i], time.Since(t0))
			}
		}
		for i := range pools {
			m := median(ts[i])
			med[c.name] = append(med[c.name], m)
			detail[c.name] = append(detail[c.name], fmt.Sprintf("median of %d: %s ms (min %s, max %s)", len(ts[i]), formatValue(ms(m)),
				formatValue(ms(slices.Min(ts[i]))), formatValue(ms(slices.Max(ts[i])))))
		}
	}
	// The run command last: it adds runs to the histories.
	per := make([][]time.Duration, len(pools))
	starts := make([][]string, len(pools))
	for rep := range hs.runReps {
		for k := range pools {
			i := (rep + k) % len(pools)
			d, start, err := historyRunOnce(ctx, pools[i], job, hs.runPages, rep > 0)
			if err != nil {
				return nil, nil, fmt.Errorf("history of %d runs: run: %w", hs.runs[i], err)
			}
			per[i] = append(per[i], d)
			starts[i] = append(starts[i], formatValue(ms(start)))
		}
	}
	for i := range pools {
		m := median(per[i])
		med["run"] = append(med["run"], m)
		detail["run"] = append(detail["run"], fmt.Sprintf("median of %d runs of %d pages: %s ms per page; FindOrCreateRun took %s ms",
			len(per[i]), hs.runPages, formatValue(ms(m)), strings.Join(starts[i], ", ")))
	}
	return med, detail, nil
}

// historyReads are the read commands (all but run) on the history in
// pool, as operators call them on its latest run.
func historyReads(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, hs historySizes) (map[string]func(context.Context) error, error) {
	var latest int64
	if err := pool.QueryRow(ctx, `SELECT max(id) FROM crawl.runs`).Scan(&latest); err != nil {
		return nil, err
	}
	var owner string
	if err := pool.QueryRow(ctx, `SELECT min(owner) FROM crawl.run_processes WHERE run_id = $1`, latest).Scan(&owner); err != nil {
		return nil, err
	}
	return map[string]func(context.Context) error{
		"sampler": func(ctx context.Context) error {
			var billed, committed, pending, leased, done, failed, skipped int64
			var maxCredits *int64
			return historySampleStmt.QueryRow(ctx, pool, historySample{RunID: latest, Owner: owner, Pages: 1300, Rows: 40000, Requests: 1700}).
				Scan(&billed, &committed, &maxCredits, &pending, &leased, &done, &failed, &skipped)
		},
		"status": func(ctx context.Context) error {
			st, err := runs.LoadStatus(ctx, pool, 0)
			if err != nil {
				return err
			}
			if _, err := budget.LoadCredits(ctx, pool, st.ID); err != nil {
				return err
			}
			if _, err := runs.LoadProcesses(ctx, pool, st.ID); err != nil {
				return err
			}
			if _, err := runs.LoadDrift(ctx, pool, st.ID); err != nil {
				return err
			}
			_, err = runs.LoadSavings(ctx, pool, st.ID)
			return err
		},
		"runs": func(ctx context.Context) error {
			_, err := runs.List(ctx, pool, "", int64(hs.listRuns))
			return err
		},
		"report": func(ctx context.Context) error {
			_, err := runs.LoadReport(ctx, pool, 0)
			return err
		},
		"plan": func(ctx context.Context) error {
			return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
				_, err := plan.Make(ctx, tx, job, 0, false)
				return err
			})
		},
	}, nil
}

// historyRunOnce starts the job's next run (forceNew: the previous
// measured run, stopped, is abandoned, as --new-run does) and works it
// until it has committed pages pages: the time per page from the start,
// and how long FindOrCreateRun took.
func historyRunOnce(ctx context.Context, pool *pgxpool.Pool, job *jobfile.Job, pages int, forceNew bool) (perPage, start time.Duration, err error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	ch, err := pipeline.FindOrCreateRun(ctx, pool, job, forceNew)
	if err != nil {
		return 0, 0, err
	}
	start = time.Since(t0)
	ob := &pageCounter{target: int64(pages), done: cancel}
	opts := pipeline.Options{
		Pool:      pool,
		Client:    job.ClientConfig(sources.Secret(apiKey), nil),
		Logger:    slog.New(slog.DiscardHandler),
		Grace:     time.Second,
		Observers: []pipeline.Observer{ob},
	}
	sum, err := pipeline.Run(rctx, opts, job, ch.RunID)
	at := ob.reached()
	if at.IsZero() {
		// Stopped by the target, the run may end on a canceled lookup:
		// what it did after the target is not measured.
		if err == nil {
			err = fmt.Errorf("run %d ended after %d pages, before %d (%+v)", ch.RunID, ob.n.Load(), pages, sum)
		}
		return 0, 0, err
	}
	return at.Sub(t0) / time.Duration(pages), start, nil
}

// pageCounter is an observer that calls done when target pages are
// committed, and remembers when.
type pageCounter struct {
	target int64
	done   func()
	n      atomic.Int64
	mu     sync.Mutex
	at     time.Time
}

func (p *pageCounter) Request(sources.Outcome)    {}
func (p *pageCounter) Progress(pipeline.Progress) {}
func (p *pageCounter) PageCommitted(int, time.Duration) {
	if p.n.Add(1) == p.target {
		p.mu.Lock()
		p.at = time.Now()
		p.mu.Unlock()
		p.done()
	}
}

func (p *pageCounter) reached() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

// measurePrune times crawler prune on the history of n nightly runs in
// pool, with the age rule a nightly cron gives it (--older-than 90d at 365
// runs, n/4 days in proportion): a dry run, the first prune, the same
// prune again (nothing left to do), its dry run, and the next night's
// prune (one day less: one run more). Each is timed once: the first
// changes what the others find.
func measurePrune(ctx context.Context, pool *pgxpool.Pool, n int) ([]Figure, error) {
	days := max(1, (n*90+182)/365)
	age := time.Duration(days) * 24 * time.Hour
	type step struct {
		name string
		opts retention.Options
		res  *retention.Result
		took time.Duration
	}
	steps := []*step{
		{name: "dry run", opts: retention.Options{OlderThan: age, DryRun: true}},
		{name: "first prune", opts: retention.Options{OlderThan: age}},
		{name: "second prune (nothing to do)", opts: retention.Options{OlderThan: age}},
		{name: "dry run after it", opts: retention.Options{OlderThan: age, DryRun: true}},
		{name: "next night's prune (one run more)", opts: retention.Options{OlderThan: age - 24*time.Hour}},
	}
	var leftAfterFirst string
	for i, s := range steps {
		t0 := time.Now()
		res, err := retention.Prune(ctx, pool, s.opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		s.res, s.took = res, time.Since(t0)
		if i == 1 {
			var err error
			if leftAfterFirst, err = prunedTasksLeft(ctx, pool); err != nil {
				return nil, err
			}
		}
	}
	first := steps[1]
	perRun := first.took / time.Duration(max(1, len(first.res.Runs)))
	var figs []Figure
	for i, s := range steps {
		f := Figure{
			Name:  fmt.Sprintf("prune --older-than %dd, %d runs of history: %s", days-min(i/4, 1), n, s.name),
			Value: ms(s.took), Unit: "ms",
			Detail: fmt.Sprintf("%s; runs %d (%d not pruned before), rows %d: %s", formatValue(ms(s.took))+" ms",
				len(s.res.Runs), s.res.NewlyPruned, s.res.Rows(), tableRows(s.res)),
		}
		switch i {
		case 1:
			f.Detail += "; task rows of the pruned runs left: " + leftAfterFirst
		case 2, 3, 4:
			ratio := float64(s.took) / float64(max(perRun, time.Microsecond))
			f.Value, f.Unit = ratio, ""
			f.Text = fmt.Sprintf("%s ms (×%.2f)", formatValue(ms(s.took)), ratio)
			f.Detail += fmt.Sprintf("; ratio to the first prune's time per run pruned (%s ms)", formatValue(ms(perRun)))
			// Nothing to do: less than pruning one run. One run more: a
			// run's rows and the prune's fixed statements (the runs to
			// take, the marks, a statement per table), which the first
			// prune shares out over all its runs.
			bound := 1.0
			if i == 4 {
				bound = 5
			}
			f.Aim = atMost(bound)
			f.Why = "a prune reads the runs it prunes and the tasks of the same keys that earlier prunes kept, never the runs pruned before: what it costs follows what it removes, not the history."
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// tableRows lists a prune's rows by table, the tables with rows only.
func tableRows(res *retention.Result) string {
	var parts []string
	for _, t := range res.Tables {
		if t.Rows > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t.Name, t.Rows))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// prunedTasksLeft counts the tasks of pruned runs still there, by kind
// and how they ended.
func prunedTasksLeft(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	rows, _ := pool.Query(ctx, `
		SELECT t.kind || ' ' || coalesce(t.outcome::text, t.state), count(*)
		FROM crawl.tasks t JOIN crawl.runs r ON r.id = t.run_id
		WHERE r.pruned_at IS NOT NULL GROUP BY 1 ORDER BY 2 DESC`)
	var (
		parts []string
		total int64
		what  string
		n     int64
	)
	_, err := pgx.ForEachRow(rows, []any{&what, &n}, func() error {
		parts = append(parts, fmt.Sprintf("%s %d", what, n))
		total += n
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", ")), nil
}
