package shortvideo

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// The short-video platform's content endpoints of the real service (issue
// 27; docs/upstream.md, "The real service's own endpoints"): a creator's
// videos, one video, its comments and their replies, its transcript. The
// contract has none of them: they are called in the crawler's own
// contract-style terms (/shortvideo/profile/videos, ...), which only the
// real service's dialect routes (Endpoint.RealOnly).

// ProfileVideosCall calls one page of a creator's videos, newest first
// (/v3/tiktok/profile/videos: aweme_list, has_more, the next page's cursor
// as max_cursor).
func ProfileVideosCall(handle, cursor string) sources.Call[*sources.Page[Video]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[Video]](sources.ParamError("/shortvideo/profile/videos", "handle", "is empty"))
	}
	return sources.PageCall[Video](sources.ShortVideo, "/profile/videos", sources.WithCursor(url.Values{"handle": {h}}, cursor), videoListKeys...)
}

// VideoDetail is the answer of /shortvideo/video: the video under
// aweme_detail, with its raw JSON.
type VideoDetail struct {
	Video   sources.Item[Video]
	Credits sources.Credits
	Raw     json.RawMessage
}

// VideoCall calls one video by its URL (/v2/tiktok/video).
func VideoCall(videoURL string) sources.Call[*VideoDetail] {
	videoURL, err := sources.CheckMediaURL("/shortvideo/video", videoURL)
	if err != nil {
		return sources.Refused[*VideoDetail](err)
	}
	return sources.ObjectCall(sources.ShortVideo, "/video", url.Values{"url": {videoURL}}, func(a *sources.Answer) (*VideoDetail, error) {
		if a.Err() != nil {
			return nil, a.Err()
		}
		d := &VideoDetail{Credits: a.Credits(), Raw: json.RawMessage(a.Body())}
		raw, ok := a.Member("aweme_detail", "itemInfo", "video")
		if !ok {
			return d, nil // no video: the kind says so
		}
		if err := json.Unmarshal(raw, &d.Video.V); err != nil {
			return nil, fmt.Errorf("aweme_detail: %w", err)
		}
		d.Video.Raw = raw
		return d, nil
	})
}

// Comment is a comment on a video, or a reply to one (ParentID set: the
// platform's reply_id, "0" on a top-level comment, is read as none).
type Comment struct {
	ID         sources.Text // cid
	VideoID    sources.Text // aweme_id
	ParentID   sources.Text
	Text       sources.Text
	Author     Author
	CreateTime sources.Int64
	DiggCount  sources.Int64
	ReplyCount sources.Int64 // reply_comment_total: the replies the comment has
}

func (c *Comment) UnmarshalJSON(b []byte) error {
	var w struct {
		CID        sources.Text               `json:"cid"`
		ID         sources.Text               `json:"id"`
		AwemeID    sources.Text               `json:"aweme_id"`
		ReplyID    sources.Text               `json:"reply_id"`
		Text       sources.Text               `json:"text"`
		User       sources.Object[authorWire] `json:"user"`
		CreateTime sources.UnixTime           `json:"create_time"`
		DiggCount  sources.Int64              `json:"digg_count"`
		ReplyTotal sources.Int64              `json:"reply_comment_total"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	u := w.User.V
	*c = Comment{
		ID: sources.FirstText(w.CID, w.ID), VideoID: w.AwemeID, Text: w.Text,
		Author:     Author{UniqueID: sources.FirstText(u.UniqueID, u.UniqueIDS), Nickname: u.Nickname, UID: sources.FirstText(u.UID, u.ID), SecUID: sources.FirstText(u.SecUID, u.SecUIDS)},
		CreateTime: sources.Int64(w.CreateTime), DiggCount: w.DiggCount, ReplyCount: w.ReplyTotal,
	}
	if w.ReplyID != "0" {
		c.ParentID = w.ReplyID
	}
	return nil
}

// VideoCommentsCall calls one page of a video's comments
// (/v1/tiktok/video/comments: comments, a numeric cursor, has_more).
func VideoCommentsCall(videoURL, cursor string) sources.Call[*sources.Page[Comment]] {
	videoURL, err := sources.CheckMediaURL("/shortvideo/video/comments", videoURL)
	if err != nil {
		return sources.Refused[*sources.Page[Comment]](err)
	}
	return sources.PageCall[Comment](sources.ShortVideo, "/video/comments", sources.WithCursor(url.Values{"url": {videoURL}}, cursor), "comments")
}

// CommentRepliesCall calls one page of the replies to a video's comment
// (/v1/tiktok/video/comment/replies: the comment's cid and its video's URL).
func CommentRepliesCall(videoURL, commentID, cursor string) sources.Call[*sources.Page[Comment]] {
	const endpoint = "/shortvideo/video/comment/replies"
	videoURL, err := sources.CheckMediaURL(endpoint, videoURL)
	if err != nil {
		return sources.Refused[*sources.Page[Comment]](err)
	}
	if !sources.IsDigits(commentID) {
		return sources.Refused[*sources.Page[Comment]](sources.ParamError(endpoint, "comment_id", "must be a comment's numeric id (cid)"))
	}
	return sources.PageCall[Comment](sources.ShortVideo, "/video/comment/replies",
		sources.WithCursor(url.Values{"url": {videoURL}, "comment_id": {commentID}}, cursor), "comments")
}

// Transcript is the answer of /shortvideo/video/transcript: the video's
// id and URL and its transcript as WEBVTT text (Valid false, or empty, when
// the service has none: no speech, or a video too long).
type Transcript struct {
	ID      sources.Text
	URL     sources.Text
	Text    sources.NullText
	Credits sources.Credits
	Raw     json.RawMessage
}

// TranscriptCall calls a video's transcript (/v1/tiktok/video/transcript).
// An answer without a transcript is an answer (no speech), not "not found".
func TranscriptCall(videoURL string) sources.Call[*Transcript] {
	videoURL, err := sources.CheckMediaURL("/shortvideo/video/transcript", videoURL)
	if err != nil {
		return sources.Refused[*Transcript](err)
	}
	return sources.NewCall(sources.ShortVideo, "/video/transcript", url.Values{"url": {videoURL}}, sources.DecodeInto(func(a *sources.Answer, tr *Transcript) error {
		var w struct {
			ID         sources.Text     `json:"id"`
			URL        sources.Text     `json:"url"`
			Transcript sources.NullText `json:"transcript"`
		}
		if err := sources.DecodeObject(a, &w, &tr.Raw, &tr.Credits); err != nil {
			return err
		}
		tr.ID, tr.URL, tr.Text = w.ID, w.URL, w.Transcript
		return nil
	}))
}
