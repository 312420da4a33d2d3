package photosocial

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
// package shortvideo's content.go).

// Post is a post of the photo-sharing platform (a photo, a video, a
// carousel or a reel), as a profile's posts list it (items[], flat or under
// media) or the post endpoint answers it (data.xdt_shortcode_media). ID is
// the platform's pk (the part of an id "pk_owner" before its owner); the
// counters are Valid only when sent.
type Post struct {
	ID            sources.Text
	Code          sources.Text
	URL           sources.Text
	OwnerUsername sources.Text
	MediaType     sources.Int64 // 1 image, 2 video, 8 carousel
	ProductType   sources.Text  // "clips" for a reel
	IsVideo       sources.Flag
	Caption       sources.Text
	TakenAt       sources.Int64
	LikeCount     sources.Int64
	CommentCount  sources.Int64
	PlayCount     sources.Int64
}

// Video reports whether the post is a video (a reel or a video post): only
// those have a transcript.
func (p Post) Video() bool {
	return p.MediaType.V == 2 || p.IsVideo.V || p.ProductType == "clips"
}

type ownerWire struct {
	Username sources.Text `json:"username"`
}

type postWire struct {
	PK          sources.Text              `json:"pk"`
	ID          sources.Text              `json:"id"`
	Code        sources.Text              `json:"code"`
	Shortcode   sources.Text              `json:"shortcode"`
	URL         sources.Text              `json:"url"`
	Owner       sources.Object[ownerWire] `json:"owner"`
	User        sources.Object[ownerWire] `json:"user"`
	MediaType   sources.Int64             `json:"media_type"`
	ProductType sources.Text              `json:"product_type"`
	IsVideo     sources.Flag              `json:"is_video"`
	Caption     json.RawMessage           `json:"caption"`
	CaptionEdge sources.Object[struct {
		Edges []struct {
			Node struct {
				Text sources.Text `json:"text"`
			} `json:"node"`
		} `json:"edges"`
	}] `json:"edge_media_to_caption"`
	TakenAt      sources.UnixTime          `json:"taken_at"`
	TakenAtTS    sources.UnixTime          `json:"taken_at_timestamp"`
	LikeCount    sources.Int64             `json:"like_count"`
	LikeEdge     sources.Object[countEdge] `json:"edge_media_preview_like"`
	CommentCount sources.Int64             `json:"comment_count"`
	CommentEdge  sources.Object[countEdge] `json:"edge_media_to_parent_comment"`
	PreviewEdge  sources.Object[countEdge] `json:"edge_media_preview_comment"`
	PlayCount    sources.Int64             `json:"play_count"`
	IGPlayCount  sources.Int64             `json:"ig_play_count"`
	VideoPlay    sources.Int64             `json:"video_play_count"`
	Media        sources.RawRef            `json:"media"`
}

func (p *Post) UnmarshalJSON(b []byte) error { return p.decode(b, true) }

// decode reads a post; unwrap lets it look inside one media member (a
// reels list's {media: {...}} entry), and only one.
func (p *Post) decode(b []byte, unwrap bool) error {
	var w postWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if unwrap && len(w.Media) > 0 && w.Media[0] == '{' && w.PK == "" && w.ID == "" && w.Code == "" {
		return p.decode(w.Media, false)
	}
	*p = Post{
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
func pkOf(id sources.Text) sources.Text {
	pk, _, _ := strings.Cut(string(id), "_")
	return sources.Text(pk)
}

// postsShape is a profile's posts page: items[], the next page's cursor
// as next_max_id, more_available.
var postsShape = sources.PageShape{Lists: []string{"items", "posts"}, Cursors: []string{"next_max_id", "cursor"}, More: []string{"more_available", "has_more", "hasMore"}}

// UserPostsCall calls one page of a profile's posts, newest first
// (/v2/instagram/user/posts; the cursor goes out as next_max_id).
func UserPostsCall(handle, cursor string) sources.Call[*sources.Page[Post]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[Post]](sources.ParamError("/photosocial/user/posts", "handle", "is empty"))
	}
	return sources.ShapedPageCall[Post](sources.PhotoSocial, "/user/posts", sources.WithCursor(url.Values{"handle": {h}}, cursor), postsShape)
}

// UserReelsCall calls one page of a profile's reels, newest first
// (/v1/instagram/user/reels; the cursor goes out as max_id). Its entries
// are under items[].media (trimmed: flat), the next page under
// paging_info.max_id and paging_info.more_available (trimmed: max_id).
func UserReelsCall(handle, cursor string) sources.Call[*sources.Page[Reel]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[Reel]](sources.ParamError("/photosocial/user/reels", "handle", "is empty"))
	}
	return sources.NewCall(sources.PhotoSocial, "/user/reels", sources.WithCursor(url.Values{"handle": {h}}, cursor), func(a *sources.Answer) (*sources.Page[Reel], error) {
		p, err := sources.DecodeShapedPage[Reel](a, sources.PageShape{Lists: []string{"items", "reels"}, Cursors: []string{"max_id", "cursor"}, More: []string{"more_available", "has_more"}})
		if err != nil {
			return nil, err
		}
		if raw, ok := a.Member("paging_info"); ok {
			var w sources.Object[struct {
				MaxID sources.Cursor `json:"max_id"`
				More  sources.Flag   `json:"more_available"`
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

// PostDetail is the answer of /photosocial/post: the post (under
// data.xdt_shortcode_media), with its raw JSON; Found is false when the
// answer carries none.
type PostDetail struct {
	Post    sources.Item[Post]
	Found   bool
	Credits sources.Credits
	Raw     json.RawMessage
}

// PostCall calls one post or reel by its URL (/v1/instagram/post).
func PostCall(postURL string) sources.Call[*PostDetail] {
	postURL, err := sources.CheckMediaURL("/photosocial/post", postURL)
	if err != nil {
		return sources.Refused[*PostDetail](err)
	}
	return sources.ObjectCall(sources.PhotoSocial, "/post", url.Values{"url": {postURL}}, func(a *sources.Answer) (*PostDetail, error) {
		if a.Err() != nil {
			return nil, a.Err()
		}
		d := &PostDetail{Credits: a.Credits(), Raw: json.RawMessage(a.Body())}
		raw, ok := a.Member("data")
		if !ok {
			return d, nil
		}
		var data map[string]sources.RawRef
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

// CommentRepliesCall calls one page of the replies to a comment of a post
// or reel (/v1/instagram/post/comment/replies: the post's URL, the
// comment's id; comments, a string cursor, has_more).
func CommentRepliesCall(postURL, commentID, cursor string) sources.Call[*sources.Page[Comment]] {
	const endpoint = "/photosocial/post/comment/replies"
	postURL, err := sources.CheckMediaURL(endpoint, postURL)
	if err != nil {
		return sources.Refused[*sources.Page[Comment]](err)
	}
	if !sources.IsDigits(commentID) {
		return sources.Refused[*sources.Page[Comment]](sources.ParamError(endpoint, "comment_id", "must be a comment's numeric id"))
	}
	return sources.PageCall[Comment](sources.PhotoSocial, "/post/comment/replies",
		sources.WithCursor(url.Values{"url": {postURL}, "comment_id": {commentID}}, cursor), "comments", "replies")
}

// HighlightEntry is an entry of a profile's highlights: its id (bare
// digits), title, cover and owner.
type HighlightEntry struct {
	ID            sources.Text
	Title         sources.Text
	CoverURL      sources.Text
	OwnerUsername sources.Text
}

func (e *HighlightEntry) UnmarshalJSON(b []byte) error {
	type url struct {
		URL sources.Text `json:"url"`
	}
	var w struct {
		ID    sources.Text `json:"id"`
		Title sources.Text `json:"title"`
		Cover sources.Object[struct {
			Thumbnail sources.Text `json:"thumbnail_src"`
		}] `json:"cover_media"`
		Cropped sources.Object[url]       `json:"cover_media_cropped_thumbnail"`
		Owner   sources.Object[ownerWire] `json:"owner"`
		User    sources.Object[ownerWire] `json:"user"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = HighlightEntry{ID: sources.Text(strings.TrimPrefix(string(w.ID), "highlight:")), Title: w.Title,
		CoverURL: sources.FirstText(w.Cover.V.Thumbnail, w.Cropped.V.URL), OwnerUsername: sources.FirstText(w.Owner.V.Username, w.User.V.Username)}
	return nil
}

// HighlightsCall calls a profile's highlights (/v1/instagram/user/highlights:
// one answer, highlights[], no paging).
func HighlightsCall(handle string) sources.Call[*sources.Page[HighlightEntry]] {
	h := sources.NormalizeHandle(handle)
	if h == "" {
		return sources.Refused[*sources.Page[HighlightEntry]](sources.ParamError("/photosocial/user/highlights", "handle", "is empty"))
	}
	return sources.PageCall[HighlightEntry](sources.PhotoSocial, "/user/highlights", url.Values{"handle": {h}}, "highlights")
}
