package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/runs"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// The outcomes are declared once in Go (kinds.Outcomes) and once in SQL
// (the enum crawl.task_outcome): the same values in the same order, each
// starting with a task state and described in the column's comment, which
// docs/schema.md shows.
func TestOutcomesDeclaredOnce(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	var labels []string
	var comment string
	err := pool.QueryRow(context.Background(), `SELECT enum_range(NULL::crawl.task_outcome)::text[],
		col_description('crawl.tasks'::regclass, (SELECT attnum FROM pg_attribute WHERE attrelid = 'crawl.tasks'::regclass AND attname = 'outcome'))`).
		Scan(&labels, &comment)
	if err != nil {
		t.Fatal(err)
	}
	var decl []string
	for _, o := range kinds.Outcomes() {
		decl = append(decl, string(o))
		if s := o.State(); s != frontier.StateDone && s != frontier.StateSkipped && s != frontier.StateFailed {
			t.Errorf("outcome %s: state %q is not one a task ends in", o, s)
		}
		if !strings.Contains(comment, string(o)+": ") {
			t.Errorf("the comment on crawl.tasks.outcome does not describe %s", o)
		}
	}
	if !slices.Equal(decl, labels) {
		t.Errorf("kinds.Outcomes() = %v,\nthe enum crawl.task_outcome = %v", decl, labels)
	}
}

// Every statement that decides by how a task ended reads its outcome, not
// its reason: the tasks below carry reasons that say the opposite of their
// outcome (as a reworded reason could), and each statement follows the
// outcome. Run 1 capped list L ("end" by its reason), run 2 walked it whole
// ("page_limit"), run 3 cut it by stop_at_seen ("end"); run 3 also has a
// profile skipped as fresh ("adaptive: ...") and one skipped by the
// adaptive schedule ("fresh: ..."); run 4 has tasks being expanded again
// from stored data, with reasons as contrary.
func TestStatementsReadOutcomeNotReason(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO crawl.runs (id, job_name, job, state, finished_at) SELECT r, 'j', '{}', 'done', now() FROM generate_series(1, 4) r`)
	exec(`INSERT INTO crawl.tasks (run_id, kind, key, params, state, reason, outcome, pages, finished_at, credits_saved)
		VALUES (1, 'shortvideo.followers', 'L', '{"handle": "h"}', 'done', 'end', 'done_page_limit', 5, now() - interval '3 h', 0),
		       (2, 'shortvideo.followers', 'L', '{"handle": "h"}', 'done', 'page_limit', 'done_end', 7, now() - interval '2 h', 0),
		       (3, 'shortvideo.followers', 'L', '{"handle": "h"}', 'done', 'end', 'done_stop_at_seen', 1, now() - interval '1 h', 6),
		       (3, 'shortvideo.profile', 'fresh', '{}', 'skipped', 'adaptive: new', 'skipped_fresh', 0, now(), 1),
		       (3, 'shortvideo.profile', 'sched', '{}', 'skipped', 'fresh: within refresh_after', 'skipped_adaptive', 0, now(), 1),
		       (3, 'shortvideo.profile', 'gone', '{}', 'skipped', 'fresh: within refresh_after', 'skipped_not_found', 0, now(), 0)`)
	exec(`UPDATE crawl.tasks SET depth = 2 WHERE kind = 'shortvideo.profile'`)

	// stop_at_seen (LastFullWalk): the last whole walk is run 2's, and run 3 cut the list since.
	job := &jobfile.Job{}
	w, err := listWalk(ctx, pool, job, "shortvideo.followers", "L", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Found || w.Run != 2 || w.Pages != 7 || w.Cut != 1 {
		t.Errorf("last full walk of L = %+v, want run 2's (7 pages), cut once since", w)
	}
	// The ledger (crawl.run_ledger): one fetch skipped as fresh, one list stopped at seen.
	var fresh, stopped, savedFresh, notWalked int64
	if err := pool.QueryRow(ctx, `SELECT fetches_skipped, lists_stopped_at_seen, credits_saved_fresh, credits_not_walked FROM crawl.run_ledger WHERE run_id = 3`).
		Scan(&fresh, &stopped, &savedFresh, &notWalked); err != nil {
		t.Fatal(err)
	}
	if fresh != 1 || stopped != 1 || savedFresh != 1 || notWalked != 6 {
		t.Errorf("run 3's ledger: %d fresh (%d saved), %d stopped at seen (%d pages), want 1 (1), 1 (6)", fresh, savedFresh, stopped, notWalked)
	}
	// The follow graph's views and the report: only run 2's walk is complete.
	var complete []int64
	if err := pool.QueryRow(ctx, `SELECT array_agg(run_id ORDER BY run_id) FROM shortvideo.follow_walks WHERE complete`).Scan(&complete); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(complete, []int64{2}) {
		t.Errorf("complete walks in runs %v, want [2]", complete)
	}
	rep, err := runs.LoadReport(ctx, pool, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rep.Changes.Incomplete); got != "map[stop_at_seen:1]" {
		t.Errorf("run 3's report: incomplete walks %s, want map[stop_at_seen:1]", got)
	}
	// Found again closer to a seed: the profiles skipped as fresh or by the
	// schedule are expanded again (from stored data), the one not found is
	// not, whatever its reason says.
	if err := frontier.AddTasks(ctx, pool, 3, []kinds.NewTask{{Kind: "shortvideo.profile", Key: "fresh"}, {Kind: "shortvideo.profile", Key: "sched"},
		{Kind: "shortvideo.profile", Key: "gone"}}); err != nil {
		t.Fatal(err)
	}
	var states []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(key || ' ' || state ORDER BY key) FROM crawl.tasks WHERE run_id = 3 AND kind = 'shortvideo.profile'`).Scan(&states); err != nil {
		t.Fatal(err)
	}
	if want := []string{"fresh pending", "gone skipped", "sched pending"}; !slices.Equal(states, want) {
		t.Errorf("after finding them closer to a seed: %v, want %v", states, want)
	}
	// Expanded again from stored data, a task ends as it ended before, by
	// its outcome: skipped (fresh or by the schedule) or done.
	exec(`INSERT INTO crawl.tasks (run_id, kind, key, state, reason, outcome, reexpand, lease_token, lease_expires_at, finished_at)
		VALUES (4, 'shortvideo.profile', 'r1', 'leased', 'adaptive: new', 'skipped_fresh', true, 11, now() + interval '1 h', now()),
		       (4, 'shortvideo.profile', 'r2', 'leased', 'fresh: within', 'skipped_adaptive', true, 12, now() + interval '1 h', now()),
		       (4, 'shortvideo.followers', 'r3', 'leased', 'fresh: within', 'done_end', true, 13, now() + interval '1 h', now())`)
	var ids []int64
	if err := pool.QueryRow(ctx, `SELECT array_agg(id ORDER BY key) FROM crawl.tasks WHERE run_id = 4`).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	f := frontier.NewFrontier(pool, "o", time.Hour)
	for i, id := range ids {
		if err := f.EndReexpand(ctx, 4, &frontier.Task{Task: kinds.Task{ID: id}, Token: int64(11 + i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := pool.QueryRow(ctx, `SELECT array_agg(key || ' ' || state ORDER BY key) FROM crawl.tasks WHERE run_id = 4`).Scan(&states); err != nil {
		t.Fatal(err)
	}
	if want := []string{"r1 skipped", "r2 skipped", "r3 done"}; !slices.Equal(states, want) {
		t.Errorf("ended again after expanding from stored data: %v, want %v", states, want)
	}
}
