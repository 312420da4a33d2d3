package pipeline_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/plan"
	"github.com/socialcrawl/crawler/runs"
)

// atDay is a bundle on pool whose sandbox is at world day day.
func atDay(t *testing.T, pool *pgxpool.Pool, day int64) *bundle {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, WorldTime: day})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	return &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL + "/api"}
}

func billable(b *bundle, endpoint string) int64 {
	return b.sandbox.Usage(testKey).ByEndpoint[endpoint].Billable
}

// Follower-heavy job of TestStopAtSeen: followerAccounts accounts of
// followersAt0 followers each at day 0; account i gains growthStep*i
// followers a world day (token r<N>), at the head of its list. 80 (80
// pages in all) keeps the repeat's 23 pages under a third of the first
// run's at four fifths of the rows of 100. Lists are followerPage a page:
// what is counted is pages, and the growth law's arithmetic is that of
// 400 followers, 10 a day, at 50 a page, with a fifth of the rows (each
// run wrote 4,000 follows at 50).
const (
	followerAccounts = 10
	followersAt0     = 80
	growthStep       = 2
	followerPage     = 10
)

// followersAtDay is atDay with lists of followerPage a page.
func followersAtDay(t *testing.T, pool *pgxpool.Pool, day int64) *bundle {
	t.Helper()
	return setupOn(t, pool, sandbox.Config{WorldTime: day, PageSize: followerPage})
}

func followerJob(stopAtSeen bool) string {
	var handles []string
	for i := range followerAccounts {
		handles = append(handles, fmt.Sprintf("heavy%02d_f%d_r%d", i, followersAt0, growthStep*i))
	}
	return fmt.Sprintf(`
limits: {workers: 4, max_pages: 1000}
expand: {followers: {stop_at_seen: %v}}
seeds: {shortvideo: {profiles: [%s]}}
`, stopAtSeen, strings.Join(handles, ", "))
}

// TestStopAtSeen harvests the follower-heavy job at world day 0, then again
// at day 1 with stop_at_seen: the second run buys exactly the pages the
// sandbox's growth law predicts, ceil(growthStep*i/followerPage) + 1 for account i (the pages
// holding new followers, then the first page of known ones), and its
// shortvideo.follows equals that of a full crawl at day 1 in a database of
// its own.
func TestStopAtSeen(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	first := followersAtDay(t, pool, 0)
	sum := first.run(t, first.job(t, followerJob(true)))
	if sum.State != "done" {
		t.Fatalf("first run: %s %s", sum.State, sum.Reason)
	}
	firstPages := billable(first, "/shortvideo/user/followers")
	if want := int64(followerAccounts * followersAt0 / followerPage); firstPages != want { // 80
		t.Fatalf("first run bought %d follower pages, want %d", firstPages, want)
	}

	second := followersAtDay(t, pool, 1)
	sum = second.run(t, second.job(t, followerJob(true)))
	if sum.State != "done" {
		t.Fatalf("second run: %s %s", sum.State, sum.Reason)
	}
	var want, fullPages int64
	for i := range int64(followerAccounts) {
		want += (growthStep*i+followerPage-1)/followerPage + 1
		fullPages += (followersAt0 + growthStep*i + followerPage - 1) / followerPage
	}
	got := billable(second, "/shortvideo/user/followers")
	if got != want {
		t.Errorf("second run bought %d follower pages, the growth law says %d", got, want)
	}
	if want != 23 || got*3 > firstPages {
		t.Errorf("the repeat bought %d of the first run's %d pages; want 23, under a third", got, firstPages)
	}
	t.Logf("follower pages: first run %d, repeat with stop_at_seen %d (a full repeat: %d); profiles %d each run",
		firstPages, got, fullPages, billable(second, "/shortvideo/profile"))
	if stopped := first.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND kind = 'shortvideo.followers'
		AND state = 'done' AND reason LIKE 'stop_at_seen: page %'`, sum.RunID); stopped != followerAccounts {
		t.Errorf("%d lists stopped at seen, want %d", stopped, followerAccounts)
	}
	sv, err := runs.LoadSavings(context.Background(), pool, sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	// Estimate: the last full walk's pages minus the pages walked now.
	if wantSaved := int64(followerAccounts*followersAt0/followerPage) - want; sv.CreditsNotWalked != wantSaved || sv.Saved != wantSaved || sv.ListsStopped != followerAccounts {
		t.Errorf("savings %+v, want %d pages not walked by %d lists", sv, wantSaved, followerAccounts)
	}

	// The same day again, with refresh_after too: the profiles are fresh
	// (their secUids come from the database), each list stops at its first
	// page.
	third := followersAtDay(t, pool, 1)
	body := "reuse: {refresh_after: 20h}\n" + followerJob(true)
	if sum := third.run(t, third.job(t, body)); sum.State != "done" {
		t.Fatalf("third run: %s %s", sum.State, sum.Reason)
	}
	if p, f := billable(third, "/shortvideo/profile"), billable(third, "/shortvideo/user/followers"); p != 0 || f != followerAccounts {
		t.Errorf("repeat with refresh_after and stop_at_seen bought %d profiles and %d follower pages, want 0 and %d", p, f, followerAccounts)
	}

	// A full crawl at day 1 into a database of its own finds the same follows.
	fullPool := testPool(t)
	full := followersAtDay(t, fullPool, 1)
	if sum := full.run(t, full.job(t, followerJob(false))); sum.State != "done" {
		t.Fatalf("full run: %s %s", sum.State, sum.Reason)
	}
	if got := billable(full, "/shortvideo/user/followers"); got != fullPages {
		t.Errorf("full crawl at day 1 bought %d pages, want %d", got, fullPages)
	}
	const follows = `SELECT follower, followee, raw::text FROM shortvideo.follows ORDER BY 1, 2`
	a, b := dump(t, pool, follows), dump(t, fullPool, follows)
	wantRows := followerAccounts*followersAt0 + growthStep*followerAccounts*(followerAccounts-1)/2
	if len(a) != wantRows || len(b) != wantRows {
		t.Fatalf("follows: %d incremental, %d full; want %d", len(a), len(b), wantRows)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("follows differ at row %d: %s vs %s", i, a[i], b[i])
		}
	}
}

// dump returns query's rows as text lines.
func dump(t *testing.T, pool *pgxpool.Pool, query string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), query)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFullWalkEvery: with full_walk_every: 2, a list cut short by
// stop_at_seen is walked whole on its next run, and cut short again on the
// one after.
func TestFullWalkEvery(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	job := `
reuse: {full_walk_every: 2}
expand: {followers: {stop_at_seen: true}}
seeds: {shortvideo: {profiles: [walker_f500_r10]}}
`
	var pages []int64
	var reasons []string
	for day := range int64(4) {
		b := atDay(t, pool, day)
		sum := b.run(t, b.job(t, job))
		pages = append(pages, billable(b, "/shortvideo/user/followers"))
		var reason string
		if err := pool.QueryRow(context.Background(), `SELECT reason FROM crawl.tasks WHERE run_id = $1 AND kind = 'shortvideo.followers'`, sum.RunID).Scan(&reason); err != nil {
			t.Fatal(err)
		}
		reasons = append(reasons, strings.SplitN(reason, ":", 2)[0])
	}
	// 500 + 10*day followers: 10, then 2 (10 new + a known page), 11 (whole), 2.
	if fmt.Sprint(pages) != "[10 2 11 2]" {
		t.Errorf("pages per run %v, want [10 2 11 2] (reasons %v)", pages, reasons)
	}
	if reasons[1] != "stop_at_seen" || reasons[2] == "stop_at_seen" || reasons[3] != "stop_at_seen" {
		t.Errorf("reasons %v", reasons)
	}
}

// TestRefreshAfter: a second run of a profile job the same world day with
// refresh_after: 20h buys no profile an earlier run fetched, ends those
// tasks skipped as fresh with no credit, and still walks their lists from
// the stored secUids; a profile not fetched before is bought.
func TestRefreshAfter(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	const seeds = `[fresh0_f60_g0, fresh1_f60_g0, fresh2_f60_g0, private_fresh3_f60]`
	body := func(profiles string) string {
		return `
reuse: {refresh_after: 20h}
expand: {followers: {}}
seeds: {shortvideo: {profiles: ` + profiles + `}}
`
	}
	first := atDay(t, pool, 0)
	run1 := first.run(t, first.job(t, body(seeds))).RunID
	if got := billable(first, "/shortvideo/profile"); got != 4 {
		t.Fatalf("first run bought %d profiles, want 4", got)
	}

	second := atDay(t, pool, 0)
	job := second.job(t, body(`[fresh0_f60_g0, fresh1_f60_g0, fresh2_f60_g0, private_fresh3_f60, new4_f60_g0]`))
	rp, err := pipeline.PlanReuse(context.Background(), pool, job, job.SeedTasks())
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Fresh) != 4 {
		t.Errorf("plan: %d fresh tasks, want 4: %+v", len(rp.Fresh), rp.Fresh)
	}
	children := 0
	for _, f := range rp.Fresh {
		children += len(f.Children)
		if f.Fetch.RunID != run1 {
			t.Errorf("plan: %s fresh from run %d, want %d", f.Task.Key, f.Fetch.RunID, run1)
		}
	}
	if children != 3 { // the private account has no lists
		t.Errorf("plan: fresh profiles expand to %d lists, want 3", children)
	}
	// crawler plan's view of the same: a line per fresh fetch.
	tx, err := pool.BeginTx(context.Background(), pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	mp, err := plan.Make(context.Background(), tx, job, 0, false)
	_ = tx.Rollback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	skips := 0
	for _, line := range mp.Reuse {
		if strings.HasPrefix(line, "skip shortvideo.profile ") && strings.Contains(line, fmt.Sprintf("fetched by run %d", run1)) {
			skips++
		}
	}
	if skips != 4 {
		t.Errorf("plan's reuse lines = %q, want 4 fresh profiles skipped", mp.Reuse)
	}

	sum := second.run(t, job)
	if sum.State != "done" || sum.Failed != 0 {
		t.Fatalf("second run: %s %s, %d failed", sum.State, sum.Reason, sum.Failed)
	}
	if got := billable(second, "/shortvideo/profile"); got != 1 {
		t.Errorf("second run bought %d profiles, want 1 (the new one)", got)
	}
	// Each list of 60 followers is 2 pages: 3 fresh profiles + the new one.
	if got := billable(second, "/shortvideo/user/followers"); got != 8 {
		t.Errorf("second run bought %d follower pages, want 8", got)
	}
	fresh := second.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND kind = 'shortvideo.profile'
		AND state = 'skipped' AND credits_saved = 1 AND reason LIKE 'fresh: within refresh_after 20h0m0s: fetched by run `+fmt.Sprint(run1)+` at %'`, sum.RunID)
	if fresh != 4 {
		t.Errorf("%d profile tasks skipped as fresh, want 4:\n%s", fresh, strings.Join(second.tasks(t, sum.RunID), "\n"))
	}
	sv, err := runs.LoadSavings(context.Background(), pool, sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if sv.FetchesSkipped != 4 || sv.FreshSaved != 4 || sv.Saved != 4 {
		t.Errorf("savings %+v, want 4 fetches skipped", sv)
	}
	// crawler runs shows the same credits saved beside the credits billed.
	list, err := runs.List(context.Background(), pool, job.Name, 5)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(list, func(r runs.Summary) bool { return r.ID == sum.RunID }); i < 0 || list[i].CreditsSaved != 4 {
		t.Errorf("crawler runs = %+v, want run %d with 4 credits saved", list, sum.RunID)
	}
	// Freshness does not chain: a third run still finds run 1's fetch
	// (the second run's skips are no fetches).
	third := atDay(t, pool, 0)
	sum3 := third.run(t, job)
	if got := billable(third, "/shortvideo/profile"); got != 0 {
		t.Errorf("third run bought %d profiles, want 0", got)
	}
	if n := third.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND reason LIKE 'fresh:% by run `+fmt.Sprint(run1)+` %'`, sum3.RunID); n != 4 {
		t.Errorf("third run: %d tasks fresh from run %d, want 4", n, run1)
	}
}

// TestReuseJobKeys: the reuse keys are checked like any other.
func TestReuseJobKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{"reuse: {full_walk_every: 0}\n", "reuse.full_walk_every: must be between 1"},
		{"reuse: {refresh_after: soon}\n", "reuse.refresh_after: \"soon\" is not a duration"},
		{"reuse: {seeds: {shortvideo.profilez: 1h}}\n", "reuse.seeds.shortvideo.profilez: names no seed list"},
		{"reuse: {seeds: {shortvideo.sec_uids: 1h}}\n", "reuse.seeds.shortvideo.sec_uids: shortvideo.sec_uids seeds are lists"},
		{"expand: {follower_profiles: {stop_at_seen: true}}\n", "expand.follower_profiles.stop_at_seen: applies only to lists"},
		{"expand: {followers: {refresh_after: 1h}}\n", "expand.followers.refresh_after: applies only to edges to an entity"},
		{"reuse: {refresh_after: -1h}\n", "reuse.refresh_after: must not be negative"},
	} {
		text := "name: x\napi: {base_url: http://127.0.0.1:1/api}\nseeds: {shortvideo: {profiles: [a]}}\n" + tc.body
		_, err := jobfile.Parse("j.yaml", []byte(text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.body, err, tc.want)
		}
	}
	ok := "name: x\napi: {base_url: http://127.0.0.1:1/api}\nseeds: {shortvideo: {profiles: [a]}}\n" +
		"reuse: {refresh_after: 20h, seeds: {shortvideo.profiles: 6h}, full_walk_every: 3, full_walk_after: 168h}\n" +
		"expand: {followers: {stop_at_seen: true}, follower_profiles: {refresh_after: 72h}}\n"
	job, err := jobfile.Parse("j.yaml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if ts := job.SeedTasks(); len(ts) != 1 || ts[0].RefreshAfter.String() != "6h0m0s" {
		t.Errorf("seed tasks %+v, want refresh_after 6h", ts)
	}
}

// A walk capped by its page limit is not a full walk: stop_at_seen does
// not trust it, so the next run walks the list again to the cap rather than
// stopping at its first seen page; once a walk reaches the list's end,
// stop_at_seen applies.
func TestCappedWalkIsNotFull(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	job := func(b *bundle, pages int) *jobfile.Job {
		return b.job(t, fmt.Sprintf("expand: {followers: {max_pages: %d, stop_at_seen: true}}\nseeds: {shortvideo: {profiles: [capped_f200_g0]}}\n", pages))
	}
	followerPages := func(b *bundle, j *jobfile.Job) (int64, string) {
		t.Helper()
		sum := b.run(t, j)
		var reason string
		if err := pool.QueryRow(context.Background(), `SELECT reason FROM crawl.tasks WHERE run_id = $1 AND kind = 'shortvideo.followers'`, sum.RunID).Scan(&reason); err != nil {
			t.Fatal(err)
		}
		return billable(b, "/shortvideo/user/followers"), reason
	}
	for i, want := range []struct {
		maxPages int
		pages    int64
		reason   string
	}{
		{3, 3, "page_limit"}, // 200 followers are 4 pages: capped
		{3, 3, "page_limit"}, // not trusted: walked again to the cap, not stopped at page 1
		{10, 4, "end"},       // a full walk
		{10, 1, "stop_at_seen"},
	} {
		b := atDay(t, pool, 0)
		pages, reason := followerPages(b, job(b, want.maxPages))
		if pages != want.pages || !strings.HasPrefix(reason, want.reason) {
			t.Errorf("run %d: %d follower pages, reason %q; want %d, %q", i+1, pages, reason, want.pages, want.reason)
		}
	}
}
