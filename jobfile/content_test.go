package jobfile

import (
	"strings"
	"testing"
)

// The real service's own endpoints (a creator's videos, posts, comments'
// replies...) are not the contract's: under its preset, a job naming their
// seeds or edges is refused before anything is written, each problem keyed
// by the seed list or expand key with its line, naming the preset.
func TestRealOnlyKindsUnderTheContract(t *testing.T) {
	t.Parallel()
	text := jobHead + `seeds:
  shortvideo:
    profiles: [a]
    videos: ["https://www.tiktok.com/@a/video/7"]
  photosocial:
    media: ["https://www.instagram.com/p/ABC/"]
expand:
  followers: {}
  videos: {max_pages: 3}
  video_comments: {}
  comment_replies: {}
`
	_, err := Parse("j.yaml", []byte(text))
	want := `j.yaml:7: seeds.shortvideo.videos: the contract preset has no shortvideo.video endpoint (/shortvideo/video): only the scrapecreators preset, the real service, serves it; set api.preset: scrapecreators, or remove the seeds
j.yaml:9: seeds.photosocial.media: the contract preset has no photosocial.post endpoint (/photosocial/post): only the scrapecreators preset, the real service, serves it; set api.preset: scrapecreators, or remove the seeds
j.yaml:12: expand.videos: the contract preset has no shortvideo.profile_videos endpoint (/shortvideo/profile/videos): only the scrapecreators preset, the real service, serves it; set api.preset: scrapecreators, or turn the edge off
j.yaml:13: expand.video_comments: the contract preset has no shortvideo.video_comments endpoint (/shortvideo/video/comments): only the scrapecreators preset, the real service, serves it; set api.preset: scrapecreators, or turn the edge off
j.yaml:14: expand.comment_replies: the contract preset has no shortvideo.comment_replies endpoint (/shortvideo/video/comment/replies): only the scrapecreators preset, the real service, serves it; set api.preset: scrapecreators, or turn the edge off`
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	// An override of such an endpoint is refused too: it cannot bring it in.
	_, err = Parse("j.yaml", []byte(jobHead+"  endpoints: {shortvideo: {profile_videos: {path: /x}}}\n"+oneSeed))
	if err == nil || !strings.Contains(err.Error(), "j.yaml:4: api.endpoints.shortvideo.profile_videos: the contract preset has no shortvideo.profile_videos endpoint") {
		t.Errorf("override: %v", err)
	}
	// Under the real service's preset the same job is valid.
	real := strings.Replace(text, "  base_url: http://127.0.0.1:9/api\n", "  preset: scrapecreators\n", 1)
	if _, err := Parse("j.yaml", []byte(real)); err != nil {
		t.Errorf("real preset: %v", err)
	}
}

// The job of docs/jobs parses.
func TestDocsJobsParse(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"../docs/jobs/creator-videos-nightly.yaml"} {
		if _, err := Load(f); err != nil {
			t.Error(err)
		}
	}
}

// changed_only and refresh_after on the content edges (issue 32): accepted
// where a parent page carries the list's counter, with refresh_after as
// the list's maximum age; refused, with path and line, where they would
// do nothing.
func TestChangedOnlyKeys(t *testing.T) {
	t.Parallel()
	head := "name: x\napi:\n  preset: scrapecreators\nseeds: {shortvideo: {profiles: [a]}, photosocial: {profiles: [b]}}\nexpand:\n"
	ok := head + `  videos: {}
  video_comments: {refresh_after: 7d}
  comment_replies: {changed_only: true, refresh_after: 14d}
  posts: {}
  post_comments: {changed_only: false}
`
	j, err := Parse("j.yaml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if !j.Edge("video_comments").Changed() || !j.Edge("comment_replies").Changed() || j.Edge("post_comments").Changed() {
		t.Errorf("changed: video_comments %v comment_replies %v post_comments %v, want true true false",
			j.Edge("video_comments").Changed(), j.Edge("comment_replies").Changed(), j.Edge("post_comments").Changed())
	}
	bad := head + `  videos: {changed_only: true}
  video_comments: {changed_only: false, refresh_after: 7d}
  video_transcripts: {refresh_after: 7d}
  highlights: {refresh_after: 1d}
`
	_, err = Parse("j.yaml", []byte(bad))
	want := `j.yaml:6: expand.videos.changed_only: applies only to content lists whose parent page carries their counter: comment_replies, post_comments, reel_comments, video_comments
j.yaml:7: expand.video_comments.refresh_after: is the longest a list goes unwalked while its counter stays the same: with changed_only false every walk buys the list, so it does nothing
j.yaml:9: expand.highlights.refresh_after: applies only to edges to an entity fetched whole (`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err =\n%v\nwant prefix\n%s", err, want)
	}
	// The contract's reels carry no comment count: nothing to decide on.
	_, err = Parse("j.yaml", []byte(jobHead+"seeds: {photosocial: {reels_searches: [surf]}}\nexpand:\n  reel_comments: {changed_only: true}\n"))
	if want := "j.yaml:6: expand.reel_comments.changed_only: the contract's reels carry no comment count"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("contract reel_comments: %v, want %s...", err, want)
	}
}
