package pipeline_test

import (
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
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
		"expand: {reel_comments: {max_pages: 1}, reel_transcripts: {}}\n")
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
}
