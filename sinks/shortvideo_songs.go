package sinks

import "github.com/jackc/pgx/v5"

// SVSong is a song (sound): from the song endpoint, or a sound entry of a top
// search (Partial: only id and title). Nil fields never erase stored values.
type SVSong struct {
	SongID          string
	Title           *string
	AuthorName      *string
	DurationSeconds *int64
	CoverLargeURL   *string
	CoverMediumURL  *string
	CoverThumbURL   *string
	PlayURL         *string
	Partial         bool // its raw never replaces the raw of a full object
	Raw             []byte
}

// SVSongSnapshot is a song's usage count as one run saw it.
type SVSongSnapshot struct {
	SongID     string
	UsageCount *int64
}

// SVSongVideo links a song to a video of its videos list. The video must be
// in the batch (or stored); the song need not be: the list is fetched by song
// id, the song itself by another request.
type SVSongVideo struct {
	SongID  string
	VideoID string
}

const upsertSVSongs = `
INSERT INTO shortvideo.songs AS s (song_id, title, author_name, duration_seconds, cover_large_url,
    cover_medium_url, cover_thumb_url, play_url, raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.song_id, r.title, r.author_name, r.duration_seconds, r.cover_large_url,
    r.cover_medium_url, r.cover_thumb_url, r.play_url, r.raw_partial, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::text[], $9::text[],
    $10::boolean[], $11::text[])
    AS r(song_id, title, author_name, duration_seconds, cover_large_url, cover_medium_url, cover_thumb_url,
         play_url, raw_partial, raw)
ON CONFLICT (song_id) DO UPDATE SET
    title            = COALESCE(EXCLUDED.title, s.title),
    author_name      = COALESCE(EXCLUDED.author_name, s.author_name),
    duration_seconds = COALESCE(EXCLUDED.duration_seconds, s.duration_seconds),
    cover_large_url  = COALESCE(EXCLUDED.cover_large_url, s.cover_large_url),
    cover_medium_url = COALESCE(EXCLUDED.cover_medium_url, s.cover_medium_url),
    cover_thumb_url  = COALESCE(EXCLUDED.cover_thumb_url, s.cover_thumb_url),
    play_url         = COALESCE(EXCLUDED.play_url, s.play_url),
    raw_partial      = s.raw_partial AND EXCLUDED.raw_partial,
    raw              = CASE WHEN s.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE s.raw END,
    first_seen_run   = LEAST(s.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run    = GREATEST(s.last_seen_run, EXCLUDED.last_seen_run),
    updated_at       = now()
WHERE (s.title, s.author_name, s.duration_seconds, s.cover_large_url, s.cover_medium_url, s.cover_thumb_url,
       s.play_url, s.raw_partial, s.raw, s.first_seen_run, s.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.title, s.title), COALESCE(EXCLUDED.author_name, s.author_name),
       COALESCE(EXCLUDED.duration_seconds, s.duration_seconds), COALESCE(EXCLUDED.cover_large_url, s.cover_large_url),
       COALESCE(EXCLUDED.cover_medium_url, s.cover_medium_url), COALESCE(EXCLUDED.cover_thumb_url, s.cover_thumb_url),
       COALESCE(EXCLUDED.play_url, s.play_url), s.raw_partial AND EXCLUDED.raw_partial,
       CASE WHEN s.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE s.raw END,
       LEAST(s.first_seen_run, EXCLUDED.first_seen_run), GREATEST(s.last_seen_run, EXCLUDED.last_seen_run))`

func writeSVSongs(batch *pgx.Batch, runID int64, rows []SVSong) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVSong) string { return r.SongID }, func(prev, next SVSong) SVSong {
		if !prev.Partial && next.Partial {
			return prev
		}
		return next
	})
	n := len(rows)
	ids, titles, authors, durations := make([]string, n), make([]*string, n), make([]*string, n), make([]*int64, n)
	large, medium, thumb, play := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	partial, raws := make([]bool, n), make([]string, n)
	for i, r := range rows {
		ids[i], titles[i], authors[i], durations[i] = r.SongID, r.Title, r.AuthorName, r.DurationSeconds
		large[i], medium[i], thumb[i], play[i] = r.CoverLargeURL, r.CoverMediumURL, r.CoverThumbURL, r.PlayURL
		partial[i], raws[i] = r.Partial, string(r.Raw)
	}
	batch.Queue(upsertSVSongs, runID, ids, titles, authors, durations, large, medium, thumb, play, partial, raws)
}

const upsertSVSongSnapshots = `
INSERT INTO shortvideo.song_snapshots AS s (song_id, run_id, usage_count)
SELECT r.song_id, $1, r.usage_count
FROM unnest($2::text[], $3::bigint[]) AS r(song_id, usage_count)
ON CONFLICT (song_id, run_id) DO UPDATE SET
    usage_count = COALESCE(EXCLUDED.usage_count, s.usage_count)
WHERE s.usage_count IS DISTINCT FROM COALESCE(EXCLUDED.usage_count, s.usage_count)`

func writeSVSongSnapshots(batch *pgx.Batch, runID int64, rows []SVSongSnapshot) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVSongSnapshot) string { return r.SongID }, func(prev, next SVSongSnapshot) SVSongSnapshot {
		next.UsageCount = coalesce(next.UsageCount, prev.UsageCount)
		return next
	})
	n := len(rows)
	ids, usage := make([]string, n), make([]*int64, n)
	for i, r := range rows {
		ids[i], usage[i] = r.SongID, r.UsageCount
	}
	batch.Queue(upsertSVSongSnapshots, runID, ids, usage)
}

const upsertSVSongVideos = `
INSERT INTO shortvideo.song_videos AS l (song_id, video_id, first_seen_run, last_seen_run)
SELECT r.song_id, r.video_id, $1, $1
FROM unnest($2::text[], $3::text[]) AS r(song_id, video_id)
ON CONFLICT (song_id, video_id) DO UPDATE SET
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run)
WHERE (l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run))`

func writeSVSongVideos(batch *pgx.Batch, runID int64, rows []SVSongVideo) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVSongVideo) string { return r.SongID + "\x00" + r.VideoID }, nil)
	n := len(rows)
	songs, videos := make([]string, n), make([]string, n)
	for i, r := range rows {
		songs[i], videos[i] = r.SongID, r.VideoID
	}
	batch.Queue(upsertSVSongVideos, runID, songs, videos)
}
