package sinks

// SVSong is a song (sound): from the song endpoint, or a sound entry of a top
// search (Partial: only id and title). Nil fields never erase stored values.
type SVSong struct {
	SongID          string  `db:"song_id"`
	Title           *string `db:"title"`
	AuthorName      *string `db:"author_name"`
	DurationSeconds *int64  `db:"duration_seconds"`
	CoverLargeURL   *string `db:"cover_large_url"`
	CoverMediumURL  *string `db:"cover_medium_url"`
	CoverThumbURL   *string `db:"cover_thumb_url"`
	PlayURL         *string `db:"play_url"`
	Partial         bool    `db:"raw_partial"` // its raw never replaces the raw of a full object
	Raw             []byte  `db:"raw"`
}

// SVSongSnapshot is a song's usage count as one run saw it.
type SVSongSnapshot struct {
	SongID     string `db:"song_id"`
	UsageCount *int64 `db:"usage_count"`
}

// SVSongVideo links a song to a video of its videos list. The video must be
// in the batch (or stored); the song need not be: the list is fetched by song
// id, the song itself by another request.
type SVSongVideo struct {
	SongID  string `db:"song_id"`
	VideoID string `db:"video_id"`
}

var _ = upsert("shortvideo.songs", 104, "UpsertSVSongs", func(r SVSong) string { return r.SongID }, preferFull(func(r SVSong) bool { return r.Partial }))

var _ = upsert("shortvideo.song_snapshots", 115, "UpsertSVSongSnapshots", func(r SVSongSnapshot) string { return r.SongID }, fillNil)

var _ = upsert("shortvideo.song_videos", 116, "UpsertSVSongVideos", func(r SVSongVideo) string { return r.SongID + "\x00" + r.VideoID }, nil)
