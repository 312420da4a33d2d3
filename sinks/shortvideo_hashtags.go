package sinks

import "github.com/jackc/pgx/v5"

// SVHashtag is a hashtag from a hashtag search, or from a top search (Partial:
// such an entry carries only name and viewCount).
type SVHashtag struct {
	Name    string
	Partial bool // its raw never replaces the raw of a full object
	Raw     []byte
}

// SVHashtagSnapshot is a hashtag's counters as one run saw them. Nil fields
// keep what a fuller entry of the same run said.
type SVHashtagSnapshot struct {
	Name       string
	ViewCount  *int64
	VideoCount *int64
	Growth     []byte // the growth signals object as sent; nil: not sent
}

const upsertSVHashtags = `
INSERT INTO shortvideo.hashtags AS h (name, raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.name, r.raw_partial, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::boolean[], $4::text[]) AS r(name, raw_partial, raw)
ON CONFLICT (name) DO UPDATE SET
    raw_partial    = h.raw_partial AND EXCLUDED.raw_partial,
    raw            = CASE WHEN h.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE h.raw END,
    first_seen_run = LEAST(h.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(h.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (h.raw_partial, h.raw, h.first_seen_run, h.last_seen_run)
  IS DISTINCT FROM
      (h.raw_partial AND EXCLUDED.raw_partial,
       CASE WHEN h.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE h.raw END,
       LEAST(h.first_seen_run, EXCLUDED.first_seen_run), GREATEST(h.last_seen_run, EXCLUDED.last_seen_run))`

func writeSVHashtags(batch *pgx.Batch, runID int64, rows []SVHashtag) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVHashtag) string { return r.Name }, func(prev, next SVHashtag) SVHashtag {
		if !prev.Partial && next.Partial {
			return prev
		}
		return next
	})
	n := len(rows)
	names, partial, raws := make([]string, n), make([]bool, n), make([]string, n)
	for i, r := range rows {
		names[i], partial[i], raws[i] = r.Name, r.Partial, string(r.Raw)
	}
	batch.Queue(upsertSVHashtags, runID, names, partial, raws)
}

const upsertSVHashtagSnapshots = `
INSERT INTO shortvideo.hashtag_snapshots AS s (name, run_id, view_count, video_count, growth)
SELECT r.name, $1, r.view_count, r.video_count, r.growth::jsonb
FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[]) AS r(name, view_count, video_count, growth)
ON CONFLICT (name, run_id) DO UPDATE SET
    view_count  = COALESCE(EXCLUDED.view_count, s.view_count),
    video_count = COALESCE(EXCLUDED.video_count, s.video_count),
    growth      = COALESCE(EXCLUDED.growth, s.growth)
WHERE (s.view_count, s.video_count, s.growth)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.view_count, s.view_count), COALESCE(EXCLUDED.video_count, s.video_count),
       COALESCE(EXCLUDED.growth, s.growth))`

func writeSVHashtagSnapshots(batch *pgx.Batch, runID int64, rows []SVHashtagSnapshot) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVHashtagSnapshot) string { return r.Name }, func(prev, next SVHashtagSnapshot) SVHashtagSnapshot {
		if optJSON(next.Growth) == nil {
			next.Growth = prev.Growth
		}
		next.ViewCount = coalesce(next.ViewCount, prev.ViewCount)
		next.VideoCount = coalesce(next.VideoCount, prev.VideoCount)
		return next
	})
	n := len(rows)
	names, views, videos, growth := make([]string, n), make([]*int64, n), make([]*int64, n), make([]*string, n)
	for i, r := range rows {
		names[i], views[i], videos[i], growth[i] = r.Name, r.ViewCount, r.VideoCount, optJSON(r.Growth)
	}
	batch.Queue(upsertSVHashtagSnapshots, runID, names, views, videos, growth)
}
