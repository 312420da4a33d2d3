package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// The content world's accounts of TestContentNightsCombined, chosen from
// its ground truth (sandbox.CreatorContentChanges, PostContentChanges) for
// what they do on days 0 to 3: a creator of 2 videos (3 comments each)
// who loses a comment on day 1 and day 3, posts a video on day 2, and
// gets new comments and replies; a photo-sharing account of 2 posts (3
// comments each, most with more replies than a comments page shows) that
// loses a comment, with its replies, on day 1; one whose posts get new
// comments every day.
const (
	comboCreator = "cv3_v2_c3"
	comboLoses   = "cp15_p2_c3"
	comboGrows   = "cp9_p2_c3"
	comboLastDay = 3
	// comboBudget binds: a night that buys everything costs about 90
	// credits at the real prices (a post's comments with replies, 15 a
	// page).
	comboBudget  = 40
	comboWorkers = 2
)

func comboJob(t *testing.T, base string) string {
	return writeJob(t, fmt.Sprintf(`name: content-combo
api: {base_url: %s, preset: scrapecreators, max_retries: 2, timeout: 5s}
limits: {workers: %d, max_pages: 100, max_credits: %d, lease_timeout: 2m}
archive: true
comments: {include_replies: true}
seeds: {shortvideo: {profiles: [%s]}, photosocial: {profiles: [%s, %s]}}
expand:
  videos: {stop_at_seen: true}
  video_comments: {}
  comment_replies: {}
  posts: {stop_at_seen: true}
  post_comments: {}
`, base, comboWorkers, comboBudget, comboCreator, comboLoses, comboGrows))
}

// comboContentEndpoints are the lists whose purchases the rule of issue 32
// decides: bought again only when their counter moved.
var comboContentEndpoints = []string{comboEpVideoComms, comboEpVideoReplies, comboEpPostComms, comboEpPostReplies}

// The real service's content endpoints, as the sandbox counts them.
const (
	comboEpVideoComms   = "/v1/tiktok/video/comments"
	comboEpVideoReplies = "/v1/tiktok/video/comment/replies"
	comboEpPostComms    = "/v2/instagram/post/comments"
	comboEpPostReplies  = "/v1/instagram/post/comment/replies"
)

// Every promise of the content nights at once (issue 32): change-driven
// revisits of a changing content world at the real service's prices, a
// credit budget that binds every night, two processes on each night's
// run, a kill -9 mid-night and its resume, a prune before each night and
// a replay of the archived pages at the end. Each night: the sandbox never
// bills more than max_credits, the run's ledger is the sandbox's count,
// no page is bought twice in a night (but what the killed process had in
// flight), and no content list whose page a run committed is bought again
// unless the ground truth says its counter moved since, or a budget stop
// cut its walk (then at most the pages the cut walk committed: the next
// walk starts from the list's first page; docs/reuse.md). The nights go on
// at the last day until one ends under its budget; then every comment and
// reply of the world that day is stored, every stored one gone from it is
// marked deleted, and replaying the runs the prune kept rewrites the same
// rows.
func TestContentNightsCombined(t *testing.T) {
	t.Parallel()
	db := pgtest.DB(t)
	ctx := context.Background()
	conn := testConn(t, db)
	defer conn.Close(ctx)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}

	// committed: the content requests whose page a run committed, by
	// query, with the world day of that night.
	committed := map[string]int64{}
	var lastRun int64
	done, stopped := false, 0
	// cut: the content lists a budget stop cut and no walk ended since
	// (their task keys: a list's URL, a comment's id), with the pages
	// their cut walk committed; cuts, rebought: all of them, and the
	// credits spent buying those pages again.
	cut := map[string]int{}
	var cuts int
	var rebought int64
	// The nights go through the days to the last, and on at the last until
	// one ends under its budget: the truth is the last day's. (A night of
	// an earlier day may end under it too, when its work fits: the world
	// then moves on.)
	var day int64
	for night := 0; night < 12 && !(done && day == comboLastDay); night++ {
		day = min(int64(night), comboLastDay)
		runID := int64(night + 1)
		if night > 0 {
			if r := invoke(t, env, "prune", "--keep-runs", "2"); r.code != 0 {
				t.Fatalf("night %d: prune exit %d: %s", night, r.code, r.stderr)
			}
		}
		up := newUpstreamWith(t, sandbox.Config{Preset: sandbox.PresetScrapeCreators, Churn: sandbox.ChurnContent, WorldTime: day, PageSize: 10})
		job := comboJob(t, strings.TrimSuffix(up.url, "/api")) // the real preset serves its own paths
		killed := night == 1
		if killed {
			// Killed at its 5th request, alone: its sessions end, its
			// leases lapse and its credit hold stops beating (aged here
			// instead of waited for: lease_timeout, 15 s), then it is
			// started again on the night's run.
			var victim atomic.Pointer[os.Process]
			var kill sync.Once
			up.setTrigger(func(n int64) {
				if p := victim.Load(); p != nil && n >= 5 {
					kill.Do(func() { _ = p.Signal(syscall.SIGKILL) })
				}
			})
			p := startCrawler(t, db, "run", "--new-run", job)
			victim.Store(p.cmd.Process)
			if code := p.wait(); code != -int(syscall.SIGKILL) {
				t.Fatalf("night %d: exit %d, want killed: %s", night, code, p.stderr.String())
			}
			pgtest.WaitNone(t, conn, "sessions of the killed process",
				`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			if _, err := conn.Exec(ctx, `UPDATE crawl.tasks SET lease_expires_at = now() - interval '1 second' WHERE state = 'leased'`); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, `UPDATE crawl.credit_holds SET beat_at = least(beat_at, now() - interval '1 minute')`); err != nil {
				t.Fatal(err)
			}
		}
		// Two processes: the first runs the night (a new run), the second
		// joins it at the upstream's third request; after the kill both
		// resume the killed run at once.
		var a, b *process
		var codes []int
		if killed {
			a = startCrawler(t, db, "run", "--resume", fmt.Sprint(runID), job)
			b = startCrawler(t, db, "run", "--resume", fmt.Sprint(runID), job)
			codes = []int{a.wait(), b.wait()}
		} else {
			joinAt := up.n.Load() + 3
			second := joinRunAt(t, up, joinAt, db, runID, job)
			a = startCrawler(t, db, "run", "--new-run", job)
			codes = append(codes, a.wait())
			var late bool
			if b, late = second(); late {
				t.Errorf("night %d: the first process ended before the upstream's request %d: no second process joined it", night, joinAt)
			}
			codes = append(codes, b.wait())
		}
		up.setTrigger(nil)
		for i, code := range codes {
			if code != 0 && code != exitSpent {
				t.Fatalf("night %d: process %d exit %d:\n%s%s", night, i+1, code, a.stderr.String(), b.stderr.String())
			}
		}
		var state string
		var billed, held int64
		if err := conn.QueryRow(ctx, `SELECT state, credits_billed, (SELECT coalesce(sum(held), 0) FROM crawl.credit_holds WHERE run_id = $1)
			FROM crawl.runs WHERE id = $1`, runID).Scan(&state, &billed, &held); err != nil {
			t.Fatalf("night %d: run %d: %v", night, runID, err)
		}
		done = state == "done"
		if state == "stopped" {
			stopped++
		}
		lastRun = runID

		// The budget, at the sandbox's charges; the ledger.
		var credits int64
		buys := map[string]int{}
		for _, ar := range up.sb.Arrivals(cliKey) {
			credits += ar.Credits
			if ar.Credits > 0 {
				buys[ar.Endpoint+"?"+ar.Query]++
			}
		}
		if credits > comboBudget {
			t.Errorf("night %d: the sandbox charged %d credits, over max_credits %d", night, credits, comboBudget)
		}
		if !killed && (credits != billed || held != 0) {
			t.Errorf("night %d: the sandbox charged %d credits, the run billed %d (%d held)", night, credits, billed, held)
		}
		if killed && (credits < billed || credits > billed+held) {
			t.Errorf("night %d: the sandbox charged %d credits, the run billed %d and the killed process holds %d", night, credits, billed, held)
		}
		// Nothing bought twice in a night, but the requests the killed
		// process had in flight.
		var twice []string
		for req, n := range buys {
			if n > 1 {
				twice = append(twice, fmt.Sprintf("%s x%d", req, n))
			}
		}
		if allowed := map[bool]int{false: 0, true: comboWorkers}[killed]; len(twice) > allowed {
			t.Errorf("night %d: bought twice: %v (at most %d)", night, twice, allowed)
		}
		// No page of a content list committed on an earlier night bought
		// again unless the list's counter moved since (the ground truth),
		// or a budget stop cut the list's walk since: the next run that
		// walks it starts from its first page (docs/reuse.md, "Content
		// lists"), buying again at most the pages the cut walk committed.
		again := map[string]int{}
		for _, ar := range up.sb.Arrivals(cliKey) {
			if ar.Credits == 0 || !slices.Contains(comboContentEndpoints, ar.Endpoint) {
				continue
			}
			from, ok := committed[comboListKey(t, ar.Query)]
			switch list := comboList(t, ar.Query); {
			case !ok || comboListMoved(t, ar.Query, from, day):
			case cut[list] > 0:
				again[list]++
				rebought += ar.Credits
				if again[list] > cut[list] {
					t.Errorf("night %d (day %d): %s?%s bought again, the %d pages its walk cut by the budget committed already bought again", night, day, ar.Endpoint, ar.Query, cut[list])
				}
			default:
				t.Errorf("night %d (day %d): %s?%s bought again, committed on day %d, its counter unchanged since", night, day, ar.Endpoint, ar.Query, from)
			}
		}
		rows, err := conn.Query(ctx, `SELECT query FROM crawl.pages WHERE run_id = $1`, runID)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			committed[comboListKey(t, q)] = day
		}
		// The content lists this night's walks ended, and those its budget
		// stop cut: pages committed, the walk not ended.
		rows, err = conn.Query(ctx, `SELECT key, state = 'done', pages FROM crawl.tasks WHERE run_id = $1 AND (state = 'done' OR pages > 0)
			AND kind IN ('shortvideo.video_comments', 'shortvideo.comment_replies', 'photosocial.comments', 'photosocial.comment_replies')`, runID)
		if err != nil {
			t.Fatal(err)
		}
		cutTonight := 0
		for rows.Next() {
			var key string
			var ended bool
			var pages int
			if err := rows.Scan(&key, &ended, &pages); err != nil {
				t.Fatal(err)
			}
			if delete(cut, key); !ended {
				cut[key] = pages
				cutTonight++
			}
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		if cutTonight > 2*comboWorkers {
			t.Errorf("night %d: %d content lists cut by the budget stop, more than the %d workers had in progress", night, cutTonight, 2*comboWorkers)
		}
		cuts += cutTonight
		if testing.Verbose() {
			for _, ar := range up.sb.Arrivals(cliKey) {
				t.Logf("  %d %s?%s %d", ar.Status, ar.Endpoint, ar.Query, ar.Credits)
			}
			t.Logf("first: %s\nsecond: %s", a.stderr.String(), b.stderr.String())
		}
		t.Logf("night %d (day %d): run %s, %d credits, %d requests, %d pages committed", night, day, state, credits, len(up.sb.Arrivals(cliKey)), len(qs))
	}
	t.Logf("%d content lists cut by budget stops; %d credits bought their pages again", cuts, rebought)
	if !done {
		t.Fatalf("no night ended under its budget of %d", comboBudget)
	}
	// The budget binds on the first nights: two at least. What a night
	// buys before its stop depends on the order two processes lease in,
	// and on what the killed one bought; once, under a loaded make test,
	// day 2's remaining work fitted the budget (27 credits, after 40 and
	// 35).
	if stopped < 2 {
		t.Fatalf("%d of %d nights stopped by the budget: it does not bind", stopped, lastRun)
	}
	comboCheckTruth(t, conn)

	// A replay of the runs the prune kept rewrites the same rows.
	before := comboRows(t, conn)
	for _, id := range []int64{lastRun - 1, lastRun} {
		if r := invoke(t, env, "replay", "--run", fmt.Sprint(id)); r.code != 0 {
			t.Fatalf("replay --run %d: exit %d\n%s%s", id, r.code, r.stdout, r.stderr)
		}
		if after := comboRows(t, conn); after != before {
			t.Errorf("replay of run %d changed the rows:\n%s", id, diffLines(before, after))
		}
	}
}

// joinRunAt starts `crawler run --resume runID job` when the upstream sees
// its n-th request; the returned function waits for that start and gives
// the process, and whether it started only then, the upstream having seen
// fewer requests (the test's bug, or the crawler's).
func joinRunAt(t *testing.T, up *upstream, n int64, db string, runID int64, job string) func() (*process, bool) {
	var second *process
	var once sync.Once
	late := true
	join := func(onTime bool) func() {
		return func() {
			second, late = startCrawler(t, db, "run", "--resume", fmt.Sprint(runID), job), !onTime
		}
	}
	up.setTrigger(func(i int64) {
		if i >= n {
			once.Do(join(true))
		}
	})
	return func() (*process, bool) {
		once.Do(join(false))
		return second, late
	}
}

// comboListKey is the page of a content list a request's query asks for:
// the list's parent (the video's or post's URL, the comment's id) and the
// cursor. The archive keeps the query of the contract's terms, which the
// real dialect's request extends (include_replies, sort_by).
func comboListKey(t *testing.T, query string) string {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	return q.Get("url") + " " + q.Get("comment_id") + " " + q.Get("cursor")
}

// comboList is the content list a request's query asks for, as its task
// key: the comment's id for its replies, else the video's or post's URL.
func comboList(t *testing.T, query string) string {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	if id := q.Get("comment_id"); id != "" {
		return id
	}
	return q.Get("url")
}

// comboListMoved reports whether the content list a request of query asks
// for had another counter at day to than at day from.
func comboListMoved(t *testing.T, query string, from, to int64) bool {
	t.Helper()
	if from == to {
		return false
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(slices.Concat(q["url"], q["comment_id"], q["aweme_id"], q["video_id"]), " ")
	var diffs []sandbox.ContentDiff
	d, err := sandbox.CreatorContentChanges(sandbox.ChurnContent, comboCreator, from, to)
	if err != nil {
		t.Fatal(err)
	}
	diffs = append(diffs, d)
	for _, code := range comboPostCodes(t, to) {
		d, err := sandbox.PostContentChanges(sandbox.ChurnContent, code, from, to)
		if err != nil {
			t.Fatal(err)
		}
		diffs = append(diffs, d)
	}
	for _, d := range diffs {
		for _, l := range d.Lists {
			id := l.Comment
			if id == "" {
				id = l.Video + l.Post
			}
			if strings.Contains(all, id) && l.CountFrom != l.CountTo {
				return true
			}
		}
	}
	return false
}

// comboPostCodes are the posts of both photo-sharing accounts at day.
func comboPostCodes(t *testing.T, day int64) []string {
	t.Helper()
	w := world.New(10, day, sandbox.ChurnContent)
	var codes []string
	for _, h := range []string{comboLoses, comboGrows} {
		a, err := w.Account(h)
		if err != nil {
			t.Fatal(err)
		}
		posts, win := w.CreatorPosts(a, 0)
		if win.More {
			t.Fatalf("%s has more than a page of posts on day %d", h, day)
		}
		for _, p := range posts {
			codes = append(codes, p.Code)
		}
	}
	return codes
}

// comboCheckTruth compares the stored comments and replies with the world
// on the last day: each list's entries stored and not deleted are exactly
// the world's, and every other stored entry of the list is marked deleted.
func comboCheckTruth(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	truth, err := sandbox.ContentAt(sandbox.ChurnContent, comboLastDay)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(cs []sandbox.ContentComment) []string {
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			out = append(out, c.ID)
		}
		slices.Sort(out)
		return out
	}
	stored := func(q string, args ...any) []string {
		rows, err := conn.Query(context.Background(), q, args...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var lists, entries, gone int
	check := func(what string, want []string, table, where string, args ...any) {
		t.Helper()
		lists++
		entries += len(want)
		live := stored(`SELECT comment_id FROM `+table+` WHERE `+where+` AND NOT coalesce(deleted_run > last_seen_run, false) ORDER BY 1`, args...)
		if !slices.Equal(live, want) {
			t.Errorf("%s: stored %v, the world has %v", what, live, want)
		}
		dead := stored(`SELECT comment_id FROM `+table+` WHERE `+where+` AND deleted_run > last_seen_run ORDER BY 1`, args...)
		gone += len(dead)
		for _, id := range dead {
			if slices.Contains(want, id) {
				t.Errorf("%s: %s marked deleted, the world has it", what, id)
			}
		}
	}
	videos, err := truth.CreatorVideos(comboCreator)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range videos {
		cs := truth.VideoComments(v.ID, comboCreator)
		check("video "+v.ID+"'s comments", ids(cs), "shortvideo.comments", `video_id = $1 AND parent_comment_id IS NULL`, v.ID)
		for _, c := range cs {
			check("comment "+c.ID+"'s replies", ids(truth.CommentReplies(v.ID, comboCreator, c.ID)), "shortvideo.comments", `parent_comment_id = $1`, c.ID)
		}
	}
	for _, code := range comboPostCodes(t, comboLastDay) {
		cs := truth.PostComments(code)
		check("post "+code+"'s comments", ids(cs), "photosocial.comments", `post_code = $1 AND parent_comment_id IS NULL`, code)
		for _, c := range cs {
			check("comment "+c.ID+"'s replies", ids(truth.PostCommentReplies(code, c.ID)), "photosocial.comments", `post_code = $1 AND parent_comment_id = $2`, code, c.ID)
		}
	}
	t.Logf("the world on day %d: %d lists, %d entries; %d stored entries marked deleted", comboLastDay, lists, entries, gone)
	if gone == 0 {
		t.Errorf("no stored comment marked deleted: the world's deletions were not seen")
	}
}

// comboRows is every row of the harvest's schemas, without timestamps.
func comboRows(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT table_schema || '.' || table_name FROM information_schema.tables
		WHERE table_schema IN ('shortvideo', 'photosocial') AND table_type = 'BASE TABLE' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, tb := range tables {
		rows, err := conn.Query(ctx, `SELECT (SELECT jsonb_object_agg(k, v) FROM jsonb_each(to_jsonb(x)) AS e(k, v) WHERE k NOT LIKE '%\_at')::text
			FROM `+tb+` x ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s\n%s\n", tb, strings.Join(lines, "\n"))
	}
	return out.String()
}
