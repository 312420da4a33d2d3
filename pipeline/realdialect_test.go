package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/runs"
	"github.com/socialcrawl/crawler/sources"
)

// realJob is everythingJob for the real service's dialect: every seed kind
// that service has (no secUid seeds: its follow lists are addressed by
// handle), every expansion edge, comments with their replies. Followers
// take two pages, enough to walk hub_f15_g8's to its end through
// min_time; the lists of the profiles at depth 1 need no more (at 3
// pages each of both lists they were 1,270 of the crawl's 1,650 requests).
// Lists are 10 a page, as in the everything harvest: every list that
// takes several pages or stops at a page limit still does, with a fifth
// of the accounts found (the crawl was 1,650 requests at 50 a page, 468
// at 10).
const realJob = `
  preset: scrapecreators
limits: {workers: 4, max_pages: 3, max_depth: 1}
comments: {include_replies: true}
seeds:
  shortvideo:
    profiles: ["@hub_f15_g8", "bare_f7_g3"]
    keyword_searches:
      - cats n14
      - {query: dogs n6, sort_by: most-liked, date_posted: this-week, region: us}
    hashtag_searches: [fit n6]
    top_searches: [mixed n8]
    songs: [tune_v15]
    live: [streamer_live, quiet_one]
    trending_feed: true
    popular_videos: true
    popular_creators: true
  photosocial:
    profiles: [brand_business, private_cam, missing_gone, plain_user, blocked_acct]
    posts: ["https://www.instagram.com/p/post_c25/"]
    reels_searches: [surf n14]
    transcripts: ["https://www.instagram.com/reel/talk_t2/", "https://www.instagram.com/reel/quiet_nospeech/"]
    embeds: [brand_business]
    highlights: ["7"]
expand:
  followers: {max_pages: 2}
  following: {max_pages: 1}
  follower_profiles: {}
  song_videos: {max_pages: 3}
  video_authors: {}
  search_results: {}
  comments: {max_pages: 3}
  reel_comments: {}
  reel_transcripts: {}
`

// The whole crawl in the real service's dialect, against the sandbox
// speaking it (written from the vendor's samples, independently of the
// client): only the preset line differs from a contract job. No request is
// refused as malformed, every follow list is walked to its end through
// min_time, every entity the server served is stored, and the credits
// billed are the server's credits_charged total, nothing bought twice.
func TestEverySeedKindAndEdgeRealDialect(t *testing.T) {
	t.Parallel()
	b := setupWith(t, sandbox.Config{Preset: sandbox.PresetScrapeCreators, PageSize: everythingPage})
	b.baseURL = b.srv.URL // the real service has no /api segment
	// In a crawler process without the race detector: the everything
	// harvest runs the same pipeline in-process under it.
	runID, code, out := b.runChild(t, realJob)
	var state, reason string
	if err := b.pool.QueryRow(context.Background(), `SELECT state, coalesce(stop_reason, '') FROM crawl.runs WHERE id = $1`, runID).Scan(&state, &reason); err != nil {
		t.Fatal(err)
	}
	// Exit 4: the run is done with a failed task (blocked_acct, below).
	if state != "done" || code != 4 {
		t.Fatalf("state %s: %s; exit %d:\n%s", state, reason, code, out)
	}
	exact := map[string]int64{
		`SELECT count(*) FROM shortvideo.search_results WHERE search_kind = 'keyword' AND query_key LIKE 'cats%'`: 14,
		`SELECT count(*) FROM shortvideo.search_results WHERE search_kind = 'keyword' AND query_key LIKE 'dogs%'`: 6,
		`SELECT max(rank) FROM shortvideo.search_results WHERE query_key LIKE 'cats%'`:                            14,
		// The hashtag search's videos land as that search's results.
		`SELECT count(*) FROM shortvideo.search_results WHERE search_kind = 'hashtag' AND result_type = 'video'`: 6,
		`SELECT count(*) FROM shortvideo.song_videos WHERE song_id = 'tune_v15'`:                                 15,
		`SELECT count(*) FROM shortvideo.feed_entries WHERE feed = 'trending'`:                                   20,
		`SELECT count(*) FROM shortvideo.live_status`:                                                            2,
		`SELECT count(*) FROM shortvideo.live_status WHERE is_live`:                                              1,
		// Follow lists addressed by handle, walked to their end via min_time:
		// 15 followers is two pages of 10.
		`SELECT count(*) FROM shortvideo.follows WHERE followee = 'hub_f15_g8'`:                                     15,
		`SELECT count(*) FROM shortvideo.follows WHERE follower = 'hub_f15_g8'`:                                     8,
		`SELECT count(*) FROM shortvideo.follows WHERE followee = 'bare_f7_g3'`:                                     7,
		`SELECT count(*) FROM shortvideo.follows WHERE follower = 'bare_f7_g3'`:                                     3,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'shortvideo.followers' AND key = 'hub_f15_g8' AND pages = 2`: 1,
		// Each list once per run, keyed by handle.
		`SELECT count(*) - count(DISTINCT (kind, key)) FROM crawl.tasks`:                                       0,
		`SELECT count(*) FROM photosocial.profiles`:                                                            2,
		`SELECT count(*) FROM photosocial.comments WHERE post_code = 'post_c25' AND parent_comment_id IS NULL`: 25,
		// Replies bought with their comments are kept, each linked to a
		// comment stored, as many as the comments say up to 3 each.
		`SELECT count(*) FROM photosocial.comments r WHERE r.parent_comment_id IS NOT NULL
		   AND NOT EXISTS (SELECT 1 FROM photosocial.comments c WHERE c.comment_id = r.parent_comment_id)`: 0,
		`SELECT coalesce(sum(CASE WHEN child_comment_count > 3 THEN 3 ELSE child_comment_count END), 0) - (SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NOT NULL)
		   FROM photosocial.comments WHERE parent_comment_id IS NULL`: 0,
		`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NOT NULL`:                                               1134,
		`SELECT count(*) FROM photosocial.reels`:                                                                                      14,
		`SELECT count(*) FROM photosocial.reels WHERE code IS NULL OR code = ''`:                                                      0,
		`SELECT count(*) FROM photosocial.transcripts WHERE shortcode = 'talk_t2'`:                                                    2,
		`SELECT count(*) FROM photosocial.embeds`:                                                                                     1,
		`SELECT count(*) FROM photosocial.highlights`:                                                                                 1,
		`SELECT count(*) FROM crawl.tasks WHERE state IN ('pending', 'leased')`:                                                       0,
		`SELECT count(*) FROM crawl.tasks WHERE reason LIKE '%bad_request%'`:                                                          0,
		`SELECT count(*) FROM crawl.tasks WHERE state = 'skipped' AND reason LIKE 'retired:%' AND kind = 'shortvideo.popular_videos'`: 1,
		`SELECT count(*) FROM crawl.tasks WHERE state = 'failed' AND reason LIKE 'blocked:%' AND key = 'blocked_acct'`:                1,
		`SELECT count(*) FROM crawl.tasks WHERE state = 'failed' AND key <> 'blocked_acct'`:                                           0,
	}
	for q, want := range exact {
		if got := b.count(t, q); got != want {
			t.Errorf("%s\n  = %d, want %d", q, got, want)
		}
	}
	bought := map[string]int{}
	for _, a := range b.sandbox.Arrivals(testKey) {
		if a.Status == 400 {
			t.Errorf("400 for %s?%s", a.Endpoint, a.Query)
		}
		if a.Status == 200 {
			if bought[a.Endpoint+"?"+a.Query]++; bought[a.Endpoint+"?"+a.Query] == 2 {
				t.Errorf("bought twice: %s?%s", a.Endpoint, a.Query)
			}
		}
	}
	// Credits as the service counts them: comments pages with replies cost
	// 15 each, and the ledger agrees with the server to the credit.
	u := b.sandbox.Usage(testKey)
	billed := b.count(t, `SELECT credits_billed FROM crawl.runs`)
	commentPages := b.count(t, `SELECT sum(pages) FROM crawl.tasks WHERE kind = 'photosocial.comments'`)
	if billed != u.Credits || u.ByEndpoint["/v2/instagram/post/comments"].Credits != 15*commentPages {
		t.Errorf("billed %d, server charged %d; comments %d credits for %d pages", billed, u.Credits,
			u.ByEndpoint["/v2/instagram/post/comments"].Credits, commentPages)
	}
	pages := b.count(t, `SELECT sum(pages) FROM crawl.tasks`)
	if u.Billable > pages {
		t.Errorf("billable answers %d > pages committed %d: something was bought twice", u.Billable, pages)
	}
	t.Logf("real dialect: %d tasks, %d requests, %d billable, %d credits", b.count(t, `SELECT count(*) FROM crawl.tasks`), u.Requests, u.Billable, u.Credits)
}

// When the upstream's schema changes between two runs of a job (a key
// renamed, one added), the second run's drift names them: the answers'
// shapes are sampled and compared with the previous run's.
func TestSchemaDriftBetweenRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var version atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.URL.Query().Get("handle")
		if version.Load() == 0 {
			fmt.Fprintf(w, `{"user":{"uniqueId":%q,"secUid":"S%s","verified":true},"stats":{"followerCount":1}}`, h, h)
			return
		}
		fmt.Fprintf(w, `{"user":{"uniqueId":%q,"secUid":"S%s","is_verified":true},"stats":{"followerCount":1},"extra":{"x":1}}`, h, h)
	}))
	t.Cleanup(srv.Close)
	b.baseURL = srv.URL + "/api"
	job := b.job(t, "expand: {}\nseeds: {shortvideo: {profiles: [a1, a2, a3, a4, a5, a6]}}\n")
	ctx := context.Background()
	first := b.run(t, job)
	if d, err := runs.LoadDrift(ctx, b.pool, first.RunID); err != nil || d.Against != nil || d.Summary() != "" {
		t.Fatalf("first run's drift: %+v, %v", d, err)
	}
	version.Store(1)
	second := b.run(t, job)
	d, err := runs.LoadDrift(ctx, b.pool, second.RunID)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(d.New, d.Gone)
	want := "[{/shortvideo/profile extra 6} {/shortvideo/profile extra.x 6} {/shortvideo/profile user.is_verified 6}] [{/shortvideo/profile user.verified 6}]"
	if d.Against == nil || *d.Against != first.RunID || got != want {
		t.Errorf("drift against %v: %s\nwant against %d: %s", d.Against, got, first.RunID, want)
	}
}

// realBundle is a bundle whose sandbox speaks the real service's dialect.
func realBundle(t *testing.T, cfg sandbox.Config) *bundle {
	t.Helper()
	cfg.Preset = sandbox.PresetScrapeCreators
	b := setupWith(t, cfg)
	b.baseURL = b.srv.URL
	return b
}

// reuse.upstream_cache asks the real service for its cached answers: the
// second run's profiles come from the cache, cost nothing, and are
// counted as cached; the lists are bought again.
func TestUpstreamCacheRealDialect(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{})
	job := b.job(t, "  preset: scrapecreators\nreuse: {upstream_cache: 3d}\nexpand: {}\nseeds: {shortvideo: {profiles: [a_f1_g1, b_f1_g1]}, photosocial: {profiles: [plain_user]}}\n")
	b.run(t, job)
	first := b.sandbox.Usage(testKey)
	second := b.run(t, job)
	if second.State != "done" {
		t.Fatalf("second run: %+v", second)
	}
	u := b.sandbox.Usage(testKey)
	if first.Credits != 3 || u.Credits != 3 || u.Requests != 6 {
		t.Errorf("credits %d then %d over %d requests, want 3, 3 (the second run's answers cached) and 6", first.Credits, u.Credits, u.Requests)
	}
	for _, a := range b.sandbox.Arrivals(testKey) {
		if !strings.Contains(a.Query, "cache_max_age=3d") {
			t.Errorf("%s?%s: no cache_max_age", a.Endpoint, a.Query)
		}
	}
	for q, want := range map[string]int64{
		`SELECT sum(cached) FROM crawl.credit_usage WHERE run_id = ` + itoa(second.RunID):         3,
		`SELECT sum(billed) FROM crawl.credit_usage WHERE run_id = ` + itoa(second.RunID):         0,
		`SELECT credits_billed FROM crawl.runs WHERE id = ` + itoa(second.RunID):                  0,
		`SELECT count(*) FROM shortvideo.user_snapshots WHERE run_id = ` + itoa(second.RunID):     2,
		`SELECT count(*) FROM photosocial.profile_snapshots WHERE run_id = ` + itoa(second.RunID): 1,
	} {
		if got := b.count(t, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}

// Followers addressed by the numeric user id (the real service's faster
// form), by one override; following stays by handle.
func TestFollowersByUserID(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{})
	job := b.job(t, "  preset: scrapecreators\n  endpoints: {shortvideo: {followers: {params: {secUid: user_id}}}}\nseeds: {shortvideo: {profiles: [acct_f120_g30]}}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM shortvideo.follows WHERE followee = 'acct_f120_g30'`:                                                                                120,
		`SELECT count(*) FROM shortvideo.follows WHERE follower = 'acct_f120_g30'`:                                                                                30,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'shortvideo.followers' AND key = (SELECT user_id FROM shortvideo.users WHERE unique_id = 'acct_f120_g30')`: 1,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'shortvideo.following' AND key = 'acct_f120_g30'`:                                                          1,
	} {
		if got := b.count(t, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	for _, a := range b.sandbox.Arrivals(testKey) {
		if a.Endpoint == "/v1/tiktok/user/followers" && !strings.Contains(a.Query, "user_id=") {
			t.Errorf("followers asked by %s", a.Query)
		}
	}
}

// When an answer says the account has 0 credits left, the run stops
// cleanly, resumable, without sending a request that could only be
// refused: every request sent was answered 200. (The comments carry
// credits_remaining on the real service; 120 comments are 3 pages.)
func TestCreditsRemainingZeroStopsRun(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{Credits: 4})
	job := b.job(t, "  preset: scrapecreators\nlimits: {workers: 1}\nseeds: {photosocial: {posts: "+
		"[\"https://www.instagram.com/p/one_c120/\", \"https://www.instagram.com/p/two_c120/\"]}}\n")
	runID := b.start(t, job)
	sum, err := pipeline.Run(context.Background(), b.options(job, testKey), job, runID)
	if sources.ClassOf(err) != sources.ClassNoCredits || sum.State != "stopped" {
		t.Fatalf("run: %v %+v, want a stop for credits", err, sum)
	}
	u := b.sandbox.Usage(testKey)
	if u.Requests != 4 || u.Credits != 4 || u.OutOfCredits != 0 {
		t.Errorf("requests %d, credits %d, 402s %d; want 4, 4, 0", u.Requests, u.Credits, u.OutOfCredits)
	}
	if got := b.count(t, `SELECT sum(pages) FROM crawl.tasks`); got != 4 {
		t.Errorf("%d pages committed, want 4 (the last answer kept)", got)
	}
	if got := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE state = 'pending'`); got != 1 {
		t.Errorf("%d tasks pending, want 1 (resumable)", got)
	}
}
