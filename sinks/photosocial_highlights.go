package sinks

import (
	"slices"
	"strconv"
	"strings"
)

// HighlightID is the bare numeric id of a highlight: the detail endpoint takes
// it so and answers "highlight:<id>". Write stores every id through it.
func HighlightID(id string) string {
	return strings.TrimPrefix(id, "highlight:")
}

// PSHighlight is a highlight from the highlight detail endpoint.
type PSHighlight struct {
	HighlightID   string  `db:"highlight_id"` // bare or with the answer's "highlight:" prefix
	Title         *string `db:"title"`
	MediaCount    *int64  `db:"media_count"`
	OwnerUsername *string `db:"owner_username"` // user.username
	OwnerVerified *bool   `db:"owner_verified"` // user.is_verified
	Raw           []byte  `db:"raw"`
}

// PSHighlightItem is the media at a position of a highlight. The highlight
// must be in the batch or stored.
type PSHighlightItem struct {
	HighlightID string  `db:"highlight_id"` // bare or with the "highlight:" prefix
	Position    int     `db:"position"`     // 1-based index in items
	ItemID      *string `db:"item_id"`
	MediaType   *int64  `db:"media_type"` // 1 image, 2 video
	VideoURL    *string `db:"video_url"`  // video_versions[0].url; nil for an image
	Raw         []byte  `db:"raw"`
}

var _ = upsertRows("photosocial.highlights", 203, "UpsertPSHighlights", bareIDs(
	func(r *PSHighlight) *string { return &r.HighlightID },
	func(r PSHighlight) string { return r.HighlightID }))

var _ = upsertRows("photosocial.highlight_items", 218, "UpsertPSHighlightItems", bareIDs(
	func(r *PSHighlightItem) *string { return &r.HighlightID },
	func(r PSHighlightItem) string { return r.HighlightID + "\x00" + strconv.Itoa(r.Position) }))

// bareIDs prepares rows whose highlight id id points at: a copy with the id
// made bare (HighlightID), the form stored, deduplicated by key.
func bareIDs[T any](id func(*T) *string, key func(T) string) func([]T) []T {
	return func(rows []T) []T {
		out := slices.Clone(rows)
		for i := range out {
			p := id(&out[i])
			*p = HighlightID(*p)
		}
		return dedupe(out, key, nil)
	}
}
