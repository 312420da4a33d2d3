package pipeline_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/runs"
)

// checkCounts runs each query and compares its count.
func (b *bundle) checkCounts(t *testing.T, want map[string]int64) {
	t.Helper()
	for q, n := range want {
		if got := b.count(t, q); got != n {
			t.Errorf("%s\n  = %d, want %d", q, got, n)
		}
	}
}

// noRefusals fails the test for every request the sandbox answered 400.
func (b *bundle) noRefusals(t *testing.T) {
	t.Helper()
	for _, a := range b.sandbox.Arrivals(testKey) {
		if a.Status == 400 {
			t.Errorf("400 for %s?%s", a.Endpoint, a.Query)
		}
	}
}

// Reels found by a reels search under the real service's dialect are
// followed by the URL their answer carries: every reel's comments and
// transcript are fetched, none asked on a host the real platform does not
// have (issue 25, finding 2).
func TestReelsRealDialect(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{})
	job := b.job(t, "  preset: scrapecreators\nseeds: {photosocial: {reels_searches: [surf n20]}}\n"+
		"expand: {reel_comments: {}, reel_transcripts: {}}\n")
	if sum := b.run(t, job); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.noRefusals(t)
	b.checkCounts(t, map[string]int64{
		`SELECT count(*) FROM photosocial.reels`:                                                               20,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.comments' AND state = 'done'`:              20,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.transcript' AND state = 'done'`:            20,
		`SELECT count(*) FROM crawl.tasks WHERE key NOT LIKE 'https://www.instagram.com/reel/%' AND depth > 0`: 0,
		`SELECT count(*) FROM photosocial.transcript_checks`:                                                   20,
		`SELECT count(DISTINCT post_code) FROM photosocial.comments`:                                           b.count(t, `SELECT count(*) FROM photosocial.reels r WHERE (r.raw->>'comment_count')::int > 0`),
	})
}

// Trending authors the real service names by ids only (no unique_id) get
// their profile too, asked by user_id: every author of the feed is fetched
// (issue 25, finding 9).
func TestHandlelessAuthorsByUserID(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{})
	job := b.job(t, "  preset: scrapecreators\nseeds: {shortvideo: {trending_feed: true}}\nexpand: {video_authors: {}}\n")
	if sum := b.run(t, job); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.noRefusals(t)
	b.checkCounts(t, map[string]int64{
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'shortvideo.profile' AND state = 'done'`:       20,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'shortvideo.profile' AND key LIKE 'user_id:%'`: 10,
		`SELECT count(*) FROM shortvideo.users WHERE profile_fetched`:                                 20,
		// Each author known only by ids is the account its profile names.
		`SELECT count(*) FROM shortvideo.users s JOIN shortvideo.users p ON p.user_id = s.user_id AND p.profile_fetched
		   WHERE s.unique_id LIKE 'secuid:%'`: 10,
	})
}

// The hashtags a video carries in the real service's answers (cha_list)
// are stored, linked to the video (issue 25, finding 9); the contract's
// videos carry none.
func TestVideoHashtagsRealDialect(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{})
	job := b.job(t, "  preset: scrapecreators\nseeds: {shortvideo: {hashtag_searches: [fit n12], keyword_searches: [cats n5]}}\nexpand: {}\n")
	if sum := b.run(t, job); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.checkCounts(t, map[string]int64{
		`SELECT count(*) FROM shortvideo.videos`: 17,
		// Every description's hashtags, each a partial hashtag row.
		`SELECT count(*) FROM shortvideo.videos v WHERE (SELECT count(*) FROM shortvideo.video_hashtags h WHERE h.video_id = v.video_id)
		   <> (SELECT count(DISTINCT m[1]) FROM regexp_matches(v.description, '#(\S+)', 'g') m)`: 0,
		`SELECT count(*) FROM shortvideo.video_hashtags`:                                             b.count(t, `SELECT count(*) FROM (SELECT DISTINCT v.video_id, m[1] FROM shortvideo.videos v, regexp_matches(v.description, '#(\S+)', 'g') m) x`),
		`SELECT count(*) FROM shortvideo.hashtags WHERE NOT raw_partial OR raw->>'cha_name' <> name`: 0,
	})
}

// contentJob harvests a creator's videos with what is said under them, and
// a photo-sharing profile's posts, reels and highlights, with the real
// service's own endpoints.
const contentJob = `
  preset: scrapecreators
limits: {workers: 4, max_pages: 5, max_depth: 1}
comments: {include_replies: true}
seeds:
  shortvideo:
    profiles: [creator_v12_c6]
    videos: ["https://www.tiktok.com/@solo_c3/video/7000000000000000042"]
  photosocial:
    profiles: [studio_p9_c3_h2]
    media: ["https://www.instagram.com/studio_p9_c3_h2/p/Dseed01_c2/"]
expand:
  videos: {max_pages: 2}
  video_comments: {}
  video_transcripts: {}
  comment_replies: {}
  posts: {}
  reels: {}
  highlights: {}
  highlight_details: {}
  post_comments: {max_pages: 2}
  post_transcripts: {}
`

// A creator's videos, their comments with every reply and their
// transcripts; a photo-sharing profile's posts, reels and highlights with
// their comments (replies beyond those shown included) and transcripts:
// every entry the sandbox serves is stored, nothing bought twice, nothing
// refused (issue 27).
func TestCreatorContentRealDialect(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{PageSize: 10})
	job := b.job(t, contentJob)
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.noRefusals(t)
	bought := map[string]int{}
	for _, a := range b.sandbox.Arrivals(testKey) {
		if a.Status == 200 {
			if bought[a.Endpoint+"?"+a.Query]++; bought[a.Endpoint+"?"+a.Query] == 2 {
				t.Errorf("bought twice: %s?%s", a.Endpoint, a.Query)
			}
		}
	}
	b.checkCounts(t, map[string]int64{
		// 12 videos, two pages of 10; each has 6 comments (c6).
		`SELECT count(*) FROM shortvideo.profile_videos WHERE unique_id = 'creator_v12_c6'`:                                                      12,
		`SELECT count(*) FROM shortvideo.videos v JOIN shortvideo.profile_videos l USING (video_id) WHERE v.author_unique_id = 'creator_v12_c6'`: 12,
		`SELECT count(*) FROM shortvideo.video_snapshots s JOIN shortvideo.profile_videos l USING (video_id)`:                                    12,
		`SELECT count(*) FROM shortvideo.comments WHERE parent_comment_id IS NULL`:                                                               12*6 + 3,
		// Every reply a comment says it has.
		`SELECT coalesce(sum(reply_count), 0) - (SELECT count(*) FROM shortvideo.comments WHERE parent_comment_id IS NOT NULL)
		   FROM shortvideo.comments WHERE parent_comment_id IS NULL`: 0,
		`SELECT count(*) FROM shortvideo.comments r WHERE r.parent_comment_id IS NOT NULL
		   AND NOT EXISTS (SELECT 1 FROM shortvideo.comments c WHERE c.comment_id = r.parent_comment_id)`: 0,
		`SELECT count(*) FROM shortvideo.transcripts WHERE has_speech`: 13,
		// Posts: 9, a third of them reels; every post's comments, every
		// video post's transcript; the reels list's reels once each.
		`SELECT count(*) FROM photosocial.profile_posts WHERE username = 'studio_p9_c3_h2'`:                                                                         9,
		`SELECT count(*) FROM photosocial.profile_reels WHERE username = 'studio_p9_c3_h2'`:                                                                         3,
		`SELECT count(*) FROM photosocial.posts WHERE product_type = 'clips'`:                                                                                       3 + 1,
		`SELECT count(*) FROM photosocial.post_snapshots`:                                                                                                           10,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.comments'`:                                                                                      10,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.transcript'`:                                                                                    4,
		`SELECT count(*) FROM photosocial.comments c WHERE parent_comment_id IS NULL AND NOT EXISTS (SELECT 1 FROM photosocial.posts p WHERE p.code = c.post_code)`: 0,
		// Replies: all of every comment's child_comment_count, beyond the three shown.
		`SELECT coalesce(sum(child_comment_count), 0) - (SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NOT NULL)
		   FROM photosocial.comments WHERE parent_comment_id IS NULL AND post_code IN (SELECT code FROM photosocial.posts)`: 0,
		`SELECT count(*) FROM photosocial.profile_highlights WHERE username = 'studio_p9_c3_h2'`: 2,
		`SELECT count(*) FROM photosocial.highlights`:                                            2,
		`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL`:              9*3 + 2,
		`SELECT count(*) FROM crawl.tasks WHERE state <> 'done'`:                                 0,
	})
	// The run report shows them: their tasks by kind, their rows by table.
	rep, err := runs.LoadReport(context.Background(), b.pool, sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	kinds, tables := map[string]int64{}, map[string]int64{}
	for _, k := range rep.Kinds {
		kinds[k.Kind] = k.Done
	}
	for _, tr := range rep.Tables {
		tables[tr.Table] = tr.Rows
	}
	for _, k := range []string{"shortvideo.profile_videos", "shortvideo.video", "shortvideo.video_comments", "shortvideo.comment_replies",
		"shortvideo.transcript", "photosocial.user_posts", "photosocial.user_reels", "photosocial.post", "photosocial.comment_replies", "photosocial.highlights"} {
		if kinds[k] == 0 {
			t.Errorf("the report shows no %s task done", k)
		}
	}
	for _, tb := range []string{"shortvideo.profile_videos", "shortvideo.comments", "shortvideo.transcripts", "photosocial.posts",
		"photosocial.post_snapshots", "photosocial.profile_posts", "photosocial.profile_reels", "photosocial.profile_highlights"} {
		if tables[tb] == 0 {
			t.Errorf("the report shows no row of %s", tb)
		}
	}
}

// A comment's replies beyond the three its answer shows (include_replies)
// are walked on the replies endpoint: every reply a comment says it has is
// stored, linked to it, each once (issue 25, finding 9).
func TestRepliesBeyondThoseShown(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{PageSize: 10})
	job := b.job(t, "  preset: scrapecreators\ncomments: {include_replies: true}\n"+
		"seeds: {photosocial: {posts: [\"https://www.instagram.com/p/talk_c12/\"]}}\nexpand: {comment_replies: {}}\n")
	if sum := b.run(t, job); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.noRefusals(t)
	b.checkCounts(t, map[string]int64{
		`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL`: 12,
		`SELECT sum(child_comment_count) - (SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NOT NULL)
		   FROM photosocial.comments WHERE parent_comment_id IS NULL`: 0,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.comment_replies'`: b.count(t,
			`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL AND child_comment_count > 3`),
		`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NOT NULL`: b.count(t,
			`SELECT sum(child_comment_count) FROM photosocial.comments WHERE parent_comment_id IS NULL`),
	})
	if n := b.count(t, `SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL AND child_comment_count > 3`); n == 0 {
		t.Fatal("no comment with more replies than shown: the test shows nothing")
	}
}

// realAtDay is a bundle on pool whose sandbox speaks the real service's
// dialect at world day day, lists pageSize a page.
func realAtDay(t *testing.T, pool *pgxpool.Pool, day int64, pageSize int) *bundle {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, Preset: sandbox.PresetScrapeCreators, WorldTime: day, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	return &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL}
}

// creatorsJob: a creator posting 5 videos a day and one not posting, a
// photo-sharing account posting 4 posts a day (a reel every third), each
// with 40 at day 0; the lists newest first, 10 a page.
func creatorsJob(stopAtSeen bool, transcriptWindow string) string {
	return fmt.Sprintf(`
  preset: scrapecreators
limits: {workers: 4, max_pages: 100}
seeds: {shortvideo: {profiles: [daily_v40_r5, quiet_v40]}, photosocial: {profiles: [studio_p40_r4]}}
expand:
  videos: {stop_at_seen: %[1]v}
  video_transcripts: {refresh_after: %[2]s}
  posts: {stop_at_seen: %[1]v}
  reels: {stop_at_seen: %[1]v}
`, stopAtSeen, transcriptWindow)
}

// The creators' lists are newest first: a repeat a day later with
// stop_at_seen buys the pages of new entries and the first page of known
// ones, exactly as the sandbox's growth law says, and stores what a full
// crawl of that day stores; refresh_after keeps the transcripts of videos
// already transcribed from being bought again.
func TestStopAtSeenCreatorLists(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	first := realAtDay(t, pool, 0, 10)
	if sum := first.run(t, first.job(t, creatorsJob(true, "20h"))); sum.State != "done" {
		t.Fatalf("first run: %+v", sum)
	}
	pages := func(b *bundle, endpoint string) int64 { return b.sandbox.Usage(testKey).ByEndpoint[endpoint].Billable }
	// 40 videos, posts: 4 pages each list; reels: 14 of the 40 posts, 2 pages.
	if v, p, r := pages(first, "/v3/tiktok/profile/videos"), pages(first, "/v2/instagram/user/posts"), pages(first, "/v1/instagram/user/reels"); v != 8 || p != 4 || r != 2 {
		t.Fatalf("first run: %d video, %d post, %d reel pages; want 8, 4, 2", v, p, r)
	}
	second := realAtDay(t, pool, 1, 10)
	sum := second.run(t, second.job(t, creatorsJob(true, "20h")))
	if sum.State != "done" {
		t.Fatalf("second run: %+v", sum)
	}
	// daily: 5 new and 5 known on page 1, page 2 known: 2 pages; quiet: 1.
	// Posts: 4 new, then a known page: 2. Reels: 1 new (index -3), 2.
	if v, p, r := pages(second, "/v3/tiktok/profile/videos"), pages(second, "/v2/instagram/user/posts"), pages(second, "/v1/instagram/user/reels"); v != 3 || p != 2 || r != 2 {
		t.Errorf("repeat: %d video, %d post, %d reel pages; the growth law says 3, 2, 2", v, p, r)
	}
	// The reels list's second page is its last: it ends there, not at seen.
	if n := second.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND reason LIKE 'stop_at_seen: page %'`, sum.RunID); n != 3 {
		t.Errorf("%d lists stopped at seen, want 3", n)
	}
	// Only the 5 new videos' transcripts are bought: those of known videos on
	// the pages walked are fresh.
	if n := pages(second, "/v1/tiktok/video/transcript"); n != 5 {
		t.Errorf("repeat bought %d transcripts, want the 5 new videos'", n)
	}
	if n := second.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND kind = 'shortvideo.transcript' AND state = 'skipped'`, sum.RunID); n != 15+10 {
		t.Errorf("%d transcripts skipped as fresh, want 25 (the known videos of the pages walked)", n)
	}
	// A full crawl of day 1 in a database of its own stores the same lists.
	fullPool := testPool(t)
	full := realAtDay(t, fullPool, 1, 10)
	if sum := full.run(t, full.job(t, creatorsJob(false, "0s"))); sum.State != "done" {
		t.Fatalf("full run: %+v", sum)
	}
	for _, q := range []string{
		`SELECT unique_id, video_id FROM shortvideo.profile_videos ORDER BY 1, 2`,
		`SELECT username, code FROM photosocial.profile_posts ORDER BY 1, 2`,
		`SELECT username, reel_id FROM photosocial.profile_reels ORDER BY 1, 2`,
	} {
		a, b := dump(t, pool, q), dump(t, fullPool, q)
		if len(a) == 0 || strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%s: %d rows incremental, %d full, or they differ", q, len(a), len(b))
		}
	}
	if n := first.count(t, `SELECT count(*) FROM shortvideo.profile_videos WHERE unique_id = 'daily_v40_r5'`); n != 45 {
		t.Errorf("daily's videos: %d, want 45", n)
	}
}

// Adaptive revisits count a creator's lists among their items: night after
// night, on a budget that cannot revisit everything, a creator posting
// every day (its followers growing too) has its profile and videos list
// revisited every night, creators that do not post and whose counters do
// not move (as one posting monthly, within a few nights) are left for
// later, and what the visits find is exactly the new videos.
func TestAdaptiveCreatorLists(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	job := func(budget int) string {
		return fmt.Sprintf(`
  preset: scrapecreators
limits: {workers: 1, max_pages: 100, max_credits: %d}
seeds:
  shortvideo: {profiles: [daily_v20_r2, monthly1_v20_f50_g10, monthly2_v20_f50_g10, monthly3_v20_f50_g10]}
  photosocial: {profiles: [shop_p20_r2, atelier_p20]}
expand: {videos: {}, posts: {}}
reuse: {adaptive: true, min_yield: 0.02}
`, budget)
	}
	// Every night ends done: the schedule's order keeps the credits its
	// visits ranked higher may cost (a visit it admits ahead of them on
	// credits already spent stops the run on its budget).
	night := func(day int64, budget int) (*bundle, int64) {
		t.Helper()
		b := realAtDay(t, pool, day, 10)
		job := b.job(t, job(budget))
		runID := b.start(t, job)
		sum, err := pipeline.Run(context.Background(), b.options(job, testKey), job, runID)
		if err != nil || sum.State != "done" {
			for _, l := range dump(t, pool, fmt.Sprintf(`SELECT kind, key, visit, reason, cost_high, priority FROM crawl.revisit_plan WHERE run_id = %d ORDER BY priority DESC`, runID)) {
				t.Log(l)
			}
			for _, l := range dump(t, pool, fmt.Sprintf(`SELECT id, kind, key, state, pages, reason FROM crawl.tasks WHERE run_id = %d ORDER BY id`, runID)) {
				t.Log(l)
			}
			t.Fatalf("day %d: %v, %+v", day, err, sum)
		}
		if c := b.sandbox.Usage(testKey).Credits; c > int64(budget) {
			t.Fatalf("day %d: %d credits billed over max_credits %d", day, c, budget)
		}
		return b, sum.RunID
	}
	night(0, 100) // everything new: visited
	ageRevisits(t, pool, 1)
	night(1, 100) // everything again: the rates are learnt
	// A night's budget: the daily creator's profile and 2 pages of videos,
	// the two photo-sharing profiles (always fetched: not revisit items)
	// and 2 pages of the daily poster's posts.
	for day := int64(2); day <= 4; day++ {
		ageRevisits(t, pool, 1)
		b, runID := night(day, 7)
		for kind, key := range map[string]string{"shortvideo.profile_videos": "daily_v20_r2", "photosocial.user_posts": "shop_p20_r2"} {
			if n := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND kind = $2 AND key = $3
				AND state = 'done' AND new_items = 2`, runID, kind, key); n != 1 {
				t.Errorf("day %d: %s %s: its 2 new entries not captured", day, kind, key)
				for _, l := range b.tasks(t, runID) {
					t.Log(l)
				}
			}
		}
	}
	visits := func(kind, key string) int64 {
		return night0Count(t, pool, `SELECT visits FROM crawl.revisit_items WHERE kind = $1 AND key = $2`, kind, key)
	}
	if d, m := visits("shortvideo.profile_videos", "daily_v20_r2"), visits("shortvideo.profile_videos", "monthly1_v20_f50_g10"); d != 5 || m >= d {
		t.Errorf("visits: daily creator's videos %d, a monthly one's %d; want 5 and fewer", d, m)
	}
	if d, m := visits("photosocial.user_posts", "shop_p20_r2"), visits("photosocial.user_posts", "atelier_p20"); d != 5 || m >= d {
		t.Errorf("visits: daily poster's posts %d, a monthly one's %d; want 5 and fewer", d, m)
	}
	if n := night0Count(t, pool, `SELECT count(*) FROM shortvideo.profile_videos WHERE unique_id = 'daily_v20_r2'`); n != 28 {
		t.Errorf("the daily creator's videos stored: %d, want 28 (20 and 2 a day for 4 days)", n)
	}
}

// night0Count is a count read from pool.
func night0Count(t *testing.T, pool *pgxpool.Pool, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// The analyst views over the creators' content agree with the tables.
func TestCreatorContentViews(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{PageSize: 10})
	job := b.job(t, "  preset: scrapecreators\nseeds: {shortvideo: {profiles: [maker_v5_c2]}, photosocial: {profiles: [shop_p4_c1]}}\n"+
		"expand: {videos: {}, video_comments: {}, comment_replies: {}, video_transcripts: {}, posts: {}}\n")
	if sum := b.run(t, job); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.checkCounts(t, map[string]int64{
		`SELECT count(*) FROM shortvideo.creator_videos WHERE unique_id = 'maker_v5_c2' AND play_count IS NOT NULL AND has_speech`:           5,
		`SELECT sum(comments_stored) FROM shortvideo.creator_videos`:                                                                         b.count(t, `SELECT count(*) FROM shortvideo.comments`),
		`SELECT count(*) FROM shortvideo.comment_threads WHERE replies_stored <> reply_count`:                                                0,
		`SELECT count(*) FROM shortvideo.comment_threads`:                                                                                    10,
		`SELECT count(*) FROM photosocial.posts_latest WHERE owner_username = 'shop_p4_c1' AND like_count IS NOT NULL AND comment_count = 1`: 4,
	})
}

// Replay rebuilds the creators' content from the archive: every data table
// holds what the harvest wrote, with no request sent.
func TestReplayCreatorContent(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{PageSize: 10})
	sum := b.run(t, b.job(t, contentJob+"archive: true\n"))
	if sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	before, tables, requests := b.dump(t), b.dataTables(t), b.sandbox.Usage(testKey).Requests
	if _, err := b.pool.Exec(context.Background(), "TRUNCATE "+joinComma(tables)); err != nil {
		t.Fatal(err)
	}
	rs, err := runs.Replay(context.Background(), b.pool, sum.RunID, nil)
	if err != nil || rs.Failed != 0 || rs.Pages != sum.Pages || rs.Rows != sum.Rows {
		t.Fatalf("replay = %+v, %v; want %d pages and %d rows, none failed", rs, err, sum.Pages, sum.Rows)
	}
	after := b.dump(t)
	for _, table := range []string{"shortvideo.profile_videos", "shortvideo.comments", "shortvideo.transcripts", "photosocial.posts",
		"photosocial.post_snapshots", "photosocial.profile_posts", "photosocial.profile_reels", "photosocial.profile_highlights"} {
		if len(before[table]) == 0 {
			t.Errorf("%s: the harvest wrote nothing", table)
		}
	}
	for _, table := range tables {
		if !slices.Equal(before[table], after[table]) {
			t.Errorf("%s: %d rows before, %d after replay; first difference:\n%s", table, len(before[table]), len(after[table]),
				firstRowDiff(before[table], after[table]))
		}
	}
	if u := b.sandbox.Usage(testKey); u.Requests != requests {
		t.Errorf("replay sent %d requests", u.Requests-requests)
	}
}

// Every parent -> child task pair a real-dialect run of the content kinds
// creates is one of the credit bound's rules (hashtag searches' authors
// included), so crawler plan bounds what such a run can cost.
func TestPlanRulesCoverRealRuns(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{PageSize: 10})
	job := strings.Replace(contentJob, "expand:\n", "expand:\n  video_authors: {}\n  search_results: {}\n", 1)
	job = strings.Replace(job, "  shortvideo:\n", "  shortvideo:\n    hashtag_searches: [fit n5]\n", 1)
	if sum := b.run(t, b.job(t, job)); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	boundCoversRuns(t, b, 12)
}

// boundCoversRuns checks that every parent -> child task pair the runs in
// b's database created is one of the credit bound's rules, and that there
// are at least least of them.
func boundCoversRuns(t *testing.T, b *bundle, least int) {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `
SELECT DISTINCT p.kind, c.kind, c.depth > p.depth
FROM crawl.tasks c JOIN crawl.tasks p ON p.id = c.parent_id ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var parent, child string
		var hop bool
		if err := rows.Scan(&parent, &child, &hop); err != nil {
			t.Fatal(err)
		}
		n++
		if !pipeline.BoundAllows(parent, child, hop) {
			t.Errorf("runs create %s -> %s (hop %v), which the credit bound does not count", parent, child, hop)
		}
	}
	if n < least {
		t.Errorf("only %d parent -> child pairs seen; the jobs should exercise every edge", n)
	}
}
