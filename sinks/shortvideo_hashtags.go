package sinks

import (
	"github.com/jackc/pgx/v5"
)

// SVHashtag is a hashtag from a hashtag search, or from a top search (Partial:
// such an entry carries only name and viewCount).
type SVHashtag struct {
	Name    string `db:"name"`
	Partial bool   `db:"raw_partial"` // its raw never replaces the raw of a full object
	Raw     []byte `db:"raw"`
}

// SVHashtagSnapshot is a hashtag's counters as one run saw them. Nil fields
// keep what a fuller entry of the same run said.
type SVHashtagSnapshot struct {
	Name       string `db:"name"`
	ViewCount  *int64 `db:"view_count"`
	VideoCount *int64 `db:"video_count"`
	Growth     []byte `db:"growth"` // the growth signals object as sent; nil: not sent
}

var upsertSVHashtags = prepare[SVHashtag]("UpsertSVHashtags")

var _ = register("shortvideo.hashtags", 103, writeSVHashtags)

func writeSVHashtags(batch *pgx.Batch, runID int64, rows []SVHashtag) {
	rows = dedupe(rows, func(r SVHashtag) string { return r.Name }, func(prev, next SVHashtag) SVHashtag {
		if !prev.Partial && next.Partial {
			return prev
		}
		return next
	})
	queue(batch, upsertSVHashtags, runID, rows)
}

var upsertSVHashtagSnapshots = prepare[SVHashtagSnapshot]("UpsertSVHashtagSnapshots")

var _ = register("shortvideo.hashtag_snapshots", 114, writeSVHashtagSnapshots)

func writeSVHashtagSnapshots(batch *pgx.Batch, runID int64, rows []SVHashtagSnapshot) {
	rows = dedupe(rows, func(r SVHashtagSnapshot) string { return r.Name }, func(prev, next SVHashtagSnapshot) SVHashtagSnapshot {
		if optJSON(next.Growth) == nil {
			next.Growth = prev.Growth
		}
		next.ViewCount = coalesce(next.ViewCount, prev.ViewCount)
		next.VideoCount = coalesce(next.VideoCount, prev.VideoCount)
		return next
	})
	queue(batch, upsertSVHashtagSnapshots, runID, rows)
}
