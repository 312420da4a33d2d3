package sinks

import (
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
	HighlightID   string // bare or with the answer's "highlight:" prefix
	Title         *string
	MediaCount    *int64
	OwnerUsername *string // user.username
	OwnerVerified *bool   // user.is_verified
	Raw           []byte
}

// PSHighlightItem is the media at a position of a highlight. The highlight
// must be in the batch or stored.
type PSHighlightItem struct {
	HighlightID string // bare or with the "highlight:" prefix
	Position    int    // 1-based index in items
	ItemID      *string
	MediaType   *int64  // 1 image, 2 video
	VideoURL    *string // video_versions[0].url; nil for an image
	Raw         []byte
}

const upsertPSHighlights = `
INSERT INTO photosocial.highlights AS h (highlight_id, title, media_count, owner_username, owner_verified, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.title, r.media_count, r.owner_username, r.owner_verified, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::boolean[], $7::text[])
    AS r(highlight_id, title, media_count, owner_username, owner_verified, raw)
ON CONFLICT (highlight_id) DO UPDATE SET
    title          = COALESCE(EXCLUDED.title, h.title),
    media_count    = COALESCE(EXCLUDED.media_count, h.media_count),
    owner_username = COALESCE(EXCLUDED.owner_username, h.owner_username),
    owner_verified = COALESCE(EXCLUDED.owner_verified, h.owner_verified),
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(h.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(h.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (h.title, h.media_count, h.owner_username, h.owner_verified, h.raw, h.first_seen_run, h.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.title, h.title), COALESCE(EXCLUDED.media_count, h.media_count),
       COALESCE(EXCLUDED.owner_username, h.owner_username), COALESCE(EXCLUDED.owner_verified, h.owner_verified),
       EXCLUDED.raw, LEAST(h.first_seen_run, EXCLUDED.first_seen_run), GREATEST(h.last_seen_run, EXCLUDED.last_seen_run))`

func writePSHighlights(batch *pgx.Batch, runID int64, rows []PSHighlight) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSHighlight) string { return HighlightID(r.HighlightID) }, nil)
	n := len(rows)
	ids, titles, counts, owners, verified, raws := make([]string, n), make([]*string, n), make([]*int64, n), make([]*string, n), make([]*bool, n), make([]string, n)
	for i, r := range rows {
		ids[i], titles[i], counts[i] = HighlightID(r.HighlightID), r.Title, r.MediaCount
		owners[i], verified[i], raws[i] = r.OwnerUsername, r.OwnerVerified, string(r.Raw)
	}
	batch.Queue(upsertPSHighlights, runID, ids, titles, counts, owners, verified, raws)
}

// An item is whatever the highlight holds at that position now: its columns
// are replaced, not merged (an image that replaced a video has no video_url).
const upsertPSHighlightItems = `
INSERT INTO photosocial.highlight_items AS i (highlight_id, position, item_id, media_type, video_url, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.position, r.item_id, r.media_type, r.video_url, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::integer[], $4::text[], $5::integer[], $6::text[], $7::text[])
    AS r(highlight_id, position, item_id, media_type, video_url, raw)
ON CONFLICT (highlight_id, position) DO UPDATE SET
    item_id        = EXCLUDED.item_id,
    media_type     = EXCLUDED.media_type,
    video_url      = EXCLUDED.video_url,
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(i.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(i.last_seen_run, EXCLUDED.last_seen_run)
WHERE (i.item_id, i.media_type, i.video_url, i.raw, i.first_seen_run, i.last_seen_run)
  IS DISTINCT FROM
      (EXCLUDED.item_id, EXCLUDED.media_type, EXCLUDED.video_url, EXCLUDED.raw,
       LEAST(i.first_seen_run, EXCLUDED.first_seen_run), GREATEST(i.last_seen_run, EXCLUDED.last_seen_run))`

func writePSHighlightItems(batch *pgx.Batch, runID int64, rows []PSHighlightItem) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSHighlightItem) string {
		return HighlightID(r.HighlightID) + "\x00" + strconv.Itoa(r.Position)
	}, nil)
	n := len(rows)
	ids, positions, items, types, urls, raws := make([]string, n), make([]int, n), make([]*string, n), make([]*int64, n), make([]*string, n), make([]string, n)
	for i, r := range rows {
		ids[i], positions[i], items[i] = HighlightID(r.HighlightID), r.Position, r.ItemID
		types[i], urls[i], raws[i] = r.MediaType, r.VideoURL, string(r.Raw)
	}
	batch.Queue(upsertPSHighlightItems, runID, ids, positions, items, types, urls, raws)
}
