package sinks

import (
	"net/url"
	"strings"
)

// VideoIDOf is the id of a short-video video URL: the path segment after
// video ("https://host/@alice/video/7463250363559218474?_r=1" ->
// "7463250363559218474"), or "" when the URL has none.
func VideoIDOf(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	segs := strings.Split(u.Path, "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "video" && segs[i+1] != "" {
			return segs[i+1]
		}
	}
	return ""
}

// SVProfileVideo links a creator to a video of its videos list. The video
// must be in the batch or stored; the creator need not be.
type SVProfileVideo struct {
	UniqueID string `db:"unique_id"`
	VideoID  string `db:"video_id"`
}

// SVComment is a comment on a video, or a reply to one (ParentID set). Nil
// fields never erase stored values.
type SVComment struct {
	CommentID      string  `db:"comment_id"`
	VideoID        string  `db:"video_id"`
	ParentID       *string `db:"parent_comment_id"`
	AuthorUniqueID *string `db:"author_unique_id"`
	Text           string  `db:"text"`
	CreateTime     *int64  `db:"create_time"` // unix seconds
	DiggCount      *int64  `db:"digg_count"`
	ReplyCount     *int64  `db:"reply_count"`
	Raw            []byte  `db:"raw"`
}

// SVTranscript is a video's transcript answer: Text nil when it had none.
type SVTranscript struct {
	VideoID   string  `db:"video_id"`
	VideoURL  string  `db:"video_url"`
	Text      *string `db:"transcript"`
	HasSpeech bool    `db:"has_speech"`
	Raw       []byte  `db:"raw"`
}

var _ = upsert("shortvideo.profile_videos", 122, "UpsertSVProfileVideos", func(r SVProfileVideo) string { return r.UniqueID + "\x00" + r.VideoID }, nil)

var _ = upsert("shortvideo.comments", 123, "UpsertSVComments", func(r SVComment) string { return r.CommentID }, nil)

var _ = upsert("shortvideo.transcripts", 124, "UpsertSVTranscripts", func(r SVTranscript) string { return r.VideoID }, nil)
