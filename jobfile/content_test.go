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
