package endpoints

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

// SVProfileVideosCall calls one page of a creator's videos, newest first
// (/v3/tiktok/profile/videos: aweme_list, has_more, the next page's cursor
// as max_cursor).
func SVProfileVideosCall(handle, cursor string) sources.Call[*sources.Page[SVVideo]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[SVVideo]](sources.ParamError("/shortvideo/profile/videos", "handle", "is empty"))
	}
	return sources.PageCall[SVVideo](sources.ShortVideo, "/profile/videos", sources.WithCursor(url.Values{"handle": {h}}, cursor), svVideoListKeys...)
}

// SVVideoDetail is the answer of /shortvideo/video: the video under
// aweme_detail, with its raw JSON.
type SVVideoDetail struct {
	Video   sources.Item[SVVideo]
	Credits Credits
	Raw     json.RawMessage
}

// SVVideoCall calls one video by its URL (/v2/tiktok/video).
func SVVideoCall(videoURL string) sources.Call[*SVVideoDetail] {
	videoURL, err := sources.CheckMediaURL("/shortvideo/video", videoURL)
	if err != nil {
		return sources.Refused[*SVVideoDetail](err)
	}
	return sources.ObjectCall(sources.ShortVideo, "/video", url.Values{"url": {videoURL}}, func(a *sources.Answer) (*SVVideoDetail, error) {
		if a.Err() != nil {
			return nil, a.Err()
		}
		d := &SVVideoDetail{Credits: a.Credits(), Raw: json.RawMessage(a.Body())}
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

// SVComment is a comment on a video, or a reply to one (ParentID set: the
// platform's reply_id, "0" on a top-level comment, is read as none).
type SVComment struct {
	ID         Text // cid
	VideoID    Text // aweme_id
	ParentID   Text
	Text       Text
	Author     SVAuthor
	CreateTime Int64
	DiggCount  Int64
	ReplyCount Int64 // reply_comment_total: the replies the comment has
}

func (c *SVComment) UnmarshalJSON(b []byte) error {
	var w struct {
		CID        Text                 `json:"cid"`
		ID         Text                 `json:"id"`
		AwemeID    Text                 `json:"aweme_id"`
		ReplyID    Text                 `json:"reply_id"`
		Text       Text                 `json:"text"`
		User       Object[svAuthorWire] `json:"user"`
		CreateTime UnixTime             `json:"create_time"`
		DiggCount  Int64                `json:"digg_count"`
		ReplyTotal Int64                `json:"reply_comment_total"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	u := w.User.V
	*c = SVComment{
		ID: sources.FirstText(w.CID, w.ID), VideoID: w.AwemeID, Text: w.Text,
		Author:     SVAuthor{UniqueID: sources.FirstText(u.UniqueID, u.UniqueIDS), Nickname: u.Nickname, UID: sources.FirstText(u.UID, u.ID), SecUID: sources.FirstText(u.SecUID, u.SecUIDS)},
		CreateTime: Int64(w.CreateTime), DiggCount: w.DiggCount, ReplyCount: w.ReplyTotal,
	}
	if w.ReplyID != "0" {
		c.ParentID = w.ReplyID
	}
	return nil
}

// SVVideoCommentsCall calls one page of a video's comments
// (/v1/tiktok/video/comments: comments, a numeric cursor, has_more).
func SVVideoCommentsCall(videoURL, cursor string) sources.Call[*sources.Page[SVComment]] {
	videoURL, err := sources.CheckMediaURL("/shortvideo/video/comments", videoURL)
	if err != nil {
		return sources.Refused[*sources.Page[SVComment]](err)
	}
	return sources.PageCall[SVComment](sources.ShortVideo, "/video/comments", sources.WithCursor(url.Values{"url": {videoURL}}, cursor), "comments")
}

// SVCommentRepliesCall calls one page of the replies to a video's comment
// (/v1/tiktok/video/comment/replies: the comment's cid and its video's URL).
func SVCommentRepliesCall(videoURL, commentID, cursor string) sources.Call[*sources.Page[SVComment]] {
	const endpoint = "/shortvideo/video/comment/replies"
	videoURL, err := sources.CheckMediaURL(endpoint, videoURL)
	if err != nil {
		return sources.Refused[*sources.Page[SVComment]](err)
	}
	if !sources.IsDigits(commentID) {
		return sources.Refused[*sources.Page[SVComment]](sources.ParamError(endpoint, "comment_id", "must be a comment's numeric id (cid)"))
	}
	return sources.PageCall[SVComment](sources.ShortVideo, "/video/comment/replies",
		sources.WithCursor(url.Values{"url": {videoURL}, "comment_id": {commentID}}, cursor), "comments")
}

// SVTranscript is the answer of /shortvideo/video/transcript: the video's
// id and URL and its transcript as WEBVTT text (Valid false, or empty, when
// the service has none: no speech, or a video too long).
type SVTranscript struct {
	ID      Text
	URL     Text
	Text    NullText
	Credits Credits
	Raw     json.RawMessage
}

// SVTranscriptCall calls a video's transcript (/v1/tiktok/video/transcript).
// An answer without a transcript is an answer (no speech), not "not found".
func SVTranscriptCall(videoURL string) sources.Call[*SVTranscript] {
	videoURL, err := sources.CheckMediaURL("/shortvideo/video/transcript", videoURL)
	if err != nil {
		return sources.Refused[*SVTranscript](err)
	}
	return sources.NewCall(sources.ShortVideo, "/video/transcript", url.Values{"url": {videoURL}}, sources.DecodeInto(func(a *sources.Answer, tr *SVTranscript) error {
		var w struct {
			ID         Text     `json:"id"`
			URL        Text     `json:"url"`
			Transcript NullText `json:"transcript"`
		}
		if err := sources.DecodeObject(a, &w, &tr.Raw, &tr.Credits); err != nil {
			return err
		}
		tr.ID, tr.URL, tr.Text = w.ID, w.URL, w.Transcript
		return nil
	}))
}
