package sinks

// SVHashtag is a hashtag from a hashtag search, or from a top search or a
// video's cha_list (Partial: such an entry carries no more than its name and
// a count).
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

// SVVideoHashtag links a video to a hashtag it carries (cha_list). Both
// must be in the batch or stored.
type SVVideoHashtag struct {
	VideoID string `db:"video_id"`
	Name    string `db:"name"`
}

var _ = upsert("shortvideo.video_hashtags", 121, "UpsertSVVideoHashtags", func(r SVVideoHashtag) string { return r.VideoID + "\x00" + r.Name }, nil)
