package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// TestCheckCompleteContentLists: in the content world, a complete walk of
// a creator's videos, a video's comments or a comment's replies that
// stored other entries than the sandbox's list that day, or fewer, is a
// violation; the list of the day before (new comments missed, a deleted
// one kept) is one too.
func TestCheckCompleteContentLists(t *testing.T) {
	t.Parallel()
	s := contentScenario()
	s.World.Churn = sandbox.ChurnContent
	c := newChecker(s)
	// A creator whose comments changed between days 2 and 3.
	var h, video, cid string
	var day2, day3 []string
	for i := 0; h == "" && i < 300; i++ {
		cand := fmt.Sprintf("cw%d_v4", i)
		d, err := sandbox.CreatorContentChanges(sandbox.ChurnContent, cand, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range d.Lists {
			if l.Kind == sandbox.ListVideoComments && len(l.New) > 0 && l.CountFrom > 0 {
				h, video = cand, l.Video
				break
			}
		}
	}
	if h == "" {
		t.Fatal("no creator's comments change on day 3")
	}
	at := func(day int64) sandbox.Content { c, _ := sandbox.ContentAt(sandbox.ChurnContent, day); return c }
	day2, day3 = contentIDsOf(at(2).VideoComments(video, h)), contentIDsOf(at(3).VideoComments(video, h))
	vs, _ := at(3).CreatorVideos(h)
	var videos []string
	for _, v := range vs {
		videos = append(videos, v.ID)
	}
	for _, cm := range at(3).VideoComments(video, h) {
		if cm.Replies > 0 {
			cid = cm.ID
		}
	}
	videoURL := "https://www.tiktok.com/@" + h + "/video/" + video
	r := cleanNight(3)
	for _, x := range []struct {
		name string
		w    contentWalk
		bad  bool
	}{
		{"videos", contentWalk{kind: "shortvideo.profile_videos", key: h, stored: videos}, false},
		{"videos, one short", contentWalk{kind: "shortvideo.profile_videos", key: h, stored: videos[1:]}, true},
		{"comments", contentWalk{kind: "shortvideo.video_comments", key: videoURL, stored: day3}, false},
		{"comments of the day before", contentWalk{kind: "shortvideo.video_comments", key: videoURL, stored: day2}, true},
		{"comments and a stranger", contentWalk{kind: "shortvideo.video_comments", key: videoURL, stored: append(slices.Clone(day3), "7000")}, true},
		{"replies", contentWalk{kind: "shortvideo.comment_replies", key: cid, videoURL: videoURL,
			stored: contentIDsOf(at(3).CommentReplies(video, h, cid))}, cid == ""},
		{"no replies", contentWalk{kind: "shortvideo.comment_replies", key: cid, videoURL: videoURL}, cid != ""},
	} {
		vs, err := c.completeContentLists(r, []contentWalk{x.w})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(vs) > 0; got != x.bad {
			t.Errorf("%s: violations %v", x.name, vs)
		}
	}
}
