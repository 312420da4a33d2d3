package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/pipeline"
)

// tasksAt lists the run's tasks as "kind key depth state", sorted.
func (b *bundle) tasksAt(t *testing.T) string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT kind || ' ' || key || ' ' || depth || ' ' || state FROM crawl.tasks ORDER BY kind, key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

// Depth does not depend on which worker found a task first. A profile
// fetched at depth 1 (at max_depth: its followers' profiles are not
// fetched) and then found at depth 0 by a walk still in progress ends as
// if it had been found at depth 0 first: expanded again from what it
// stored, without a request, its lists too, and its followers' profiles
// fetched. The tasks, their depths and the credits equal a run that found
// it at depth 0 first.
func TestDepthIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const body = "limits: {max_depth: 1}\nexpand: {followers: {}, following: {}, follower_profiles: {}}\nseeds: {shortvideo: {profiles: [det_f30_g4]}}\n"

	clean := setup(t)
	if sum := clean.run(t, clean.job(t, body)); sum.State != "done" {
		t.Fatalf("clean run: %+v", sum)
	}

	late := setup(t)
	job := late.job(t, body)
	runID := late.start(t, job)
	// Found first one hop away: fetched at depth 1, at max_depth.
	if _, err := late.pool.Exec(ctx, `UPDATE crawl.tasks SET depth = 1`); err != nil {
		t.Fatal(err)
	}
	if sum, err := pipeline.Run(ctx, late.options(job, testKey), job, runID); err != nil || sum.State != "done" {
		t.Fatalf("first pass: %v %+v", err, sum)
	}
	if n := late.count(t, `SELECT count(*) FROM crawl.tasks`); n != 3 {
		t.Fatalf("first pass made %d tasks, want the profile and its two lists", n)
	}
	bought := late.sandbox.Usage(testKey).Billable
	// Then found at depth 0, as a walk still in progress would.
	if err := pipeline.AddTasks(ctx, late.pool, runID, []pipeline.NewTask{{Kind: "shortvideo.profile", Key: "det_f30_g4", Depth: 0, Params: map[string]string{}}}); err != nil {
		t.Fatal(err)
	}
	if sum, err := pipeline.Run(ctx, late.options(job, testKey), job, runID); err != nil || sum.State != "done" {
		t.Fatalf("second pass: %v %+v", err, sum)
	}
	if got, want := late.tasksAt(t), clean.tasksAt(t); got != want {
		t.Errorf("tasks after the late find:\n%s\nwant (found at depth 0 first):\n%s", got, want)
	}
	u, c := late.sandbox.Usage(testKey), clean.sandbox.Usage(testKey)
	if u.Billable != c.Billable || u.ByEndpoint["/shortvideo/profile"].Billable-1 != 34 {
		t.Errorf("billable %d (first pass %d), clean run %d; want equal, with the 34 followers' and followees' profiles", u.Billable, bought, c.Billable)
	}
	if late.count(t, `SELECT count(*) FROM crawl.tasks WHERE reexpand`) != 0 {
		t.Error("a task is still marked to expand again")
	}
}
