package sinks

import (
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
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

var upsertPSHighlights = prepare[PSHighlight]("UpsertPSHighlights")

var _ = register("photosocial.highlights", 203, writePSHighlights)

func writePSHighlights(batch *pgx.Batch, runID int64, rows []PSHighlight) {
	rows = bareIDs(rows, func(r *PSHighlight) *string { return &r.HighlightID })
	rows = dedupe(rows, func(r PSHighlight) string { return r.HighlightID }, nil)
	queue(batch, upsertPSHighlights, runID, rows)
}

var upsertPSHighlightItems = prepare[PSHighlightItem]("UpsertPSHighlightItems")

var _ = register("photosocial.highlight_items", 218, writePSHighlightItems)

func writePSHighlightItems(batch *pgx.Batch, runID int64, rows []PSHighlightItem) {
	rows = bareIDs(rows, func(r *PSHighlightItem) *string { return &r.HighlightID })
	rows = dedupe(rows, func(r PSHighlightItem) string {
		return r.HighlightID + "\x00" + strconv.Itoa(r.Position)
	}, nil)
	queue(batch, upsertPSHighlightItems, runID, rows)
}

// bareIDs returns a copy of rows with the highlight id that id points at
// made bare (HighlightID), the form stored.
func bareIDs[T any](rows []T, id func(*T) *string) []T {
	out := slices.Clone(rows)
	for i := range out {
		p := id(&out[i])
		*p = HighlightID(*p)
	}
	return out
}
