package pipeline_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/runs"
)

// The follow-graph change views (migration 00020, docs/graph-change.md)
// on a known history of one account, tiny_f5_g2_r1: 5 followers and 2
// following at world day 0, each list gaining 1 entry a day at its head;
// the sandbox serves 2 entries a page.
//
//	run 1, day 0: both lists walked whole (complete): 5 and 2 entries
//	run 2, day 3: both lists capped at 1 page (page_limit, not complete)
//	(planted)    ghost_gone followed at run 1 only, ghost_late at runs 1
//	             and 2, ghost_blip at run 2 only: accounts that unfollowed
//	             (the sandbox's lists never lose an entry)
//	run 3, day 6: both lists walked whole: 11 and 8 entries
//	run 4, day 7: followers with stop_at_seen (stopped on page 2, not
//	             complete), following capped at 1 page
//
// Between the complete walks of runs 1 and 3, the 6 entries added at the
// head by day 6 started (two of them first seen by run 2's capped walk),
// ghost_gone and ghost_late stopped, ghost_blip is neither; run 4's
// walks change nothing of it.
const graphAccount = "tiny_f5_g2_r1"

func graphJob(expand string) string {
	return `
limits: {workers: 2, max_pages: 100, max_depth: 1}
seeds: {shortvideo: {profiles: [` + graphAccount + `]}}
expand: ` + expand + "\n"
}

// graphRun runs graphJob(expand) against a sandbox at world day day with
// pages of 2 entries and returns the run id.
func graphRun(t *testing.T, pool *pgxpool.Pool, day int64, expand string) int64 {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, WorldTime: day, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	b := &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL + "/api"}
	sum := b.run(t, b.job(t, graphJob(expand)))
	if sum.State != "done" {
		t.Fatalf("run at day %d: %s %s", day, sum.State, sum.Reason)
	}
	return sum.RunID
}

// headEntries asks a sandbox at day day (outside the crawler) for the
// first n entries of the account's list (followers or following), newest
// first.
func headEntries(t *testing.T, day int64, list string, n int) []string {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, WorldTime: day, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	var page map[string]any
	oracle(t, srv, "/shortvideo/user/"+list, url.Values{"secUid": {secUID(graphAccount)}}, &page)
	var out []string
	for _, e := range page[list].([]any) {
		out = append(out, e.(map[string]any)["uniqueId"].(string))
	}
	if len(out) < n {
		t.Fatalf("%s at day %d: %d entries, want at least %d", list, day, len(out), n)
	}
	return out[:n]
}

// graphHistory builds the history above and returns the bundle and the
// four run ids.
func graphHistory(t *testing.T) (*bundle, [4]int64) {
	t.Helper()
	b := setup(t)
	var ids [4]int64
	ids[0] = graphRun(t, b.pool, 0, `{followers: {}, following: {}}`)
	ids[1] = graphRun(t, b.pool, 3, `{followers: {max_pages: 1}, following: {max_pages: 1}}`)
	// Accounts that unfollowed: written as the crawler writes an account
	// and its edge.
	for _, g := range []struct {
		handle      string
		first, last int64
	}{{"ghost_gone", ids[0], ids[0]}, {"ghost_late", ids[0], ids[1]}, {"ghost_blip", ids[1], ids[1]}} {
		if _, err := b.pool.Exec(context.Background(), `
			WITH u AS (INSERT INTO shortvideo.users (unique_id, raw, first_seen_run, last_seen_run)
			           VALUES ($1, jsonb_build_object('uniqueId', $1::text), $3, $4))
			INSERT INTO shortvideo.follows (follower, followee, raw, first_seen_run, last_seen_run)
			VALUES ($1, $2, jsonb_build_object('uniqueId', $1::text), $3, $4)`, g.handle, graphAccount, g.first, g.last); err != nil {
			t.Fatal(err)
		}
	}
	ids[2] = graphRun(t, b.pool, 6, `{followers: {}, following: {}}`)
	ids[3] = graphRun(t, b.pool, 7, `{followers: {stop_at_seen: true}, following: {max_pages: 1}}`)
	return b, ids
}

func TestFollowGraphChangeViews(t *testing.T) {
	t.Parallel()
	b, ids := graphHistory(t)
	r1, r2, r3, r4 := ids[0], ids[1], ids[2], ids[3]

	// How complete each walk was: entries stored vs the profile's counter.
	got := rowsOf(t, b, `SELECT run_id, list, state, split_part(reason, ':', 1), complete, pages, entries_stored, reported_count, coverage
		FROM shortvideo.follow_walks WHERE unique_id = '`+graphAccount+`' ORDER BY run_id, list`)
	want := []string{
		fmt.Sprintf("%d | followers | done | end | true | 3 | 5 | 5 | 1.0000", r1),
		fmt.Sprintf("%d | following | done | end | true | 1 | 2 | 2 | 1.0000", r1),
		fmt.Sprintf("%d | followers | done | page_limit | false | 1 | 2 | 8 | 0.2500", r2),
		fmt.Sprintf("%d | following | done | page_limit | false | 1 | 2 | 5 | 0.4000", r2),
		fmt.Sprintf("%d | followers | done | end | true | 6 | 11 | 11 | 1.0000", r3),
		fmt.Sprintf("%d | following | done | end | true | 4 | 8 | 8 | 1.0000", r3),
		fmt.Sprintf("%d | followers | done | stop_at_seen | false | 2 | 4 | 12 | 0.3333", r4),
		fmt.Sprintf("%d | following | done | page_limit | false | 1 | 2 | 9 | 0.2222", r4),
	}
	if !slices.Equal(got, want) {
		t.Errorf("follow_walks:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}

	// Who started and who stopped, between the complete walks of runs 1
	// and 3: the sandbox's six newest entries at day 6, and the planted
	// unfollows. Run 2's capped walk and run 4's stop_at_seen walk pair
	// with nothing.
	newFollowers := headEntries(t, 6, "followers", 6)
	newFollowing := headEntries(t, 6, "following", 6)
	var wantChanges []string
	for _, h := range newFollowers {
		first := r3
		if slices.Contains(headEntries(t, 3, "followers", 2), h) {
			first = r2 // seen first by run 2's capped walk
		}
		last := r3
		if slices.Contains(headEntries(t, 7, "followers", 4), h) {
			last = r4 // seen again by run 4's first two pages
		}
		wantChanges = append(wantChanges, fmt.Sprintf("followers | %d | %d | true | started | %s | %s | %s | %d | %d", r1, r3, h, h, graphAccount, first, last))
	}
	for _, h := range newFollowing {
		first := r3
		if slices.Contains(headEntries(t, 3, "following", 2), h) {
			first = r2
		}
		last := r3
		if slices.Contains(headEntries(t, 7, "following", 2), h) {
			last = r4
		}
		wantChanges = append(wantChanges, fmt.Sprintf("following | %d | %d | true | started | %s | %s | %s | %d | %d", r1, r3, h, graphAccount, h, first, last))
	}
	wantChanges = append(wantChanges,
		fmt.Sprintf("followers | %d | %d | true | stopped | ghost_gone | ghost_gone | %s | %d | %d", r1, r3, graphAccount, r1, r1),
		fmt.Sprintf("followers | %d | %d | true | stopped | ghost_late | ghost_late | %s | %d | %d", r1, r3, graphAccount, r1, r2))
	slices.Sort(wantChanges)
	got = rowsOf(t, b, `SELECT list, prev_run_id, run_id, latest, change, account, follower, followee, first_seen_run, last_seen_run
		FROM shortvideo.follow_changes WHERE unique_id = '`+graphAccount+`' ORDER BY 1, 2, 3, 4, 5, 6`)
	slices.Sort(got)
	if !slices.Equal(got, wantChanges) {
		t.Errorf("follow_changes:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(wantChanges, "\n     "))
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.follow_changes`); n != 14 {
		t.Errorf("follow_changes has %d rows in all, want 14", n)
	}

	// The counters over time beside the entries each walk saw.
	got = rowsOf(t, b, `SELECT run_id, follower_count, followers_seen, followers_walk_complete, split_part(followers_walk_reason, ':', 1),
		following_count, following_seen, following_walk_complete
		FROM shortvideo.follow_count_history WHERE unique_id = '`+graphAccount+`' ORDER BY run_id`)
	want = []string{
		fmt.Sprintf("%d | 5 | 5 | true | end | 2 | 2 | true", r1),
		fmt.Sprintf("%d | 8 | 2 | false | page_limit | 5 | 2 | false", r2),
		fmt.Sprintf("%d | 11 | 11 | true | end | 8 | 8 | true", r3),
		fmt.Sprintf("%d | 12 | 4 | false | stop_at_seen | 9 | 2 | false", r4),
	}
	if !slices.Equal(got, want) {
		t.Errorf("follow_count_history:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	// An account only seen in a list has no row; every row has a run.
	if n := b.count(t, `SELECT count(*) FROM shortvideo.follow_count_history WHERE unique_id <> $1 OR run_started_at IS NULL`, graphAccount); n != 0 {
		t.Errorf("%d other rows in follow_count_history", n)
	}

	// The run report's "What changed" of run 3.
	rep, err := runs.LoadReport(context.Background(), b.pool, r3)
	if err != nil {
		t.Fatal(err)
	}
	ch := rep.Changes
	if ch == nil {
		t.Fatal("report of run 3: no what_changed")
	}
	// New in run 3: the new entries not seen by run 2's capped walk.
	if ch.NewAccounts != 4+4 || len(ch.NewAccountsTop) != 8 {
		t.Errorf("run 3: %d new accounts (%d listed), want 8", ch.NewAccounts, len(ch.NewAccountsTop))
	}
	if ch.ListsWalked != 2 || ch.ListsComplete != 2 || ch.ListsCompared != 2 || ch.Changed != 2 || ch.Unchanged != 0 || ch.Gained != 12 || ch.Lost != 2 {
		t.Errorf("run 3: %+v", ch)
	}
	wantLists := []runs.ListChange{
		{Account: graphAccount, List: "followers", PrevRun: r1, Gained: 6, Lost: 2, CountBefore: ptr(5), CountAfter: ptr(11), Seen: 11},
		{Account: graphAccount, List: "following", PrevRun: r1, Gained: 6, Lost: 0, CountBefore: ptr(2), CountAfter: ptr(8), Seen: 8},
	}
	if len(ch.Lists) != len(wantLists) {
		t.Fatalf("run 3 lists: %+v", ch.Lists)
	}
	for i, l := range ch.Lists {
		w := wantLists[i]
		if l.Account != w.Account || l.List != w.List || l.PrevRun != w.PrevRun || l.Gained != w.Gained || l.Lost != w.Lost ||
			*l.CountBefore != *w.CountBefore || *l.CountAfter != *w.CountAfter || l.Seen != w.Seen {
			t.Errorf("run 3 list %d: %+v, want %+v", i, l, w)
		}
	}
	// Run 4: nothing compared; its two walks were cut short.
	rep, err = runs.LoadReport(context.Background(), b.pool, r4)
	if err != nil {
		t.Fatal(err)
	}
	if ch := rep.Changes; ch.ListsWalked != 2 || ch.ListsComplete != 0 || ch.ListsCompared != 0 || len(ch.Lists) != 0 ||
		ch.Incomplete["page_limit"] != 1 || ch.Incomplete["stop_at_seen"] != 1 {
		t.Errorf("run 4: %+v", ch)
	}
}

// The example queries of docs/graph-change.md run on the history above
// ('some_creator' being its account), and each returns rows but two:
// the history has one account, and both its lists were walked whole.
func TestGraphChangeDocQueries(t *testing.T) {
	t.Parallel()
	b, _ := graphHistory(t)
	text, err := os.ReadFile("../docs/graph-change.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(text), "## Example queries\n\n```sql\n")
	if !ok {
		t.Fatal("docs/graph-change.md has no ```sql block under ## Example queries")
	}
	block, _, _ = strings.Cut(block, "```")
	n := 0
	for _, stmt := range strings.Split(block, ";\n") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		n++
		stmt = strings.ReplaceAll(stmt, "'some_creator'", "'"+graphAccount+"'")
		empty := strings.Contains(stmt, "HAVING count(*) > 1") || strings.Contains(stmt, "never walked")
		if rows := rowsOf(t, b, stmt); (len(rows) == 0) != empty {
			t.Errorf("%d rows:\n%s", len(rows), stmt)
		}
	}
	if n != 7 {
		t.Errorf("%d example queries, want 7", n)
	}
}

func ptr(n int64) *int64 { return &n }
