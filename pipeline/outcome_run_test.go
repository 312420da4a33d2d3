package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Every way a task ends writes its outcome beside its reason: two nights
// of a job with refresh_after and stop_at_seen. Night 1 fetches the
// profile, walks its followers to their page limit and its following list
// to the end, and finds no account named missing_out; night 2 skips the
// profile as fresh, expands its lists from stored data and cuts the
// following list at its first page, all of it stored the night before.
func TestOutcomesWritten(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, `
reuse: {refresh_after: 20h, full_walk_every: 5}
expand: {followers: {max_pages: 1}, following: {stop_at_seen: true}}
seeds: {shortvideo: {profiles: [oc0_f120_g120, missing_out]}}
`)
	outcomes := func(runID int64) []string {
		t.Helper()
		rows, _ := b.pool.Query(context.Background(),
			`SELECT kind || ' ' || key || ' ' || state || ' ' || coalesce(outcome::text, '-') FROM crawl.tasks WHERE run_id = $1 ORDER BY kind, key`, runID)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := b.run(t, job)
	second := b.run(t, job)
	var key string // the lists' key: the profile's secUid
	if err := b.pool.QueryRow(context.Background(), `SELECT key FROM crawl.tasks WHERE kind = 'shortvideo.followers' LIMIT 1`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run  int64
		want []string
	}{
		{first.RunID, []string{
			"shortvideo.followers " + key + " done done_page_limit",
			"shortvideo.following " + key + " done done_end",
			"shortvideo.profile missing_out skipped skipped_not_found",
			"shortvideo.profile oc0_f120_g120 done done",
		}},
		{second.RunID, []string{
			"shortvideo.followers " + key + " done done_page_limit",
			"shortvideo.following " + key + " done done_stop_at_seen",
			"shortvideo.profile missing_out skipped skipped_not_found",
			"shortvideo.profile oc0_f120_g120 skipped skipped_fresh",
		}},
	} {
		if got := outcomes(c.run); !slices.Equal(got, c.want) {
			t.Errorf("run %d:\n%s\nwant\n%s", c.run, fmt.Sprint(got), fmt.Sprint(c.want))
		}
	}
}
