package jobfile

import (
	"testing"
	"time"
)

// posted_after and posted_before take a date, a time or a duration back
// from the job's load, and are refused, by key and line, where they would
// do nothing: on a list that is not dated and newest first (follow lists,
// comments, searches), with a value that is no date, or when the window is
// empty (issue 32, points 3 and 5). Under the contract the dated lists do
// not exist: their edges are refused.
func TestDateWindowKeys(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	head := "name: x\napi:\n  preset: scrapecreators\nseeds: {shortvideo: {profiles: [a]}, photosocial: {profiles: [b]}}\n"
	job, err := ParseWith("j.yaml", []byte(head+`expand:
  videos: {posted_after: 2026-01-01, posted_before: "2026-04-01T00:00:00Z"}
  posts: {posted_after: 90d}
  reels: {posted_before: 36h}
`), LoadOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][2]time.Time{
		"videos": {time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
		"posts":  {now.Add(-90 * 24 * time.Hour), {}},
		"reels":  {{}, now.Add(-36 * time.Hour)},
	} {
		after, before := job.Edge(key).Window()
		if !after.Equal(want[0]) || !before.Equal(want[1]) {
			t.Errorf("%s: window %s .. %s, want %s .. %s", key, after, before, want[0], want[1])
		}
	}
	_, err = ParseWith("j.yaml", []byte(head+`expand:
  followers: {posted_after: 2026-01-01}
  videos: {posted_after: yesterday}
  posts: {posted_after: 2026-03-01, posted_before: 2026-02-01}
  reels: {posted_before: -3d}
  video_comments: {posted_before: 2026-01-01}
`), LoadOptions{Now: now})
	want := `j.yaml:6: expand.followers.posted_after: applies only to lists returned newest first whose entries carry the time they were posted: posts, reels, videos (searches are ranked, not in time order)
j.yaml:7: expand.videos.posted_after: "yesterday" is not a date (2026-01-01), a time (2026-01-01T12:00:00Z) or a positive duration back from now (90d, 36h)
j.yaml:8: expand.posts.posted_before: 2026-02-01T00:00:00Z is not after posted_after (2026-03-01T00:00:00Z): the window is empty
j.yaml:9: expand.reels.posted_before: "-3d" is not a date (2026-01-01), a time (2026-01-01T12:00:00Z) or a positive duration back from now (90d, 36h)
j.yaml:10: expand.video_comments.posted_before: applies only to lists returned newest first whose entries carry the time they were posted: posts, reels, videos (searches are ranked, not in time order)`
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	// The contract has no dated list: its edges are refused.
	_, err = Parse("j.yaml", []byte(jobHead+oneSeed+"expand:\n  videos: {posted_after: 2026-01-01}\n"))
	if err == nil || err.Error() != `j.yaml:6: expand.videos: the contract preset has no shortvideo.profile_videos endpoint (/shortvideo/profile/videos): only the scrapecreators preset, the real service, serves it; set api.preset: scrapecreators, or turn the edge off` {
		t.Errorf("contract: %v", err)
	}
}

// An expand key that can do nothing in its job is refused by key and line:
// an edge from kinds the job never makes (no song for song_videos, no
// follow list for follower_profiles), a hop past limits.max_depth, a page
// limit of lists the job never walks (issue 32, point 5).
func TestIdleExpandKeysRefused(t *testing.T) {
	t.Parallel()
	_, err := Parse("j.yaml", []byte(jobHead+oneSeed+`limits: {max_depth: 0}
expand:
  followers: {}
  follower_profiles: {}
  song_videos: {}
  comments: {max_pages: 2}
`))
	want := `j.yaml:8: expand.follower_profiles: does nothing in this job: no task it makes follows this edge or takes its page limit (it applies to shortvideo.followers or shortvideo.following tasks the seeds and edges make, within limits.max_depth 0); remove it, or add what leads there
j.yaml:9: expand.song_videos: does nothing in this job: no task it makes follows this edge or takes its page limit (it applies to shortvideo.song or shortvideo.song_videos tasks the seeds and edges make, within limits.max_depth 0); remove it, or add what leads there
j.yaml:10: expand.comments: does nothing in this job: no task it makes follows this edge or takes its page limit (it applies to photosocial.comments tasks the seeds and edges make, within limits.max_depth 0); remove it, or add what leads there`
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	// What leads there makes them valid: follow lists at depth 1, a
	// song, a post seed.
	if _, err := Parse("j.yaml", []byte(jobHead+`seeds: {shortvideo: {profiles: [a], songs: ["1"]}, photosocial: {posts: ["https://x.example/p/a/"]}}
expand:
  followers: {}
  follower_profiles: {}
  song_videos: {}
  comments: {max_pages: 2}
`)); err != nil {
		t.Error(err)
	}
	// post_comments bounds the comments it leads to, not comments'.
	_, err = Parse("j.yaml", []byte("name: x\napi:\n  preset: scrapecreators\nseeds: {photosocial: {profiles: [b]}}\n"+`expand:
  posts: {}
  post_comments: {max_pages: 1}
  comments: {max_pages: 3}
`))
	if err == nil || err.Error() != `j.yaml:8: expand.comments: does nothing in this job: no task it makes follows this edge or takes its page limit (it applies to photosocial.comments tasks the seeds and edges make, within limits.max_depth 1); remove it, or add what leads there` {
		t.Errorf("comments beside post_comments: %v", err)
	}
}
