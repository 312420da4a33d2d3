package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A run stopped by its budget is not continued with the same budget
// (issue 25.4): it exits 5, and every restart within resume_within exits 5
// at once without a request, a new run, or a change to the run's activity,
// so a restart policy cannot keep the window open and the next start after
// it is a new run with a budget of its own. A larger budget continues it.
func TestBudgetStopThenRestarts(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	job := crashJob(t, up.url)
	if r := invoke(t, env, "run", "--max-credits", "3", job); r.code != exitSpent {
		t.Fatalf("first run: exit %d, want %d: %s", r.code, exitSpent, r.stderr)
	}
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	activity := func() (runs int64, last time.Time) {
		t.Helper()
		err := conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM crawl.runs),
			(SELECT greatest(r.started_at, r.finished_at, r.resumed_at, (SELECT max(updated_at) FROM crawl.tasks t WHERE t.run_id = r.id))
			 FROM crawl.runs r WHERE id = 1)`).Scan(&runs, &last)
		if err != nil {
			t.Fatal(err)
		}
		return runs, last
	}
	_, stoppedAt := activity()
	requests := up.n.Load()
	for i := range 3 { // a restart policy retrying
		r := invoke(t, env, "run", "--max-credits", "3", job)
		if r.code != exitSpent || !strings.Contains(r.stderr, "do not retry exit 5") {
			t.Fatalf("restart %d: exit %d, want %d: %s", i, r.code, exitSpent, r.stderr)
		}
	}
	// --resume ID with no larger budget changes nothing either (issue 33.5:
	// it cleared budget_stop and restarted resume_within before exiting 5).
	for _, args := range [][]string{{"run", "--resume", "1", job}, {"run", "--resume", "1", "--max-credits", "3", job}} {
		r := invoke(t, env, args...)
		if r.code != exitSpent || !strings.Contains(r.stderr, "crawler run --resume 1 --max-credits N") {
			t.Errorf("%v: exit %d, want %d: %s", args, r.code, exitSpent, r.stderr)
		}
	}
	if runs, last := activity(); runs != 1 || !last.Equal(stoppedAt) || up.n.Load() != requests {
		t.Errorf("after the restarts: %d runs, last activity %v (was %v), %d requests (was %d); want nothing changed", runs, last, stoppedAt, up.n.Load(), requests)
	}
	var state string
	var stop *int64
	if err := conn.QueryRow(context.Background(), `SELECT state, budget_stop FROM crawl.runs WHERE id = 1`).Scan(&state, &stop); err != nil ||
		state != "stopped" || stop == nil || *stop != 3 {
		t.Errorf("run 1 after the restarts: %s, budget_stop %v, %v; want stopped at 3", state, stop, err)
	}
	// The next night: resume_within has passed since the stop.
	if _, err := conn.Exec(context.Background(), `UPDATE crawl.runs SET started_at = started_at - interval '13 hours',
		finished_at = finished_at - interval '13 hours', resumed_at = resumed_at - interval '13 hours';
		UPDATE crawl.tasks SET updated_at = updated_at - interval '13 hours'`); err != nil {
		t.Fatal(err)
	}
	if r := invoke(t, env, "run", "--max-credits", "3", job); r.code != exitSpent || !strings.Contains(r.stdout, "run 2:") {
		t.Fatalf("next night: exit %d: %s %s; want run 2 started, spending its own budget", r.code, r.stdout, r.stderr)
	}
	var billed2 int64
	if err := conn.QueryRow(context.Background(), `SELECT credits_billed FROM crawl.runs WHERE id = 2`).Scan(&billed2); err != nil || billed2 != 3 {
		t.Errorf("run 2 billed %d, %v; want its own 3", billed2, err)
	}
	// A larger budget continues the spent run.
	if r := invoke(t, env, "run", "--max-credits", "1000", job); r.code != 0 || !strings.Contains(r.stdout, "run 2: job \"crash-test\" continued") {
		t.Errorf("raised budget: exit %d: %s %s; want run 2 continued to its end", r.code, r.stdout, r.stderr)
	}
}
