package endpoints

import (
	"encoding/json"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// PSComment is a comment on a photo-sharing post. ID is set when the
// upstream sends one (id, or the platform's pk); ChildCommentCount can be
// null (Valid false). CreatedAt is Unix seconds whether the upstream sends
// them (the contract) or an ISO 8601 string (the real service); the like
// count is like_count or the real service's comment_like_count.
type PSComment struct {
	ID                Text
	Text              Text
	Username          Text
	CreatedAt         Int64 // Unix seconds
	LikeCount         Int64
	ChildCommentCount Int64
	// ParentID is the comment a reply answers (parent_comment_id), when
	// the answer says.
	ParentID Text
	// HasMoreReplies is whether the comment has replies beyond those the
	// answer carries (has_more_replies; without it, child_comment_count
	// above the replies carried).
	HasMoreReplies bool
	// Replies are the comment's replies the answer carries (the real
	// service's include_replies), each with its raw JSON; entries that do
	// not decode are counted in RepliesDropped, the last one's reason in
	// RepliesDropReason.
	Replies           []sources.Item[PSComment]
	RepliesDropped    int
	RepliesDropReason string
}

func (c *PSComment) UnmarshalJSON(b []byte) error {
	type user struct {
		Username Text `json:"username"`
	}
	var w struct {
		ID                Text         `json:"id"`
		PK                Text         `json:"pk"`
		Text              Text         `json:"text"`
		User              Object[user] `json:"user"`
		Owner             Object[user] `json:"owner"`
		Username          Text         `json:"username"`
		CreatedAt         UnixTime     `json:"created_at"`
		CreatedAtUTC      UnixTime     `json:"created_at_utc"`
		LikeCount         Int64        `json:"like_count"`
		CommentLikeCount  Int64        `json:"comment_like_count"`
		ChildCommentCount Int64        `json:"child_comment_count"`
		ParentID          Text         `json:"parent_comment_id"`
		Replies           []RawRef     `json:"replies"`
		HasMoreReplies    Flag         `json:"has_more_replies"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = PSComment{
		ID:                sources.FirstText(w.ID, w.PK),
		Text:              w.Text,
		Username:          sources.FirstText(w.User.V.Username, w.Owner.V.Username, w.Username),
		CreatedAt:         sources.FirstTime(w.CreatedAt, w.CreatedAtUTC),
		LikeCount:         sources.FirstInt(w.LikeCount, w.CommentLikeCount),
		ChildCommentCount: w.ChildCommentCount,
		ParentID:          w.ParentID,
	}
	if len(w.Replies) > 0 {
		c.Replies, c.RepliesDropped, c.RepliesDropReason = sources.DecodeItems[PSComment](w.Replies, "replies")
	}
	c.HasMoreReplies = w.HasMoreReplies.V
	if !w.HasMoreReplies.Valid {
		c.HasMoreReplies = w.ChildCommentCount.V > int64(len(w.Replies))
	}
	return nil
}

// PSCommentsCall calls one page of /photosocial/post/comments. The list has no
// hasMore: it ends on an empty or missing cursor or an empty page, which
// NextStep handles.
func PSCommentsCall(postURL, cursor string) sources.Call[*sources.Page[PSComment]] {
	postURL, err := sources.CheckMediaURL("/photosocial/post/comments", postURL)
	if err != nil {
		return sources.Refused[*sources.Page[PSComment]](err)
	}
	return sources.PageCall[PSComment](sources.PhotoSocial, "/post/comments", sources.WithCursor(url.Values{"url": {postURL}}, cursor), "comments")
}

// PSTranscript is the response of /photosocial/media/transcript. Media
// without speech has no entries, or entries whose Text is null.
type PSTranscript struct {
	Entries []sources.Item[PSTranscriptEntry]
	// Dropped and DropReason: entries that are not objects (see Page).
	Dropped    int
	DropReason string
	Credits    Credits
	Raw        json.RawMessage
}

// PSTranscriptEntry is one transcript of a media item.
type PSTranscriptEntry struct {
	ID        Text
	Shortcode Text
	Text      NullText
}

func (e *PSTranscriptEntry) UnmarshalJSON(b []byte) error {
	var w struct {
		ID        Text     `json:"id"`
		Shortcode Text     `json:"shortcode"`
		Code      Text     `json:"code"`
		Text      NullText `json:"text"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = PSTranscriptEntry{ID: w.ID, Shortcode: sources.FirstText(w.Shortcode, w.Code), Text: w.Text}
	return nil
}

// PSTranscriptCall calls /photosocial/media/transcript. It is slow upstream
// (5-30 s) and only short videos are transcribed.
func PSTranscriptCall(mediaURL string) sources.Call[*PSTranscript] {
	mediaURL, err := sources.CheckMediaURL("/photosocial/media/transcript", mediaURL)
	if err != nil {
		return sources.Refused[*PSTranscript](err)
	}
	// A null list of transcripts is a media without speech, not "not found".
	return sources.NewCall(sources.PhotoSocial, "/media/transcript", url.Values{"url": {mediaURL}}, func(a *sources.Answer) (*PSTranscript, error) {
		p, err := sources.DecodePage[PSTranscriptEntry](a, "transcripts")
		if err != nil {
			return nil, err
		}
		return &PSTranscript{Entries: p.Items, Dropped: p.Dropped, DropReason: p.DropReason, Credits: p.Credits, Raw: p.Raw}, nil
	})
}
