package photosocial

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

const (
	highlightEndpoint = "/photosocial/user/highlight/detail"
	highlightPrefix   = "highlight:"
)

// HighlightDigits returns the bare numeric id of a highlight given with or
// without the "highlight:" prefix the upstream returns. Anything but digits
// is an *Error of ClassBadRequest naming id.
func HighlightDigits(id string) (string, error) {
	d := strings.TrimPrefix(strings.TrimSpace(id), highlightPrefix)
	if !sources.IsDigits(d) {
		return "", sources.ParamError(highlightEndpoint, "id", fmt.Sprintf("%q must be digits, optionally prefixed %q", sources.Truncate(id, 40), highlightPrefix))
	}
	return d, nil
}

// Highlight is the response of /photosocial/user/highlight/detail. ID is
// as returned ("highlight:<digits>"); Digits is the bare id (the one sent
// when the answer carries none).
type Highlight struct {
	ID           sources.Text
	Digits       sources.Text
	Title        sources.Text
	MediaCount   sources.Int64
	Items        []sources.Item[HighlightItem]
	Username     sources.Text
	UserVerified sources.Flag
	// Dropped counts the items that are not media objects (null, a
	// string...) or do not decode; DropReason says why the last one was.
	Dropped    int
	DropReason string
	Credits    sources.Credits
	Raw        json.RawMessage
}

// HighlightItem is a media item of a highlight: ID is its media id (id,
// else pk); MediaType 1 is an image, 2 a video; VideoURLs are the URLs of
// the video versions (none for images).
type HighlightItem struct {
	ID        sources.Text
	MediaType sources.Int64
	VideoURLs []string
}

func (it *HighlightItem) UnmarshalJSON(b []byte) error {
	var w struct {
		ID            sources.Text  `json:"id"`
		PK            sources.Text  `json:"pk"`
		MediaType     sources.Int64 `json:"media_type"`
		VideoVersions []sources.Object[struct {
			URL sources.Text `json:"url"`
		}] `json:"video_versions"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*it = HighlightItem{ID: sources.FirstText(w.ID, w.PK), MediaType: w.MediaType}
	for _, v := range w.VideoVersions {
		if v.V.URL != "" {
			it.VideoURLs = append(it.VideoURLs, string(v.V.URL))
		}
	}
	return nil
}

func decodeHighlight(a *sources.Answer, sent string, h *Highlight) error {
	if a.Err() != nil {
		return a.Err()
	}
	type user struct {
		Username   sources.Text `json:"username"`
		IsVerified sources.Flag `json:"is_verified"`
	}
	var w struct {
		ID         sources.Text         `json:"id"`
		Title      sources.Text         `json:"title"`
		MediaCount sources.Int64        `json:"media_count"`
		Items      []sources.RawRef     `json:"items"`
		User       sources.Object[user] `json:"user"`
		Owner      sources.Object[user] `json:"owner"`
	}
	if err := json.Unmarshal(a.Body(), &w); err != nil {
		return err
	}
	u := w.User.V
	if !w.User.OK {
		u = w.Owner.V
	}
	*h = Highlight{
		ID: w.ID, Digits: sources.Text(sent), Title: w.Title, MediaCount: w.MediaCount,
		Username: u.Username, UserVerified: u.IsVerified,
		Credits: a.Credits(), Raw: a.Body(),
	}
	if d, err := HighlightDigits(string(w.ID)); err == nil {
		h.Digits = sources.Text(d)
	}
	h.Items, h.Dropped, h.DropReason = sources.DecodeItems[HighlightItem](w.Items, "items")
	return nil
}

// HighlightCall calls /photosocial/user/highlight/detail. id may carry the
// "highlight:" prefix; the bare digits are sent.
func HighlightCall(id string) sources.Call[*Highlight] {
	digits, err := HighlightDigits(id)
	if err != nil {
		return sources.Refused[*Highlight](err)
	}
	return sources.ObjectCall(sources.PhotoSocial, "/user/highlight/detail", url.Values{"id": {digits}}, sources.DecodeInto(func(a *sources.Answer, h *Highlight) error {
		return decodeHighlight(a, digits, h)
	}))
}
