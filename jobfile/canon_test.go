package jobfile

import (
	"slices"
	"strings"
	"testing"
)

// Every URL form a user may type or copy for one post, reel or video is
// one seed task, keyed as the owner's lists key it; a share link, which
// names the media only through a redirect, is refused by key and line
// (issue 32, point 4).
func TestURLSeedsAreCanonical(t *testing.T) {
	t.Parallel()
	head := "name: x\napi:\n  preset: scrapecreators\n"
	job, err := Parse("j.yaml", []byte(head+`seeds:
  shortvideo:
    videos:
      - https://www.tiktok.com/@chef/video/7351234567890123456
      - https://www.tiktok.com/@chef/video/7351234567890123456?is_from_webapp=1&sender_device=pc
      - https://m.tiktok.com/@chef/video/7351234567890123456/
      - http://tiktok.com/@chef/video/7351234567890123456?_r=1&_t=8kX#top
  photosocial:
    media:
      - https://www.instagram.com/p/CODE_1-x/
      - https://www.instagram.com/p/CODE_1-x/?utm_source=ig_web_copy_link&igsh=MzRlODBiNWFlZA==
      - https://instagram.com/p/CODE_1-x
      - https://m.instagram.com/studio/p/CODE_1-x/?img_index=2
      - https://instagr.am/p/CODE_1-x/
      - https://www.instagram.com/reel/REEL9/?igsh=abc
      - https://www.instagram.com/reels/REEL9/
      - https://www.instagram.com/tv/REEL9
      - https://www.instagram.com/studio/reel/REEL9/
    posts: ["https://www.instagram.com/p/CODE_1-x/?utm_medium=copy_link"]
    transcripts: ["https://instagram.com/reel/REEL9"]
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range job.SeedTasks() {
		got = append(got, task.Kind+" "+task.Key)
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{
		"photosocial.comments https://www.instagram.com/p/CODE_1-x/",
		"photosocial.post https://www.instagram.com/p/CODE_1-x/",
		"photosocial.post https://www.instagram.com/reel/REEL9/",
		"photosocial.transcript https://www.instagram.com/reel/REEL9/",
		"shortvideo.video https://www.tiktok.com/@chef/video/7351234567890123456",
	}
	if !slices.Equal(got, want) {
		t.Errorf("seed tasks:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Under the contract a post URL on its own platform is keyed on the
	// contract's web address; one on another host keeps that host.
	job, err = Parse("j.yaml", []byte(jobHead+`seeds:
  photosocial:
    posts: ["https://photosocial.example/p/abc?x=1", "https://M.Other.example/someone/p/abc/"]
`))
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, task := range job.SeedTasks() {
		got = append(got, task.Key)
	}
	if want := []string{"https://www.photosocial.example/p/abc/", "https://www.other.example/p/abc/"}; !slices.Equal(got, want) {
		t.Errorf("contract: %v, want %v", got, want)
	}
	_, err = Parse("j.yaml", []byte(head+`seeds:
  shortvideo:
    videos: ["https://vm.tiktok.com/ZMabc123/", "https://www.tiktok.com/@chef", "https://www.tiktok.com/t/ZTabc/"]
  photosocial:
    media: ["https://www.instagram.com/share/BAbc123/", "https://www.instagram.com/studio/", "https://www.instagram.com/p/"]
`))
	wantErr := `j.yaml:6: seeds.shortvideo.videos[0]: "https://vm.tiktok.com/ZMabc123/" is a share link: it names the video only through a redirect; open it and copy the video's address (…/@<handle>/video/<id>)
j.yaml:6: seeds.shortvideo.videos[1]: "https://www.tiktok.com/@chef" is not a video URL (…/@<handle>/video/<id>)
j.yaml:6: seeds.shortvideo.videos[2]: "https://www.tiktok.com/t/ZTabc/" is a share link: it names the video only through a redirect; open it and copy the video's address (…/@<handle>/video/<id>)
j.yaml:8: seeds.photosocial.media[0]: "https://www.instagram.com/share/BAbc123/" is a share link (/share/...): it names the post only through a redirect; open it and copy the post's address (.../p/<code>/)
j.yaml:8: seeds.photosocial.media[1]: "https://www.instagram.com/studio/" is not a post or reel URL (.../p/<code>/, .../reel/<code>/, optionally after the owner's handle)
j.yaml:8: seeds.photosocial.media[2]: "https://www.instagram.com/p/" names no post code after /p/ (.../p/<code>/)`
	if err == nil || err.Error() != wantErr {
		t.Errorf("err =\n%v\nwant\n%s", err, wantErr)
	}
}
