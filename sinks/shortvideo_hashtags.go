package sinks

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

var _ = upsert("shortvideo.hashtags", 103, "UpsertSVHashtags", func(r SVHashtag) string { return r.Name }, preferFull(func(r SVHashtag) bool { return r.Partial }))

var _ = upsert("shortvideo.hashtag_snapshots", 114, "UpsertSVHashtagSnapshots", func(r SVHashtagSnapshot) string { return r.Name }, fillNil)
