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
