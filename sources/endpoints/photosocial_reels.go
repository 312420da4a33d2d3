package endpoints

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

// PSReel is a reel of the reels search. Caption is the caption text, whether
// the upstream sends a string or the platform's {"text": ...} object. The
// real service sends shortcode for code, no play count (PlayCount not
// Valid), and taken_at as an ISO 8601 string; TakenAt is Unix seconds. URL
// is the reel's web address when the answer carries it (the real service
// does; the contract gives only the code).
type PSReel struct {
	ID            Text
	Code          Text
	URL           Text
	OwnerUsername Text
	PlayCount     Int64
	LikeCount     Int64
	CommentCount  Int64
	Caption       Text
	TakenAt       Int64
}

type psReelWire struct {
	ID    Text `json:"id"`
	PK    Text `json:"pk"`
	Code  Text `json:"code"`
	Short Text `json:"shortcode"`
	URL   Text `json:"url"`
	Owner Object[struct {
		Username Text `json:"username"`
	}] `json:"owner"`
	User Object[struct {
		Username Text `json:"username"`
	}] `json:"user"`
	PlayCount   Int64           `json:"play_count"`
	PlayCountC  Int64           `json:"playCount"`
	VideoPlay   Int64           `json:"video_play_count"`
	LikeCount   Int64           `json:"like_count"`
	LikeCountC  Int64           `json:"likeCount"`
	Comments    Int64           `json:"comment_count"`
	CommentsC   Int64           `json:"commentCount"`
	Caption     json.RawMessage `json:"caption"`
	CaptionText Text            `json:"caption_text"`
	Media       json.RawMessage `json:"media"`
	TakenAt     UnixTime        `json:"taken_at"`
	TakenAtC    UnixTime        `json:"takenAt"`
}

func (r *PSReel) UnmarshalJSON(b []byte) error {
	var w psReelWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if len(w.Media) > 0 && w.Media[0] == '{' && w.ID == "" && w.PK == "" && w.Code == "" {
		return r.UnmarshalJSON(w.Media) // the platform's {media: {...}} entry
	}
	*r = PSReel{
		ID:            sources.FirstText(w.PK, pkOf(w.ID)),
		Code:          sources.FirstText(w.Code, w.Short),
		URL:           w.URL,
		OwnerUsername: sources.FirstText(w.Owner.V.Username, w.User.V.Username),
		PlayCount:     sources.FirstInt(w.PlayCount, w.PlayCountC, w.VideoPlay),
		LikeCount:     sources.FirstInt(w.LikeCount, w.LikeCountC),
		CommentCount:  sources.FirstInt(w.Comments, w.CommentsC),
		Caption:       w.CaptionText,
		TakenAt:       sources.FirstTime(w.TakenAt, w.TakenAtC),
	}
	return readCaption(w.Caption, &r.Caption)
}

// readCaption sets *caption from raw, a caption sent as a string or as the
// platform's {"text": ...} object; absent (empty raw) leaves it.
func readCaption(raw json.RawMessage, caption *Text) error {
	if len(raw) == 0 {
		return nil
	}
	var o Object[struct {
		Text Text `json:"text"`
	}]
	if err := json.Unmarshal(raw, &o); err != nil {
		return err
	}
	if o.OK {
		*caption = o.V.Text
		return nil
	}
	return caption.UnmarshalJSON(raw)
}

// PSReelsSearchCall calls page (from 1) of /photosocial/reels/search. The
// list has no cursor: the page's Cursor is the next page number when the
// page has reels and "" when it is empty, with HasMoreKnown false, so
// NextStep ends on the first empty page. The real service serves about 11
// pages and answers 400 beyond: a 400 for a page after the first is taken as
// the end of the list and returned as an empty page.
func PSReelsSearchCall(query string, page int) sources.Call[*sources.Page[PSReel]] {
	const endpoint = "/photosocial/reels/search"
	query = strings.TrimSpace(query)
	if query == "" {
		return sources.Refused[*sources.Page[PSReel]](sources.ParamError(endpoint, "query", "is empty"))
	}
	if page < 1 {
		return sources.Refused[*sources.Page[PSReel]](sources.ParamError(endpoint, "page", "must be 1 or more"))
	}
	call := sources.PageCall[PSReel](sources.PhotoSocial, "/reels/search", url.Values{"query": {query}, "page": {strconv.Itoa(page)}}, "reels", "items")
	return call.Then(func(p *sources.Page[PSReel], err error) (*sources.Page[PSReel], error) {
		if err != nil {
			var e *sources.Error
			if page > 1 && errors.As(err, &e) && e.Status == 400 {
				return &sources.Page[PSReel]{}, nil
			}
			return nil, err
		}
		p.Cursor, p.HasMore, p.HasMoreKnown = "", false, false
		if p.Info().Items > 0 {
			p.Cursor = strconv.Itoa(page + 1)
		}
		return p, nil
	})
}
