package endpoints

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

// The photo-sharing platform's content endpoints of the real service
// (issue 27; docs/upstream.md, "The real service's own endpoints"): a
// profile's posts and reels, one post, a comment's replies beyond those
// shown, a profile's highlights. The contract has none of them (see
// shortvideo_content.go).

// PSPost is a post of the photo-sharing platform (a photo, a video, a
// carousel or a reel), as a profile's posts list it (items[], flat or under
// media) or the post endpoint answers it (data.xdt_shortcode_media). ID is
// the platform's pk (the part of an id "pk_owner" before its owner); the
// counters are Valid only when sent.
type PSPost struct {
	ID            Text
	Code          Text
	URL           Text
	OwnerUsername Text
	MediaType     Int64 // 1 image, 2 video, 8 carousel
	ProductType   Text  // "clips" for a reel
	IsVideo       Flag
	Caption       Text
	TakenAt       Int64
	LikeCount     Int64
	CommentCount  Int64
	PlayCount     Int64
}

// Video reports whether the post is a video (a reel or a video post): only
// those have a transcript.
func (p PSPost) Video() bool {
	return p.MediaType.V == 2 || p.IsVideo.V || p.ProductType == "clips"
}

type psOwnerWire struct {
	Username Text `json:"username"`
}

type psPostWire struct {
	PK          Text                `json:"pk"`
	ID          Text                `json:"id"`
	Code        Text                `json:"code"`
	Shortcode   Text                `json:"shortcode"`
	URL         Text                `json:"url"`
	Owner       Object[psOwnerWire] `json:"owner"`
	User        Object[psOwnerWire] `json:"user"`
	MediaType   Int64               `json:"media_type"`
	ProductType Text                `json:"product_type"`
	IsVideo     Flag                `json:"is_video"`
	Caption     json.RawMessage     `json:"caption"`
	CaptionEdge Object[struct {
		Edges []struct {
			Node struct {
				Text Text `json:"text"`
			} `json:"node"`
		} `json:"edges"`
	}] `json:"edge_media_to_caption"`
	TakenAt      UnixTime          `json:"taken_at"`
	TakenAtTS    UnixTime          `json:"taken_at_timestamp"`
	LikeCount    Int64             `json:"like_count"`
	LikeEdge     Object[countEdge] `json:"edge_media_preview_like"`
	CommentCount Int64             `json:"comment_count"`
	CommentEdge  Object[countEdge] `json:"edge_media_to_parent_comment"`
	PreviewEdge  Object[countEdge] `json:"edge_media_preview_comment"`
	PlayCount    Int64             `json:"play_count"`
	IGPlayCount  Int64             `json:"ig_play_count"`
	VideoPlay    Int64             `json:"video_play_count"`
	Media        RawRef            `json:"media"`
}

func (p *PSPost) UnmarshalJSON(b []byte) error { return p.decode(b, true) }

// decode reads a post; unwrap lets it look inside one media member (a
// reels list's {media: {...}} entry), and only one.
func (p *PSPost) decode(b []byte, unwrap bool) error {
	var w psPostWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if unwrap && len(w.Media) > 0 && w.Media[0] == '{' && w.PK == "" && w.ID == "" && w.Code == "" {
		return p.decode(w.Media, false)
	}
	*p = PSPost{
		ID:            sources.FirstText(w.PK, pkOf(w.ID)),
		Code:          sources.FirstText(w.Code, w.Shortcode),
		URL:           w.URL,
		OwnerUsername: sources.FirstText(w.Owner.V.Username, w.User.V.Username),
		MediaType:     w.MediaType,
		ProductType:   w.ProductType,
		IsVideo:       w.IsVideo,
		TakenAt:       sources.FirstTime(w.TakenAt, w.TakenAtTS),
		LikeCount:     sources.FirstInt(w.LikeCount, w.LikeEdge.V.Count),
		CommentCount:  sources.FirstInt(w.CommentCount, w.CommentEdge.V.Count, w.PreviewEdge.V.Count),
		PlayCount:     sources.FirstInt(w.PlayCount, w.IGPlayCount, w.VideoPlay),
	}
	if edges := w.CaptionEdge.V.Edges; len(edges) > 0 {
		p.Caption = edges[0].Node.Text
	}
	return readCaption(w.Caption, &p.Caption)
}

// pkOf is the pk of a media id: "3600545900919030401_260462810" is the
// media 3600545900919030401 of owner 260462810.
func pkOf(id Text) Text {
	pk, _, _ := strings.Cut(string(id), "_")
	return Text(pk)
}

// postsShape is a profile's posts page: items[], the next page's cursor
// as next_max_id, more_available.
var psPostsShape = sources.PageShape{Lists: []string{"items", "posts"}, Cursors: []string{"next_max_id", "cursor"}, More: []string{"more_available", "has_more", "hasMore"}}

// PSUserPostsCall calls one page of a profile's posts, newest first
// (/v2/instagram/user/posts; the cursor goes out as next_max_id).
func PSUserPostsCall(handle, cursor string) sources.Call[*sources.Page[PSPost]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[PSPost]](sources.ParamError("/photosocial/user/posts", "handle", "is empty"))
	}
	return sources.ShapedPageCall[PSPost](sources.PhotoSocial, "/user/posts", sources.WithCursor(url.Values{"handle": {h}}, cursor), psPostsShape)
}

// PSUserReelsCall calls one page of a profile's reels, newest first
// (/v1/instagram/user/reels; the cursor goes out as max_id). Its entries
// are under items[].media (trimmed: flat), the next page under
// paging_info.max_id and paging_info.more_available (trimmed: max_id).
func PSUserReelsCall(handle, cursor string) sources.Call[*sources.Page[PSReel]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[PSReel]](sources.ParamError("/photosocial/user/reels", "handle", "is empty"))
	}
	return sources.NewCall(sources.PhotoSocial, "/user/reels", sources.WithCursor(url.Values{"handle": {h}}, cursor), func(a *sources.Answer) (*sources.Page[PSReel], error) {
		p, err := sources.DecodeShapedPage[PSReel](a, sources.PageShape{Lists: []string{"items", "reels"}, Cursors: []string{"max_id", "cursor"}, More: []string{"more_available", "has_more"}})
		if err != nil {
			return nil, err
		}
		if raw, ok := a.Member("paging_info"); ok {
			var w Object[struct {
				MaxID sources.Cursor `json:"max_id"`
				More  Flag           `json:"more_available"`
			}]
			if err := json.Unmarshal(raw, &w); err != nil {
				return nil, fmt.Errorf("paging_info: %w", err)
			}
			if w.OK {
				p.Cursor = string(w.V.MaxID)
				p.HasMore, p.HasMoreKnown = w.V.More.V, w.V.More.Valid
			}
		}
		return p, nil
	})
}

// PSPostDetail is the answer of /photosocial/post: the post (under
// data.xdt_shortcode_media), with its raw JSON; Found is false when the
// answer carries none.
type PSPostDetail struct {
	Post    sources.Item[PSPost]
	Found   bool
	Credits Credits
	Raw     json.RawMessage
}

// PSPostCall calls one post or reel by its URL (/v1/instagram/post).
func PSPostCall(postURL string) sources.Call[*PSPostDetail] {
	postURL, err := sources.CheckMediaURL("/photosocial/post", postURL)
	if err != nil {
		return sources.Refused[*PSPostDetail](err)
	}
	return sources.ObjectCall(sources.PhotoSocial, "/post", url.Values{"url": {postURL}}, func(a *sources.Answer) (*PSPostDetail, error) {
		if a.Err() != nil {
			return nil, a.Err()
		}
		d := &PSPostDetail{Credits: a.Credits(), Raw: json.RawMessage(a.Body())}
		raw, ok := a.Member("data")
		if !ok {
			return d, nil
		}
		var data map[string]RawRef
		if err := json.Unmarshal(raw, &data); err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		for _, name := range []string{"xdt_shortcode_media", "shortcode_media"} {
			if m, ok := data[name]; ok && string(m) != "null" {
				if err := json.Unmarshal(m, &d.Post.V); err != nil {
					return nil, fmt.Errorf("data.%s: %w", name, err)
				}
				d.Post.Raw, d.Found = json.RawMessage(m), true
				break
			}
		}
		return d, nil
	})
}

// PSCommentRepliesCall calls one page of the replies to a comment of a post
// or reel (/v1/instagram/post/comment/replies: the post's URL, the
// comment's id; comments, a string cursor, has_more).
func PSCommentRepliesCall(postURL, commentID, cursor string) sources.Call[*sources.Page[PSComment]] {
	const endpoint = "/photosocial/post/comment/replies"
	postURL, err := sources.CheckMediaURL(endpoint, postURL)
	if err != nil {
		return sources.Refused[*sources.Page[PSComment]](err)
	}
	if !sources.IsDigits(commentID) {
		return sources.Refused[*sources.Page[PSComment]](sources.ParamError(endpoint, "comment_id", "must be a comment's numeric id"))
	}
	return sources.PageCall[PSComment](sources.PhotoSocial, "/post/comment/replies",
		sources.WithCursor(url.Values{"url": {postURL}, "comment_id": {commentID}}, cursor), "comments", "replies")
}

// PSHighlightEntry is an entry of a profile's highlights: its id (bare
// digits), title, cover and owner.
type PSHighlightEntry struct {
	ID            Text
	Title         Text
	CoverURL      Text
	OwnerUsername Text
}

func (e *PSHighlightEntry) UnmarshalJSON(b []byte) error {
	type url struct {
		URL Text `json:"url"`
	}
	var w struct {
		ID    Text `json:"id"`
		Title Text `json:"title"`
		Cover Object[struct {
			Thumbnail Text `json:"thumbnail_src"`
		}] `json:"cover_media"`
		Cropped Object[url]         `json:"cover_media_cropped_thumbnail"`
		Owner   Object[psOwnerWire] `json:"owner"`
		User    Object[psOwnerWire] `json:"user"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = PSHighlightEntry{ID: Text(strings.TrimPrefix(string(w.ID), "highlight:")), Title: w.Title,
		CoverURL: sources.FirstText(w.Cover.V.Thumbnail, w.Cropped.V.URL), OwnerUsername: sources.FirstText(w.Owner.V.Username, w.User.V.Username)}
	return nil
}

// PSHighlightsCall calls a profile's highlights (/v1/instagram/user/highlights:
// one answer, highlights[], no paging).
func PSHighlightsCall(handle string) sources.Call[*sources.Page[PSHighlightEntry]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[PSHighlightEntry]](sources.ParamError("/photosocial/user/highlights", "handle", "is empty"))
	}
	return sources.PageCall[PSHighlightEntry](sources.PhotoSocial, "/user/highlights", url.Values{"handle": {h}}, "highlights")
}
