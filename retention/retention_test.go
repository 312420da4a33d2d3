package retention_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/retention"
	"github.com/socialcrawl/crawler/runs"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.MainMigrated(m) }

const testKey = "sk-retention-test-5c1d"

// harvest runs job body (name: name) against a sandbox at world day day
// to its end, and returns the run and what it bought per endpoint.
func harvest(t *testing.T, pool *pgxpool.Pool, name string, day int64, body string) (int64, map[string]int64) {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, WorldTime: day})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	text := fmt.Sprintf("name: %s\napi:\n  base_url: %s/api\n  key_env: CRAWLER_TEST_KEY\n  max_retries: 1\n%s", name, srv.URL, body)
	job, err := jobfile.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatalf("job: %v\n%s", err, text)
	}
	ctx := context.Background()
	runID, err := pipeline.Start(ctx, pool, job)
	if err != nil {
		t.Fatal(err)
	}
	cfg := job.ClientConfig(sources.Secret(testKey), nil)
	cfg.RetryInitial, cfg.RetryMax = sources.Duration(time.Millisecond), sources.Duration(5*time.Millisecond)
	sum, err := pipeline.Run(ctx, pipeline.Options{Pool: pool, Client: cfg, PollInterval: 20 * time.Millisecond, SampleInterval: 10 * time.Millisecond}, job, runID)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if sum.State != "done" {
		t.Fatalf("run %d: %s %s", runID, sum.State, sum.Reason)
	}
	bought := map[string]int64{}
	for ep, u := range sb.Usage(testKey).ByEndpoint {
		bought[ep] = u.Billable
	}
	return runID, bought
}

func count(t *testing.T, pool *pgxpool.Pool, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// prune runs retention.Prune and fails the test on an error.
func prune(t *testing.T, pool *pgxpool.Pool, opts retention.Options) *retention.Result {
	t.Helper()
	res, err := retention.Prune(context.Background(), pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// rowsOf maps each table of res to its rows.
func rowsOf(res *retention.Result) map[string]int64 {
	m := map[string]int64{}
	for _, tc := range res.Tables {
		m[tc.Name] = tc.Rows
	}
	return m
}

// bookkeeping is every table a prune may touch, and the runs rows.
var bookkeeping = []string{"crawl.pages", "crawl.run_samples", "crawl.response_keys", "crawl.rate_members", "crawl.rate_quota", "crawl.revisit_plan",
	"crawl.tasks", "crawl.credit_usage", "crawl.run_processes", "shortvideo.user_snapshots", "shortvideo.users", "shortvideo.follows"}

// sizes counts the rows of every table of bookkeeping.
func sizes(t *testing.T, pool *pgxpool.Pool) map[string]int64 {
	m := map[string]int64{}
	for _, tb := range bookkeeping {
		m[tb] = count(t, pool, "SELECT count(*) FROM "+tb)
	}
	m["pruned runs"] = count(t, pool, "SELECT count(*) FROM crawl.runs WHERE pruned_at IS NOT NULL")
	return m
}

const archivedJob = `
archive: true
expand: {followers: {}}
seeds: {shortvideo: {profiles: [arch0_f120, arch1_f60]}}
`

// TestPruneDryRunBatchesIdempotent: four nightly runs of an archiving
// job, --keep-runs 1 --batch 3. The dry run changes nothing and reports
// what the prune then removes, row for row; every table takes as many
// batches as 3 rows go into its rows; what goes is exactly the three old
// runs' bookkeeping but each run's latest sample and the list walks of
// the run before the kept one (stop_at_seen of the kept run reads them);
// a second prune removes nothing.
func TestPruneDryRunBatchesIdempotent(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	var ids []int64
	for day := range int64(4) {
		id, _ := harvest(t, pool, "nightly", day, archivedJob)
		ids = append(ids, id)
	}
	old := ids[:3]
	want := map[string]int64{
		"crawl.pages":         count(t, pool, `SELECT count(*) FROM crawl.pages WHERE run_id = ANY($1)`, old),
		"crawl.run_samples":   count(t, pool, `SELECT count(*) - count(DISTINCT run_id) FROM crawl.run_samples WHERE run_id = ANY($1)`, old),
		"crawl.response_keys": count(t, pool, `SELECT count(*) FROM crawl.response_keys WHERE run_id = ANY($1)`, old),
		"crawl.rate_members":  count(t, pool, `SELECT count(*) FROM crawl.rate_members WHERE run_id = ANY($1)`, old),
		"crawl.rate_quota":    count(t, pool, `SELECT count(*) FROM crawl.rate_quota WHERE run_id = ANY($1)`, old),
		"crawl.revisit_plan":  count(t, pool, `SELECT count(*) FROM crawl.revisit_plan WHERE run_id = ANY($1)`, old),
		"crawl.tasks": count(t, pool, `SELECT count(*) FROM crawl.tasks WHERE run_id = ANY($1)
			AND NOT (run_id = $2 AND kind = 'shortvideo.followers')`, old, old[2]),
	}
	// Each run: 2 profiles, 3 + 2 follower pages: 7 pages, 4 tasks.
	if want["crawl.pages"] != 21 || want["crawl.tasks"] != 10 || want["crawl.run_samples"] < 3 || want["crawl.response_keys"] == 0 {
		t.Fatalf("fixture: %v", want)
	}
	before := sizes(t, pool)

	dry := prune(t, pool, retention.Options{KeepRuns: 1, Batch: 3, DryRun: true})
	if after := sizes(t, pool); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the dry run changed the database:\nbefore %v\nafter  %v", before, after)
	}
	if !slices.Equal(dry.Runs, old) || dry.NewlyPruned != 3 {
		t.Errorf("dry run: runs %v (%d new), want %v", dry.Runs, dry.NewlyPruned, old)
	}
	if got := rowsOf(dry); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dry run would remove %v, want %v", got, want)
	}

	res := prune(t, pool, retention.Options{KeepRuns: 1, Batch: 3})
	if !slices.Equal(res.Runs, old) || res.NewlyPruned != 3 {
		t.Errorf("prune: runs %v (%d new), want %v", res.Runs, res.NewlyPruned, old)
	}
	if got := rowsOf(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("prune removed %v, want %v (as the dry run said)", got, want)
	}
	for _, tc := range res.Tables {
		wantBatches := int((tc.Rows + 2) / 3)
		if tc.Name == "crawl.tasks" {
			// A batch reads 3 of a run's 4 tasks in key order, then 1:
			// 2 a run (the last run's keep its 2 followers lists, in its
			// first batch).
			wantBatches = 2 + 2 + 2
		}
		if tc.Batches != wantBatches {
			t.Errorf("%s: %d rows in %d batches, want %d", tc.Name, tc.Rows, tc.Batches, wantBatches)
		}
	}
	after := sizes(t, pool)
	for tb, n := range before {
		if after[tb] != n-want[tb] && tb != "pruned runs" {
			t.Errorf("%s: %d rows after, want %d - %d", tb, after[tb], n, want[tb])
		}
	}
	if after["pruned runs"] != 3 {
		t.Errorf("%d runs marked pruned, want 3", after["pruned runs"])
	}
	if n := count(t, pool, `SELECT count(*) FROM crawl.run_samples WHERE run_id = ANY($1)`, old); n != 3 {
		t.Errorf("%d samples left of the pruned runs, want their latest: 3", n)
	}

	again := prune(t, pool, retention.Options{KeepRuns: 1, Batch: 3})
	if again.Rows() != 0 || again.NewlyPruned != 0 || len(again.Runs) != 0 || again.Before != 3 {
		t.Errorf("second prune: %+v, want nothing read, 3 runs pruned before", again)
	}
	if fmt.Sprint(sizes(t, pool)) != fmt.Sprint(after) {
		t.Error("the second prune changed the database")
	}

	// crawler runs still lists them, marked, with their pages and credits.
	list, err := runs.List(context.Background(), pool, "nightly", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if pruned := slices.Contains(old, r.ID); (r.PrunedAt != nil) != pruned || r.Pages != 7 {
			t.Errorf("crawler runs: run %d pruned %v pages %d, want pruned %v, 7 pages", r.ID, r.PrunedAt != nil, r.Pages, pruned)
		}
	}
	// A pruned run cannot be resumed.
	if err := pipeline.Resume(context.Background(), pool, old[0], "nightly"); !errors.Is(err, runs.ErrPruned) {
		t.Errorf("resume of a pruned run: %v, want ErrPruned", err)
	}
}

const smallJob = `
expand: {}
seeds: {shortvideo: {profiles: [live0_f10]}}
`

// TestPruneLeavesLiveAndLatestRuns: of job a's runs, one has a live lease
// (a process joined it), the newest is running (started only: a prune
// reads no more of it), the one before is its latest done; job b has one old run. --older-than takes only the run
// ended long enough ago; --keep-runs 1 then only the two other old runs
// of a, and no row of the others moves.
func TestPruneLeavesLiveAndLatestRuns(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	var a []int64
	for day := range int64(4) {
		id, _ := harvest(t, pool, "a", day, smallJob)
		a = append(a, id)
	}
	b, _ := harvest(t, pool, "b", 0, smallJob)
	// The newest run of a: started (its seed task pending), never ended.
	job, err := jobfile.Parse("a.yaml", []byte("name: a\napi: {base_url: http://127.0.0.1:9/api}\n"+smallJob))
	if err != nil {
		t.Fatal(err)
	}
	running, err := pipeline.Start(ctx, pool, job)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql string
		arg any
	}{
		// A process working on a[2]: a live lease.
		{`UPDATE crawl.tasks SET state = 'leased', lease_owner = 'elsewhere:1:x#0', lease_expires_at = now() + interval '1 hour' WHERE run_id = $1`, a[2]},
		// The newest run of a is running again (resumed), since long ago.
		{`UPDATE crawl.runs SET state = 'running', finished_at = NULL, started_at = now() - interval '200 days' WHERE id = $1`, running},
		// a[0] and b ended 100 days ago.
		{`UPDATE crawl.runs SET finished_at = now() - interval '100 days' WHERE id = ANY($1)`, []int64{a[0], b}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.arg); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tasksOf := func() map[int64]int64 {
		m := map[int64]int64{}
		for _, id := range append(slices.Clone(a), b, running) {
			m[id] = count(t, pool, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1`, id)
		}
		return m
	}
	before := tasksOf()

	res := prune(t, pool, retention.Options{OlderThan: 90 * 24 * time.Hour})
	if !slices.Equal(res.Runs, a[:1]) {
		t.Errorf("--older-than 90d pruned runs %v, want %v (b is its job's latest)", res.Runs, a[:1])
	}
	res = prune(t, pool, retention.Options{KeepRuns: 1})
	if !slices.Equal(res.Runs, a[1:2]) || res.NewlyPruned != 1 || res.Before != 1 {
		t.Errorf("--keep-runs 1 pruned runs %v (%d new, %d before), want %v (1 before)", res.Runs, res.NewlyPruned, res.Before, a[1:2])
	}
	after := tasksOf()
	for id, n := range before {
		if id != a[0] && id != a[1] && after[id] != n {
			t.Errorf("run %d: %d tasks, had %d", id, after[id], n)
		}
	}
	// a[0]'s profile task is not the latest fetch of live0_f10, nor a[1]'s.
	if after[a[0]] != 0 || after[a[1]] != 0 {
		t.Errorf("pruned runs kept %d and %d tasks, want 0", after[a[0]], after[a[1]])
	}
	if n := count(t, pool, `SELECT count(*) FROM crawl.runs WHERE pruned_at IS NOT NULL`); n != 2 {
		t.Errorf("%d runs marked pruned, want 2", n)
	}
}

// reuseJob uses both reuse rules: refresh_after on the profile (fetched
// once, by the first run: freshness does not chain), stop_at_seen on its
// followers (250 + 10 a day, 50 a page) with a whole walk every 3rd run.
const reuseJob = `
reuse: {refresh_after: 20h, full_walk_every: 3}
expand: {followers: {stop_at_seen: true}}
seeds: {shortvideo: {profiles: [walker_f250_r10]}}
`

// reuseNights is what each of six nightly runs of reuseJob (days 0 to 5)
// buys per endpoint in a database no prune touches: the profile once,
// then follower pages 5 (a whole walk), 2, 2 (new followers and a known
// page), 6 (the 3rd walk is whole), 2, 2. TestPruneKeepsReuse and
// TestPruneBesideRuns compare their pruned runs with it; a control
// database harvested it for them until then (6 harvests a package run),
// always with these figures.
var reuseNights = []string{
	"map[/shortvideo/profile:1 /shortvideo/user/followers:5]",
	"map[/shortvideo/user/followers:2]",
	"map[/shortvideo/user/followers:2]",
	"map[/shortvideo/user/followers:6]",
	"map[/shortvideo/user/followers:2]",
	"map[/shortvideo/user/followers:2]",
}

// TestPruneKeepsReuse: six nightly runs of reuseJob with a prune
// (--keep-runs 1) before each run: every run buys exactly what it buys
// without prune (reuseNights), as the reuse rules say.
func TestPruneKeepsReuse(t *testing.T) {
	t.Parallel()
	pruned, _ := pgtest.Pool(t)
	removed := int64(0)
	for day := range int64(6) {
		if day > 0 {
			removed += prune(t, pruned, retention.Options{KeepRuns: 1}).Rows()
		}
		if _, p := harvest(t, pruned, "reuse", day, reuseJob); fmt.Sprint(p) != reuseNights[day] {
			t.Errorf("night %d with a prune before it bought %v, without %s", day, p, reuseNights[day])
		}
	}
	if removed == 0 {
		t.Error("the prunes removed nothing: the test proves nothing")
	}
	// Kept of the pruned runs 1-4 for reuse: the profile's only fetch
	// (run 1) and the list's last whole walk (run 4).
	kept := count(t, pruned, `SELECT count(*) FROM crawl.tasks t JOIN crawl.runs r ON r.id = t.run_id WHERE r.pruned_at IS NOT NULL`)
	if kept != 2 {
		t.Errorf("%d tasks of pruned runs kept, want 2", kept)
	}
}

// TestPruneSnapshots: --snapshots deletes the pruned runs' snapshots but
// each account's latest, so users_latest reads the same.
func TestPruneSnapshots(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	harvest(t, pool, "snap", 0, `
expand: {}
seeds: {shortvideo: {profiles: [snapx_f10, snapy_f10]}}
`)
	for day := range int64(2) {
		harvest(t, pool, "snap", day+1, `
expand: {}
seeds: {shortvideo: {profiles: [snapy_f10]}}
`)
	}
	latest := func() string {
		rows, err := pool.Query(ctx, `SELECT unique_id, follower_count, run_id FROM shortvideo.users_latest ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(v...))
		}
		return fmt.Sprint(out)
	}
	view := latest()
	if n := count(t, pool, `SELECT count(*) FROM shortvideo.user_snapshots`); n != 4 {
		t.Fatalf("%d snapshots, want 4", n)
	}
	without := prune(t, pool, retention.Options{KeepRuns: 1})
	if n := count(t, pool, `SELECT count(*) FROM shortvideo.user_snapshots`); n != 4 || rowsOf(without)["shortvideo.user_snapshots"] != 0 {
		t.Errorf("a prune without --snapshots left %d snapshots, want 4", n)
	}
	res := prune(t, pool, retention.Options{KeepRuns: 1, Snapshots: true})
	if got := rowsOf(res); got["shortvideo.user_snapshots"] != 2 || got["crawl.tasks"] != 0 {
		t.Errorf("--snapshots removed %v, want 2 user snapshots (snapy's of runs 1 and 2) and no task", got)
	}
	if n := count(t, pool, `SELECT count(*) FROM shortvideo.user_snapshots`); n != 2 {
		t.Errorf("%d snapshots left, want 2: snapx's only one and snapy's latest", n)
	}
	if got := latest(); got != view {
		t.Errorf("users_latest changed:\nbefore %s\nafter  %s", view, got)
	}
}

// TestPruneBesideRuns: prunes in a loop while the job's next run works
// (a nightly prune beside the nightly run, from cron): the run loses
// nothing and buys exactly what the same run buys in a database no prune
// touches.
func TestPruneBesideRuns(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	for day := range int64(3) {
		harvest(t, pool, "beside", day, reuseJob)
	}
	type ran struct {
		run    int64
		bought map[string]int64
	}
	done := make(chan ran)
	go func() {
		id, b := harvest(t, pool, "beside", 3, reuseJob)
		done <- ran{id, b}
	}()
	prunes := 0
	var got ran
loop:
	for {
		select {
		case got = <-done:
			break loop
		default:
			if _, err := retention.Prune(context.Background(), pool, retention.Options{KeepRuns: 1, Batch: 1}); err != nil {
				t.Error(err)
			}
			prunes++
		}
	}
	want := reuseNights[3] // the same run, no prune beside it
	if fmt.Sprint(got.bought) != want {
		t.Errorf("beside %d prunes the run bought %v, without them %v", prunes, got.bought, want)
	}
	// The profile (fresh: skipped) and its followers list (walked).
	if n := count(t, pool, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state IN ('done', 'skipped')`, got.run); n != 2 {
		t.Errorf("the run has %d ended tasks, want 2", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM crawl.runs WHERE id = $1 AND pruned_at IS NULL AND state = 'done'`, got.run); n != 1 {
		t.Error("the run was pruned or did not end done")
	}
}

// TestPruneRacesResume: a prune and a `crawler run --resume` of the same
// stopped run, started together, 20 times: either the resume wins (the
// run is running, not pruned, its task there) or the prune does (the run
// is pruned and the resume refused), never both.
func TestPruneRacesResume(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	job, err := jobfile.Parse("race.yaml", []byte("name: race\napi: {base_url: http://127.0.0.1:9/api}\nseeds: {shortvideo: {profiles: [race0]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	start := func(state string) int64 {
		id, err := pipeline.Start(ctx, pool, job)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `UPDATE crawl.runs SET state = $2, finished_at = now() WHERE id = $1`, id, state); err != nil {
			t.Fatal(err)
		}
		return id
	}
	wins := map[string]int{}
	for range 20 {
		stopped := start("stopped")
		start("done") // the job's latest
		resumed := make(chan error)
		go func() { resumed <- pipeline.Resume(ctx, pool, stopped, "race") }()
		if _, err := retention.Prune(ctx, pool, retention.Options{KeepRuns: 1}); err != nil {
			t.Fatal(err)
		}
		err := <-resumed
		var state string
		var pruned bool
		if err := pool.QueryRow(ctx, `SELECT state, pruned_at IS NOT NULL FROM crawl.runs WHERE id = $1`, stopped).Scan(&state, &pruned); err != nil {
			t.Fatal(err)
		}
		tasks := count(t, pool, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1`, stopped)
		switch {
		case err == nil && state == "running" && !pruned && tasks == 1:
			wins["resume"]++
		case errors.Is(err, runs.ErrPruned) && state == "stopped" && pruned && tasks == 0:
			wins["prune"]++
		default:
			t.Fatalf("run %d: resume %v, state %s, pruned %v, %d tasks", stopped, err, state, pruned, tasks)
		}
	}
	t.Logf("wins: %v", wins)
}

// cappedJob walks a followers list its page limit always cuts (500
// followers, 2 pages of 50: never walked whole, so stop_at_seen never
// trusts it) and a following list stop_at_seen cuts between whole walks;
// adaptiveJob revisits lists on the adaptive schedule, which asks whether
// a list was ever walked whole.
const (
	cappedJob = `
reuse: {refresh_after: 20h, full_walk_every: 3}
expand: {followers: {max_pages: 2, stop_at_seen: true}, following: {stop_at_seen: true}}
seeds: {shortvideo: {profiles: [capped_f500_g60]}}
`
	adaptiveJob = `
limits: {workers: 1, max_pages: 100, max_credits: 9}
expand: {followers: {}}
reuse: {adaptive: true, min_yield: 0.02}
seeds: {shortvideo: {profiles: [still0_f100, still1_f100, fast0_f100_r120]}}
`
)

// cappedAdaptiveNights is what each night of cappedJob and adaptiveJob
// buys per endpoint in a database no prune touches (days 0 to 5, a night
// between two runs): the capped followers list 2 pages a night, the
// following list whole on nights 0 and 3 and cut to a page between; the
// adaptive job its 3 profiles and the follower pages its budget lets the
// schedule buy. A control database harvested them beside the pruned one
// until it cost a third of the package's CPU; the figures do not depend
// on the machine (TestPruneKeepsReuseOfCappedAndAdaptiveJobs fails,
// naming the night, if the jobs' reuse changes).
var cappedAdaptiveNights = []string{
	"capped 0: map[/shortvideo/profile:1 /shortvideo/user/followers:2 /shortvideo/user/following:2]",
	"adaptive 0: map[/shortvideo/profile:3 /shortvideo/user/followers:6]",
	"capped 1: map[/shortvideo/user/followers:2 /shortvideo/user/following:1]",
	"adaptive 1: map[/shortvideo/profile:3 /shortvideo/user/followers:5]",
	"capped 2: map[/shortvideo/user/followers:2 /shortvideo/user/following:1]",
	"adaptive 2: map[/shortvideo/profile:3 /shortvideo/user/followers:6]",
	"capped 3: map[/shortvideo/user/followers:2 /shortvideo/user/following:2]",
	"adaptive 3: map[/shortvideo/profile:3 /shortvideo/user/followers:6]",
	"capped 4: map[/shortvideo/user/followers:2 /shortvideo/user/following:1]",
	"adaptive 4: map[/shortvideo/profile:3 /shortvideo/user/followers:6]",
	"capped 5: map[/shortvideo/user/followers:2 /shortvideo/user/following:1]",
	"adaptive 5: map[/shortvideo/profile:3 /shortvideo/user/followers:6]",
}

// TestPruneKeepsReuseOfCappedAndAdaptiveJobs: six nights of cappedJob and
// adaptiveJob with a prune (--keep-runs 1) before each night: every night
// buys exactly what it buys without prune (cappedAdaptiveNights). The
// capped walks of the pruned runs are gone (reuse never reads them), and
// of the pruned runs only a few tasks a list stay, whatever the number of
// nights.
func TestPruneKeepsReuseOfCappedAndAdaptiveJobs(t *testing.T) {
	t.Parallel()
	pruned, _ := pgtest.Pool(t)
	var got []string
	removed := int64(0)
	var capped, cut int64 // the night's walks, counted before a prune
	for day := range int64(6) {
		if day > 0 {
			removed += prune(t, pruned, retention.Options{KeepRuns: 1}).Rows()
			// A night between two runs, for the adaptive schedule.
			if _, err := pruned.Exec(context.Background(), `UPDATE crawl.revisit_items SET last_visit_at = last_visit_at - interval '1 day'`); err != nil {
				t.Fatal(err)
			}
		}
		for _, job := range []struct{ name, body string }{{"capped", cappedJob}, {"adaptive", adaptiveJob}} {
			run, p := harvest(t, pruned, job.name, day, job.body)
			got = append(got, fmt.Sprintf("%s %d: %v", job.name, day, p))
			capped += count(t, pruned, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND outcome = 'done_page_limit'`, run)
			cut += count(t, pruned, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND outcome = 'done_stop_at_seen'`, run)
		}
	}
	for i := range cappedAdaptiveNights {
		if got[i] != cappedAdaptiveNights[i] {
			t.Errorf("bought with a prune before each night %s, without %s", got[i], cappedAdaptiveNights[i])
		}
	}
	if removed == 0 {
		t.Error("the prunes removed nothing: the test proves nothing")
	}
	if capped < 6 || cut == 0 {
		t.Fatalf("%d capped walks and %d cut by stop_at_seen: the jobs do not test what they should", capped, cut)
	}
	kept := func(where string) int64 {
		return count(t, pruned, `SELECT count(*) FROM crawl.tasks t JOIN crawl.runs r ON r.id = t.run_id WHERE r.pruned_at IS NOT NULL AND `+where)
	}
	if n := kept(`t.outcome = 'done_page_limit'`); n != 0 {
		t.Errorf("%d capped walks of pruned runs kept, want 0", n)
	}
	// Of the 8 pruned runs: at most, for each of the 5 lists, its last
	// whole walk and a walk cut since; for each of the 4 profiles, its
	// latest fetch.
	if n := kept(`true`); n > 5*2+4 {
		t.Errorf("%d tasks of pruned runs kept, want at most 14", n)
	}
}

// TestPruneDoesNotReadPrunedRuns: once a prune finished a run, later
// prunes never read its rows again: a task put back in a pruned run (one
// no rule keeps) stays through the next nights' prunes, while each of
// them prunes its night's run.
func TestPruneDoesNotReadPrunedRuns(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	var ids []int64
	for day := range int64(3) {
		id, _ := harvest(t, pool, "nightly", day, reuseJob)
		ids = append(ids, id)
	}
	if res := prune(t, pool, retention.Options{KeepRuns: 1}); !slices.Equal(res.Runs, ids[:2]) {
		t.Fatalf("first prune: runs %v, want %v", res.Runs, ids[:2])
	}
	if _, err := pool.Exec(ctx, `INSERT INTO crawl.tasks (run_id, kind, key, state, reason, outcome, finished_at)
		VALUES ($1, 'shortvideo.profile', 'sentinel', 'failed', 'put back by the test', 'failed', now())`, ids[0]); err != nil {
		t.Fatal(err)
	}
	for day := int64(3); day < 5; day++ {
		id, _ := harvest(t, pool, "nightly", day, reuseJob)
		ids = append(ids, id)
		res := prune(t, pool, retention.Options{KeepRuns: 1})
		if !slices.Equal(res.Runs, ids[day-1:day]) || res.Before != int(day-1) {
			t.Errorf("prune after night %d: runs %v (%d before), want %v (%d before)", day, res.Runs, res.Before, ids[day-1:day], day-1)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM crawl.tasks WHERE key = 'sentinel'`); n != 1 {
		t.Error("a later prune read the tasks of a run pruned before")
	}
	// What reuse needs stays: the profile's only fetch and the list's last
	// whole walk, of all the pruned runs.
	if n := count(t, pool, `SELECT count(*) FROM crawl.tasks t JOIN crawl.runs r ON r.id = t.run_id WHERE r.pruned_at IS NOT NULL AND key <> 'sentinel'`); n != 2 {
		t.Errorf("%d tasks of pruned runs kept, want 2", n)
	}
}

// TestPruneSnapshotsBesideLiveRun: --snapshots never deletes the row a
// running run compares its own with (its key's latest before it: the
// profile's previous counters its adaptive visit and its report read),
// while the rows no one compares with go. Runs 1 to 3 of job a are done,
// run 4 is running; account x has snapshots in runs 1 and 4, account y in
// 1, 2 and 4, account z in 1 and 3.
func TestPruneSnapshotsBesideLiveRun(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO crawl.runs (id, job_name, job, state, started_at, finished_at)
		 SELECT r, 'a', '{}', CASE WHEN r = 4 THEN 'running' ELSE 'done' END, now() - (5 - r) * interval '1 day',
		        CASE WHEN r < 4 THEN now() - (5 - r) * interval '1 day' + interval '1 hour' END
		 FROM generate_series(1, 4) r`,
		`INSERT INTO shortvideo.users (unique_id, raw, first_seen_run, last_seen_run) VALUES ('x', '{}', 1, 4), ('y', '{}', 1, 4), ('z', '{}', 1, 3)`,
		`INSERT INTO shortvideo.user_snapshots (unique_id, run_id, follower_count)
		 VALUES ('x', 1, 10), ('x', 4, 14), ('y', 1, 20), ('y', 2, 22), ('y', 4, 24), ('z', 1, 30), ('z', 3, 33)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Runs 1 and 2 go (3 is the latest done, 4 the latest).
	res := prune(t, pool, retention.Options{KeepRuns: 1, Snapshots: true})
	if !slices.Equal(res.Runs, []int64{1, 2}) {
		t.Fatalf("pruned runs %v, want [1 2]", res.Runs)
	}
	var left []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(unique_id || run_id ORDER BY unique_id, run_id) FROM shortvideo.user_snapshots`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	// x1: what run 4 compares x with; y1 goes (y2 is y's latest before 4);
	// z1 goes (z3 supersedes it, no running run between).
	if want := []string{"x1", "x4", "y2", "y4", "z3"}; !slices.Equal(left, want) {
		t.Errorf("snapshots left %v, want %v", left, want)
	}
}

// TestPruneDryRunAfterEarlierPrunes: the dry run reports what the prune
// then removes, row for row, also when earlier prunes kept tasks and
// snapshots that several of the runs it prunes supersede (each examined
// once). Account snapz is fetched every night but night 2: the first prune
// (after night 2) keeps its snapshot of night 1, which nights 3 and 4,
// both pruned by the second, supersede.
func TestPruneDryRunAfterEarlierPrunes(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	night := func(day int64) {
		seeds := "walker_f250_r10"
		if day != 2 {
			seeds += ", snapz_f10"
		}
		harvest(t, pool, "nightly", day, "reuse: {full_walk_every: 3}\nexpand: {followers: {stop_at_seen: true}}\nseeds: {shortvideo: {profiles: ["+seeds+"]}}\n")
	}
	for day := range int64(3) {
		night(day)
	}
	first := prune(t, pool, retention.Options{KeepRuns: 1, Snapshots: true})
	if first.Rows() == 0 || len(first.Runs) != 2 {
		t.Fatalf("first prune: %+v", first)
	}
	keptOf := func(table string) int64 {
		return count(t, pool, `SELECT count(*) FROM `+table+` x JOIN crawl.runs r ON r.id = x.run_id WHERE r.pruned_at IS NOT NULL AND r.id < 3`)
	}
	kept, keptSnaps := keptOf("crawl.tasks"), keptOf("shortvideo.user_snapshots")
	if kept == 0 || keptSnaps != 1 {
		t.Fatalf("the first prune kept %d tasks and %d snapshots, want some and snapz's", kept, keptSnaps)
	}
	for day := int64(3); day < 6; day++ {
		night(day)
	}
	opts := retention.Options{KeepRuns: 1, Snapshots: true}
	before := sizes(t, pool)
	opts.DryRun = true
	dry := prune(t, pool, opts)
	if after := sizes(t, pool); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the dry run changed the database:\nbefore %v\nafter  %v", before, after)
	}
	opts.DryRun = false
	res := prune(t, pool, opts)
	if len(res.Runs) != 3 || res.Before != 2 || !slices.Equal(dry.Runs, res.Runs) {
		t.Errorf("runs: dry run %v, prune %v (%d before), want 3 runs, 2 before", dry.Runs, res.Runs, res.Before)
	}
	if got, want := rowsOf(dry), rowsOf(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dry run would remove %v, the prune removed %v", got, want)
	}
	// What the first prune kept was examined again: snapz's old snapshot
	// and the walks and fetches the new runs supersede are gone.
	if n, m := keptOf("crawl.tasks"), keptOf("shortvideo.user_snapshots"); n >= kept || m != 0 {
		t.Errorf("of the runs pruned first, %d tasks and %d snapshots left, %d and 1 before", n, m, kept)
	}
}
