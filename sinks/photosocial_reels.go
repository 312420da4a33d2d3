package sinks

import (
	"strconv"

	"github.com/jackc/pgx/v5"
)

// PSReel is a reel from a reels search. Nil fields never erase stored values.
type PSReel struct {
	ReelID        string
	Code          string // shortcode; "" is stored as NULL; fixed once stored
	OwnerUsername *string
	Caption       *string
	TakenAt       *int64 // unix seconds
	Raw           []byte
}

// PSReelSnapshot is a reel's counters as one run saw them.
type PSReelSnapshot struct {
	ReelID    string
	PlayCount *int64
	LikeCount *int64
}

// PSReelSearchResult is a reel at its rank in a reels search: 1-based across
// pages, as returned ((page-1)*page size + index + 1). The reel must be in
// the batch or stored.
type PSReelSearchResult struct {
	QueryKey string // QueryKey(query, nil)
	Rank     int
	ReelID   string
}

// The code is set once (a stored NULL takes the first code sent). It is not
// unique (migration 00008): a reel without a code, or one code under two
// ids, must not fail the page.
const upsertPSReels = `
INSERT INTO photosocial.reels AS l (reel_id, code, owner_username, caption, taken_at, raw, first_seen_run, last_seen_run)
SELECT r.reel_id, NULLIF(r.code, ''), r.owner_username, r.caption, to_timestamp(NULLIF(r.taken_at, 0)), r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])
    AS r(reel_id, code, owner_username, caption, taken_at, raw)
ON CONFLICT (reel_id) DO UPDATE SET
    code           = COALESCE(l.code, EXCLUDED.code),
    owner_username = COALESCE(EXCLUDED.owner_username, l.owner_username),
    caption        = COALESCE(EXCLUDED.caption, l.caption),
    taken_at       = COALESCE(EXCLUDED.taken_at, l.taken_at),
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (l.code, l.owner_username, l.caption, l.taken_at, l.raw, l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(l.code, EXCLUDED.code), COALESCE(EXCLUDED.owner_username, l.owner_username), COALESCE(EXCLUDED.caption, l.caption),
       COALESCE(EXCLUDED.taken_at, l.taken_at), EXCLUDED.raw,
       LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run))`

func writePSReels(batch *pgx.Batch, runID int64, rows []PSReel) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSReel) string { return r.ReelID }, nil)
	n := len(rows)
	ids, codes, owners, captions, taken, raws := make([]string, n), make([]string, n), make([]*string, n), make([]*string, n), make([]*int64, n), make([]string, n)
	for i, r := range rows {
		ids[i], codes[i], owners[i], captions[i], taken[i], raws[i] = r.ReelID, r.Code, r.OwnerUsername, r.Caption, r.TakenAt, string(r.Raw)
	}
	batch.Queue(upsertPSReels, runID, ids, codes, owners, captions, taken, raws)
}

const upsertPSReelSnapshots = `
INSERT INTO photosocial.reel_snapshots AS s (reel_id, run_id, play_count, like_count)
SELECT r.reel_id, $1, r.play_count, r.like_count
FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS r(reel_id, play_count, like_count)
ON CONFLICT (reel_id, run_id) DO UPDATE SET
    play_count = COALESCE(EXCLUDED.play_count, s.play_count),
    like_count = COALESCE(EXCLUDED.like_count, s.like_count)
WHERE (s.play_count, s.like_count)
  IS DISTINCT FROM (COALESCE(EXCLUDED.play_count, s.play_count), COALESCE(EXCLUDED.like_count, s.like_count))`

func writePSReelSnapshots(batch *pgx.Batch, runID int64, rows []PSReelSnapshot) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSReelSnapshot) string { return r.ReelID }, func(prev, next PSReelSnapshot) PSReelSnapshot {
		next.PlayCount = coalesce(next.PlayCount, prev.PlayCount)
		next.LikeCount = coalesce(next.LikeCount, prev.LikeCount)
		return next
	})
	n := len(rows)
	ids, plays, likes := make([]string, n), make([]*int64, n), make([]*int64, n)
	for i, r := range rows {
		ids[i], plays[i], likes[i] = r.ReelID, r.PlayCount, r.LikeCount
	}
	batch.Queue(upsertPSReelSnapshots, runID, ids, plays, likes)
}

const upsertPSReelSearchResults = `
INSERT INTO photosocial.reel_search_results AS s (run_id, query_key, rank, reel_id)
SELECT $1, r.query_key, r.rank, r.reel_id
FROM unnest($2::text[], $3::integer[], $4::text[]) AS r(query_key, rank, reel_id)
ON CONFLICT (run_id, query_key, rank) DO UPDATE SET
    reel_id = EXCLUDED.reel_id
WHERE s.reel_id IS DISTINCT FROM EXCLUDED.reel_id`

func writePSReelSearchResults(batch *pgx.Batch, runID int64, rows []PSReelSearchResult) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSReelSearchResult) string { return r.QueryKey + "\x00" + strconv.Itoa(r.Rank) }, nil)
	n := len(rows)
	queries, ranks, reels := make([]string, n), make([]int, n), make([]string, n)
	for i, r := range rows {
		queries[i], ranks[i], reels[i] = r.QueryKey, r.Rank, r.ReelID
	}
	batch.Queue(upsertPSReelSearchResults, runID, queries, ranks, reels)
}
