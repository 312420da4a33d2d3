package sinks

import (
	"strconv"

	"github.com/jackc/pgx/v5"
)

// PSReel is a reel from a reels search. Nil fields never erase stored values.
type PSReel struct {
	ReelID        string  `db:"reel_id"`
	Code          string  `db:"code"` // shortcode; "" is stored as NULL; fixed once stored
	OwnerUsername *string `db:"owner_username"`
	Caption       *string `db:"caption"`
	TakenAt       *int64  `db:"taken_at"` // unix seconds
	Raw           []byte  `db:"raw"`
}

// PSReelSnapshot is a reel's counters as one run saw them.
type PSReelSnapshot struct {
	ReelID    string `db:"reel_id"`
	PlayCount *int64 `db:"play_count"`
	LikeCount *int64 `db:"like_count"`
}

// PSReelSearchResult is a reel at its rank in a reels search: 1-based across
// pages, as returned ((page-1)*page size + index + 1). The reel must be in
// the batch or stored.
type PSReelSearchResult struct {
	QueryKey string `db:"query_key"` // QueryKey(query, nil)
	Rank     int    `db:"rank"`
	ReelID   string `db:"reel_id"`
}

var upsertPSReels = prepare[PSReel]("UpsertPSReels")

var _ = register("photosocial.reels", 202, writePSReels)

func writePSReels(batch *pgx.Batch, runID int64, rows []PSReel) {
	rows = dedupe(rows, func(r PSReel) string { return r.ReelID }, nil)
	queue(batch, upsertPSReels, runID, rows)
}

var upsertPSReelSnapshots = prepare[PSReelSnapshot]("UpsertPSReelSnapshots")

var _ = register("photosocial.reel_snapshots", 213, writePSReelSnapshots)

func writePSReelSnapshots(batch *pgx.Batch, runID int64, rows []PSReelSnapshot) {
	rows = dedupe(rows, func(r PSReelSnapshot) string { return r.ReelID }, func(prev, next PSReelSnapshot) PSReelSnapshot {
		next.PlayCount = coalesce(next.PlayCount, prev.PlayCount)
		next.LikeCount = coalesce(next.LikeCount, prev.LikeCount)
		return next
	})
	queue(batch, upsertPSReelSnapshots, runID, rows)
}

var upsertPSReelSearchResults = prepare[PSReelSearchResult]("UpsertPSReelSearchResults")

var _ = register("photosocial.reel_search_results", 214, writePSReelSearchResults)

func writePSReelSearchResults(batch *pgx.Batch, runID int64, rows []PSReelSearchResult) {
	rows = dedupe(rows, func(r PSReelSearchResult) string { return r.QueryKey + "\x00" + strconv.Itoa(r.Rank) }, nil)
	queue(batch, upsertPSReelSearchResults, runID, rows)
}
