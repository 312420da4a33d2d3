package endpoints

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

const (
	psHighlightEndpoint = "/photosocial/user/highlight/detail"
	highlightPrefix     = "highlight:"
)

// HighlightDigits returns the bare numeric id of a highlight given with or
// without the "highlight:" prefix the upstream returns. Anything but digits
// is an *Error of ClassBadRequest naming id.
func HighlightDigits(id string) (string, error) {
	d := strings.TrimPrefix(strings.TrimSpace(id), highlightPrefix)
	if !sources.IsDigits(d) {
		return "", sources.ParamError(psHighlightEndpoint, "id", fmt.Sprintf("%q must be digits, optionally prefixed %q", sources.Truncate(id, 40), highlightPrefix))
	}
	return d, nil
}

// PSHighlight is the response of /photosocial/user/highlight/detail. ID is
// as returned ("highlight:<digits>"); Digits is the bare id (the one sent
// when the answer carries none).
type PSHighlight struct {
	ID           Text
	Digits       Text
	Title        Text
	MediaCount   Int64
	Items        []sources.Item[PSHighlightItem]
	Username     Text
	UserVerified Flag
	// Dropped counts the items that are not media objects (null, a
	// string...) or do not decode; DropReason says why the last one was.
	Dropped    int
	DropReason string
	Credits    Credits
	Raw        json.RawMessage
}

// PSHighlightItem is a media item of a highlight: ID is its media id (id,
// else pk); MediaType 1 is an image, 2 a video; VideoURLs are the URLs of
// the video versions (none for images).
type PSHighlightItem struct {
	ID        Text
	MediaType Int64
	VideoURLs []string
}

func (it *PSHighlightItem) UnmarshalJSON(b []byte) error {
	var w struct {
		ID            Text  `json:"id"`
		PK            Text  `json:"pk"`
		MediaType     Int64 `json:"media_type"`
		VideoVersions []Object[struct {
			URL Text `json:"url"`
		}] `json:"video_versions"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*it = PSHighlightItem{ID: sources.FirstText(w.ID, w.PK), MediaType: w.MediaType}
	for _, v := range w.VideoVersions {
		if v.V.URL != "" {
			it.VideoURLs = append(it.VideoURLs, string(v.V.URL))
		}
	}
	return nil
}

func decodePSHighlight(a *sources.Answer, sent string, h *PSHighlight) error {
	if a.Err() != nil {
		return a.Err()
	}
	type user struct {
		Username   Text `json:"username"`
		IsVerified Flag `json:"is_verified"`
	}
	var w struct {
		ID         Text         `json:"id"`
		Title      Text         `json:"title"`
		MediaCount Int64        `json:"media_count"`
		Items      []RawRef     `json:"items"`
		User       Object[user] `json:"user"`
		Owner      Object[user] `json:"owner"`
	}
	if err := json.Unmarshal(a.Body(), &w); err != nil {
		return err
	}
	u := w.User.V
	if !w.User.OK {
		u = w.Owner.V
	}
	*h = PSHighlight{
		ID: w.ID, Digits: Text(sent), Title: w.Title, MediaCount: w.MediaCount,
		Username: u.Username, UserVerified: u.IsVerified,
		Credits: a.Credits(), Raw: a.Body(),
	}
	if d, err := HighlightDigits(string(w.ID)); err == nil {
		h.Digits = Text(d)
	}
	h.Items, h.Dropped, h.DropReason = sources.DecodeItems[PSHighlightItem](w.Items, "items")
	return nil
}

// PSHighlightCall calls /photosocial/user/highlight/detail. id may carry the
// "highlight:" prefix; the bare digits are sent.
func PSHighlightCall(id string) sources.Call[*PSHighlight] {
	digits, err := HighlightDigits(id)
	if err != nil {
		return sources.Refused[*PSHighlight](err)
	}
	return sources.ObjectCall(sources.PhotoSocial, "/user/highlight/detail", url.Values{"id": {digits}}, sources.DecodeInto(func(a *sources.Answer, h *PSHighlight) error {
		return decodePSHighlight(a, digits, h)
	}))
}
