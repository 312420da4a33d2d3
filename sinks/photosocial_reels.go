package sinks

import (
	"strconv"
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

var _ = upsert("photosocial.reels", 202, "UpsertPSReels", func(r PSReel) string { return r.ReelID }, nil)

var _ = upsert("photosocial.reel_snapshots", 213, "UpsertPSReelSnapshots", func(r PSReelSnapshot) string { return r.ReelID }, fillNil)

var _ = upsert("photosocial.reel_search_results", 214, "UpsertPSReelSearchResults", func(r PSReelSearchResult) string { return r.QueryKey + "\x00" + strconv.Itoa(r.Rank) }, nil)
