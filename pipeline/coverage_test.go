package pipeline_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// everythingJob uses every seed kind and every expansion edge. Sizes come
// from the sandbox's tokens (docs/sandbox.md); lists are everythingPage a
// page (the sandbox's default is 50), reels 12, feeds 20. Every list that
// is walked to a page limit or over several pages still is at 10 a page,
// with a fifth of the entries: at 50 the accounts found (one page of the
// hub's followers, the searches', the song's and the feeds' videos'
// authors) were 291, with their two follow lists 873 of the crawl's 944
// tasks (109 of 386 at 10).
const everythingJob = `
limits: {workers: 4, max_pages: 3, max_depth: 1}
seeds:
  shortvideo:
    profiles: ["@hub_f60_g12"]
    sec_uids: [%s]
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
    profiles: [brand_business, private_cam, missing_gone, plain_user]
    posts: ["https://www.photosocial.example/p/post_c25/"]
    reels_searches: [surf n14]
    transcripts: ["https://www.photosocial.example/reel/talk_t2/", "https://www.photosocial.example/reel/quiet_nospeech/"]
    embeds: [brand_business]
    highlights: ["highlight:1234503", "7"]
expand:
  followers: {max_pages: 1}
  following: {max_pages: 1}
  follower_profiles: {}
  song_videos: {max_pages: 3}
  video_authors: {}
  search_results: {}
  comments: {max_pages: 3}
  reel_comments: {}
  reel_transcripts: {}
`

// everythingPage is the page size of the everything harvest's sandbox.
const everythingPage = 10

// TestEverySeedKindAndEdge reads the everything job's harvest (archive
// on), shared with TestReplayRebuildsRunFromArchive.
func TestEverySeedKindAndEdge(t *testing.T) {
	t.Parallel()
	b, sum := everything(t)
	if sum.State != "done" {
		t.Fatalf("state %s: %s", sum.State, sum.Reason)
	}
	exact := map[string]int64{
		// Seeds with exact sizes.
		`SELECT count(*) FROM shortvideo.search_results WHERE search_kind = 'keyword' AND query_key LIKE 'cats%'`: 14,
		`SELECT count(*) FROM shortvideo.search_results WHERE search_kind = 'keyword' AND query_key LIKE 'dogs%'`: 6,
		`SELECT count(*) FROM shortvideo.search_results WHERE search_kind = 'hashtag'`:                            6,
		`SELECT count(*) FROM shortvideo.search_results WHERE search_kind = 'top'`:                                8,
		`SELECT count(DISTINCT result_type) FROM shortvideo.search_results WHERE search_kind = 'top'`:             4,
		`SELECT max(rank) FROM shortvideo.search_results WHERE query_key LIKE 'cats%'`:                            14,
		`SELECT count(*) FROM shortvideo.song_videos WHERE song_id = 'tune_v15'`:                                  15,
		`SELECT count(*) FROM shortvideo.feed_entries WHERE feed = 'trending'`:                                    20,
		`SELECT count(*) FROM shortvideo.feed_entries WHERE feed = 'popular_videos'`:                              20,
		`SELECT count(*) FROM shortvideo.popular_creators`:                                                        20,
		`SELECT count(*) FROM shortvideo.live_status`:                                                             2,
		`SELECT count(*) FROM shortvideo.live_status WHERE is_live`:                                               1,
		`SELECT count(*) FROM shortvideo.follows WHERE followee = 'secuid:` + secUID("bare_f7_g3") + `'`:          7,
		`SELECT count(*) FROM shortvideo.follows WHERE follower = 'secuid:` + secUID("bare_f7_g3") + `'`:          3,
		`SELECT count(*) FROM shortvideo.follows WHERE followee = 'hub_f60_g12'`:                                  everythingPage, // one page
		`SELECT count(*) FROM shortvideo.follows WHERE follower = 'hub_f60_g12'`:                                  everythingPage, // one page of 12
		// Both ends of every edge are accounts (no foreign key keeps it since
		// migration 00015: the writer does).
		`SELECT count(*) FROM shortvideo.follows f WHERE NOT EXISTS (SELECT 1 FROM shortvideo.users u WHERE u.unique_id = f.follower)
		   OR NOT EXISTS (SELECT 1 FROM shortvideo.users u WHERE u.unique_id = f.followee)`: 0,
		`SELECT count(*) FROM photosocial.profiles`:                                                               2,
		`SELECT count(*) FROM photosocial.profiles WHERE contact_email IS NOT NULL AND category_name IS NOT NULL`: 1,
		`SELECT count(*) FROM photosocial.profile_snapshots`:                                                      2,
		`SELECT count(*) FROM photosocial.comments WHERE post_code = 'post_c25'`:                                  25, // 3 pages
		`SELECT count(*) FROM photosocial.reels`:                                                                  14,
		`SELECT count(*) FROM photosocial.reel_search_results`:                                                    14,
		`SELECT count(*) FROM photosocial.transcripts WHERE shortcode = 'talk_t2'`:                                2,
		`SELECT count(*) FROM photosocial.transcript_checks`:                                                      16, // 2 seeds + 14 reels
		`SELECT count(*) FROM photosocial.transcript_checks WHERE NOT has_speech`:                                 1,
		`SELECT count(*) FROM photosocial.embeds`:                                                                 1,
		`SELECT count(*) FROM photosocial.highlights`:                                                             2,
		`SELECT count(*) FROM photosocial.highlight_items`:                                                        10,
		// Every reel got its comments and transcript tasks (one hop).
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.comments' AND depth = 1`:   14,
		`SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.transcript' AND depth = 1`: 14,
		// Every task ended; the one 404 was skipped, nothing failed.
		`SELECT count(*) FROM crawl.tasks WHERE state IN ('pending', 'leased', 'failed')`: 0,
		`SELECT count(*) FROM crawl.tasks WHERE state = 'skipped'`:                        1,
		// Nothing deeper than max_depth.
		`SELECT count(*) FROM crawl.tasks WHERE depth > 1`: 0,
		// Every public short-video profile fetched got exactly one page of
		// each list, holding min(count, everythingPage) entries, as its profile reported.
		// (Edges with the two seed accounts come from the seeds' lists, not the
		// profile's own: the sandbox's graph is not reciprocal.)
		`SELECT count(*) FROM shortvideo.users u JOIN shortvideo.user_snapshots s USING (unique_id)
		 WHERE u.private_account IS NOT TRUE AND u.unique_id <> 'hub_f60_g12' AND (
		   (SELECT count(*) FROM shortvideo.follows f WHERE f.followee = u.unique_id AND f.follower NOT IN ('hub_f60_g12', 'secuid:` + secUID("bare_f7_g3") + `')) <> least(s.follower_count, ` + itoa(everythingPage) + `) OR
		   (SELECT count(*) FROM shortvideo.follows f WHERE f.follower = u.unique_id AND f.followee NOT IN ('hub_f60_g12', 'secuid:` + secUID("bare_f7_g3") + `')) <> least(s.following_count, ` + itoa(everythingPage) + `))`: 0,
		// Video authors, follower profiles and user search results were fetched.
		// (Videos found at depth 1, e.g. in a hopped song's list, are at the
		// edge of max_depth: their authors are not fetched.)
		`SELECT count(*) FROM shortvideo.videos v WHERE v.author_unique_id IS NOT NULL
		   AND (v.video_id IN (SELECT video_id FROM shortvideo.feed_entries)
		     OR v.video_id IN (SELECT video_id FROM shortvideo.search_results WHERE search_kind = 'keyword')
		     OR v.video_id IN (SELECT video_id FROM shortvideo.song_videos WHERE song_id = 'tune_v15'))
		   AND NOT EXISTS (SELECT 1 FROM crawl.tasks t WHERE t.kind = 'shortvideo.profile' AND t.key = v.author_unique_id AND t.depth = 1)`: 0,
		`SELECT count(*) FROM shortvideo.follows f WHERE f.followee = 'hub_f60_g12' AND NOT EXISTS (
		   SELECT 1 FROM shortvideo.user_snapshots s WHERE s.unique_id = f.follower)`: 0,
		`SELECT count(*) FROM shortvideo.search_results r WHERE r.result_type = 'sound' AND NOT EXISTS (
		   SELECT 1 FROM crawl.tasks t WHERE t.kind = 'shortvideo.song' AND t.key = r.song_id AND t.state = 'done')`: 0,
	}
	for q, want := range exact {
		if got := b.count(t, q); got != want {
			t.Errorf("%s\n  = %d, want %d", q, got, want)
		}
	}
	// Billing: every page the frontier recorded was bought once; the free
	// private photo-sharing profile and the 404 cost nothing.
	pages := b.count(t, `SELECT sum(pages) FROM crawl.tasks`)
	free := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE kind = 'photosocial.profile' AND reason LIKE '%private%'`)
	u := b.sandbox.Usage(testKey)
	if free != 1 || u.Billable != pages-free {
		t.Errorf("billable = %d, pages = %d, free = %d", u.Billable, pages, free)
	}
	if u.Requests != u.Billable+2 { // + the free profile and the 404
		t.Errorf("requests = %d, billable = %d", u.Requests, u.Billable)
	}
	t.Logf("everything job: %d tasks, %d billable requests", b.count(t, `SELECT count(*) FROM crawl.tasks`), u.Billable)
}

// Two harvests at different world times: one entity row each, two
// snapshots each, and the counters grew.
func TestWorldTimeGrowth(t *testing.T) {
	t.Parallel()
	pool := setup(t).pool
	var runs []int64
	for _, day := range []int64{0, 30} {
		sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, WorldTime: day})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(sb.Handler())
		defer srv.Close()
		b := &bundle{pool: pool, sandbox: sb, baseURL: srv.URL + "/api"}
		job := b.job(t, `
expand: {song_videos: {}}
seeds:
  shortvideo: {profiles: [grower], hashtag_searches: [fit n5], songs: [song_v3]}
  photosocial: {profiles: [grower], reels_searches: [surf n5]}
`)
		runs = append(runs, b.run(t, job).RunID)
	}
	b := &bundle{pool: pool}
	for _, tc := range []struct{ entity, snaps, counter, key string }{
		{"shortvideo.users", "shortvideo.user_snapshots", "heart_count", "unique_id = 'grower'"},
		{"shortvideo.hashtags", "shortvideo.hashtag_snapshots", "view_count", "true"},
		{"shortvideo.songs", "shortvideo.song_snapshots", "usage_count", "true"},
		{"shortvideo.videos", "shortvideo.video_snapshots", "play_count", "video_id IN (SELECT video_id FROM shortvideo.song_videos)"},
		{"photosocial.profiles", "photosocial.profile_snapshots", "follower_count", "true"},
		{"photosocial.reels", "photosocial.reel_snapshots", "play_count", "true"},
	} {
		entities := b.count(t, `SELECT count(*) FROM `+tc.entity+` WHERE `+tc.key)
		snaps := b.count(t, `SELECT count(*) FROM `+tc.snaps+` WHERE `+tc.key)
		if entities == 0 || snaps != 2*entities {
			t.Errorf("%s: %d entities, %d snapshots; want two snapshots each", tc.entity, entities, snaps)
		}
		grew := b.count(t, fmt.Sprintf(`SELECT count(*) FROM (SELECT * FROM %[1]s WHERE %[6]s) a JOIN %[1]s b USING (%[2]s)
			WHERE a.run_id = %[3]d AND b.run_id = %[4]d AND b.%[5]s > a.%[5]s`, tc.snaps, keyColumn(tc.snaps), runs[0], runs[1], tc.counter, tc.key))
		if grew*2 != snaps {
			t.Errorf("%s: %s grew for %d of %d", tc.snaps, tc.counter, grew, snaps/2)
		}
	}
}

func keyColumn(table string) string {
	switch table {
	case "shortvideo.user_snapshots":
		return "unique_id"
	case "shortvideo.hashtag_snapshots":
		return "name"
	case "shortvideo.song_snapshots":
		return "song_id"
	case "shortvideo.video_snapshots":
		return "video_id"
	case "photosocial.profile_snapshots":
		return "username"
	}
	return "reel_id"
}
