package sinks

// SVVideo is a short-video video from any list that carries videos: keyword
// search, song videos, trending and popular feeds, a profile's item list, a
// top-search result. Nil fields are unknown: they never erase a stored value.
type SVVideo struct {
	VideoID        string  `db:"video_id"`
	AuthorUniqueID *string `db:"author_unique_id"` // author.uniqueId
	Description    *string `db:"description"`      // desc
	CreateTime     *int64  `db:"create_time"`      // createTime, unix seconds
	SongID         *string `db:"song_id"`          // music id, or the song whose videos list carried it
	// Partial marks a trimmed entry (e.g. a list carrying only
	// stats.playCount): its raw never replaces the raw of a full object.
	Partial bool   `db:"raw_partial"`
	Raw     []byte `db:"raw"`
}

// SVVideoSnapshot is a video's counters as one run saw them. Nil counters
// (not in that list) keep what a fuller list of the same run said.
type SVVideoSnapshot struct {
	VideoID      string `db:"video_id"`
	PlayCount    *int64 `db:"play_count"`
	DiggCount    *int64 `db:"digg_count"`
	CommentCount *int64 `db:"comment_count"`
	ShareCount   *int64 `db:"share_count"`
}

var _ = upsert("shortvideo.videos", 102, "UpsertSVVideos", func(r SVVideo) string { return r.VideoID }, preferFull(func(r SVVideo) bool { return r.Partial }))

var _ = upsert("shortvideo.video_snapshots", 113, "UpsertSVVideoSnapshots", func(r SVVideoSnapshot) string { return r.VideoID }, fillNil)
