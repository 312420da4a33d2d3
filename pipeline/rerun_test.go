package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
)

// runRow is a run's id, state and stop reason.
func (b *bundle) runRows(t *testing.T) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT id, state, coalesce(stop_reason, '') FROM crawl.runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int64
		var state, reason string
		if err := rows.Scan(&id, &state, &reason); err != nil {
			t.Fatal(err)
		}
		out = append(out, itoa(id)+" "+state+" "+reason)
	}
	return out
}

func findOrCreate(t *testing.T, b *bundle, job *jobfile.Job, forceNew bool) pipeline.RunChoice {
	t.Helper()
	ch, err := pipeline.FindOrCreateRun(context.Background(), b.pool, job, forceNew)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// age makes run runID look last active 30 hours ago.
func (b *bundle) age(t *testing.T, runID int64) {
	t.Helper()
	for _, q := range []string{
		`UPDATE crawl.runs SET started_at = now() - interval '30 hours', finished_at = now() - interval '30 hours' WHERE id = $1`,
		`UPDATE crawl.tasks SET updated_at = now() - interval '30 hours' WHERE run_id = $1`,
	} {
		if _, err := b.pool.Exec(context.Background(), q, runID); err != nil {
			t.Fatal(err)
		}
	}
}

// The run lifecycle of `crawler run JOB` started again and again: an
// interrupted run is continued, a finished one is not, an old one or one
// of a changed job is abandoned for a new run, --new-run always starts one.
func TestFindOrCreateRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	job := b.job(t, "seeds: {shortvideo: {profiles: [a_f3_g0]}}\nexpand: {}\n")

	first := findOrCreate(t, b, job, false)
	if first.Action != pipeline.RunNew || first.RunID != 1 {
		t.Fatalf("first start: %+v, want a new run 1", first)
	}
	// Just created, no lease yet: another start joins it.
	if ch := findOrCreate(t, b, job, false); ch.Action != pipeline.RunJoin || ch.RunID != 1 {
		t.Fatalf("start while run 1 is being started: %+v, want join 1", ch)
	}
	// Interrupted (stopped) within the window: continued.
	if _, err := pipeline.FinishRun(ctx, b.pool, 1, "x", "stopped", "interrupted"); err != nil {
		t.Fatal(err)
	}
	if ch := findOrCreate(t, b, job, false); ch.Action != pipeline.RunContinue || ch.RunID != 1 {
		t.Fatalf("start after a stop: %+v, want continue 1", ch)
	}
	// A changed seed list while run 1 is in progress: refused.
	changed := b.job(t, "seeds: {shortvideo: {profiles: [a_f3_g0, b_f3_g0]}}\nexpand: {}\n")
	if _, err := pipeline.FindOrCreateRun(ctx, b.pool, changed, false); !errors.Is(err, pipeline.ErrJobChanged) {
		t.Fatalf("changed job while run 1 runs: err %v, want ErrJobChanged", err)
	}
	// Reordered and duplicated seeds are the same job.
	same := b.job(t, "seeds: {shortvideo: {profiles: [\"@a_f3_g0\", a_f3_g0]}}\nexpand: {}\nlimits: {workers: 9}\n")
	if pipeline.Fingerprint(same) != pipeline.Fingerprint(job) {
		t.Error("fingerprint differs for the same seeds written differently")
	}
	// Interrupted and then changed: abandoned, a new run.
	if _, err := pipeline.FinishRun(ctx, b.pool, 1, "x", "stopped", "interrupted"); err != nil {
		t.Fatal(err)
	}
	ch := findOrCreate(t, b, changed, false)
	if ch.Action != pipeline.RunNew || ch.RunID != 2 || ch.Abandoned != 1 {
		t.Fatalf("changed job after a stop: %+v, want new run 2 abandoning 1", ch)
	}
	// Run 2 finished: the next start is a new run, run 2 stays done.
	sum, err := pipeline.Run(ctx, b.options(changed, testKey), changed, 2)
	if err != nil || sum.State != "done" {
		t.Fatalf("run 2: %+v %v", sum, err)
	}
	if ch := findOrCreate(t, b, changed, false); ch.Action != pipeline.RunNew || ch.RunID != 3 || ch.Abandoned != 0 {
		t.Fatalf("start after a done run: %+v, want new run 3", ch)
	}
	// Run 3 stopped and last active 30 hours ago: outside the 12h default.
	if _, err := pipeline.FinishRun(ctx, b.pool, 3, "x", "stopped", "interrupted"); err != nil {
		t.Fatal(err)
	}
	b.age(t, 3)
	if ch := findOrCreate(t, b, changed, false); ch.Action != pipeline.RunNew || ch.RunID != 4 || ch.Abandoned != 3 {
		t.Fatalf("start after an old stop: %+v, want new run 4 abandoning 3", ch)
	}
	// ... but within a job's longer window it would have been continued.
	long := b.job(t, "seeds: {shortvideo: {profiles: [a_f3_g0, b_f3_g0]}}\nexpand: {}\nresume_within: 48h\n")
	if _, err := pipeline.FinishRun(ctx, b.pool, 4, "x", "stopped", "interrupted"); err != nil {
		t.Fatal(err)
	}
	b.age(t, 4)
	if ch := findOrCreate(t, b, long, false); ch.Action != pipeline.RunContinue || ch.RunID != 4 {
		t.Fatalf("start after an old stop with resume_within 48h: %+v, want continue 4", ch)
	}
	// --new-run on an interrupted run: abandoned, new run.
	if _, err := pipeline.FinishRun(ctx, b.pool, 4, "x", "stopped", "interrupted"); err != nil {
		t.Fatal(err)
	}
	if ch := findOrCreate(t, b, long, true); ch.Action != pipeline.RunNew || ch.RunID != 5 || ch.Abandoned != 4 {
		t.Fatalf("--new-run: %+v, want new run 5 abandoning 4", ch)
	}
	// A process finishing work on an abandoned run does not revive it.
	if _, err := pipeline.FinishRun(ctx, b.pool, 4, "x", "stopped", "interrupted"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1 abandoned superseded by run 2: the job's seeds, expand, max_depth or page limits changed",
		"2 done ",
		"3 abandoned not continued: no activity for 30h0m0s, longer than resume_within 12h0m0s; superseded by run 4",
		"4 abandoned superseded by run 5 (--new-run)",
		"5 running ",
	}
	if got := b.runRows(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Overlapping starts of one job serialize on the job's advisory lock: one
// run, which every start gets.
func TestFindOrCreateRunConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, "seeds: {shortvideo: {profiles: [a_f3_g0]}}\n")
	const n = 8
	ids := make([]int64, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ch, err := pipeline.FindOrCreateRun(context.Background(), b.pool, job, false)
			if err != nil {
				t.Error(err)
			}
			ids[i] = ch.RunID
		}()
	}
	close(start)
	wg.Wait()
	for i, id := range ids {
		if id != 1 {
			t.Errorf("start %d got run %d, want 1", i, id)
		}
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.runs`); got != 1 {
		t.Errorf("%d runs, want 1", got)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks`); got != 1 {
		t.Errorf("%d tasks, want 1 seed", got)
	}
}

// At the resume_within boundary: a start continues a run last active just
// within the window; a second start a moment later, when the old activity
// is past the window, sees the run continued (in progress) and joins it:
// one run, never an abandoned one beside a new one.
func TestResumeBoundaryMakesOneRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	job := b.job(t, "resume_within: 20h\nseeds: {shortvideo: {profiles: [a_f3_g0]}}\nexpand: {}\n")
	first := findOrCreate(t, b, job, false)
	if _, err := pipeline.FinishRun(ctx, b.pool, first.RunID, "x", "stopped", "interrupted"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE crawl.runs SET started_at = now() - interval '19 hours 59 minutes', finished_at = now() - interval '19 hours 59 minutes'`); err != nil {
		t.Fatal(err)
	}
	if ch := findOrCreate(t, b, job, false); ch.Action != pipeline.RunContinue || ch.RunID != first.RunID {
		t.Fatalf("start within the window: %+v, want continue %d", ch, first.RunID)
	}
	// A moment later the old activity is past the window.
	b.age(t, first.RunID)
	if ch := findOrCreate(t, b, job, false); ch.Action != pipeline.RunJoin || ch.RunID != first.RunID {
		t.Fatalf("second start a moment after the first continued: %+v, want join %d", ch, first.RunID)
	}
	if rows := b.runRows(t); len(rows) != 1 || !strings.Contains(rows[0], "running") {
		t.Errorf("runs %v, want the one run, running", rows)
	}
}
