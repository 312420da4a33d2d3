package sinks

import "github.com/jackc/pgx/v5"

// SVVideo is a short-video video from any list that carries videos: keyword
// search, song videos, trending and popular feeds, a profile's item list, a
// top-search result. Nil fields are unknown: they never erase a stored value.
type SVVideo struct {
	VideoID        string
	AuthorUniqueID *string // author.uniqueId
	Description    *string // desc
	CreateTime     *int64  // createTime, unix seconds
	SongID         *string // music id, or the song whose videos list carried it
	// Partial marks a trimmed entry (e.g. a list carrying only
	// stats.playCount): its raw never replaces the raw of a full object.
	Partial bool
	Raw     []byte
}

// SVVideoSnapshot is a video's counters as one run saw them. Nil counters
// (not in that list) keep what a fuller list of the same run said.
type SVVideoSnapshot struct {
	VideoID      string
	PlayCount    *int64
	DiggCount    *int64
	CommentCount *int64
	ShareCount   *int64
}

const upsertSVVideos = `
INSERT INTO shortvideo.videos AS v (video_id, author_unique_id, description, create_time, song_id,
    raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.video_id, r.author_unique_id, r.description, to_timestamp(NULLIF(r.create_time, 0)), r.song_id,
    r.raw_partial, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::boolean[], $8::text[])
    AS r(video_id, author_unique_id, description, create_time, song_id, raw_partial, raw)
ON CONFLICT (video_id) DO UPDATE SET
    author_unique_id = COALESCE(EXCLUDED.author_unique_id, v.author_unique_id),
    description      = COALESCE(EXCLUDED.description, v.description),
    create_time      = COALESCE(EXCLUDED.create_time, v.create_time),
    song_id          = COALESCE(EXCLUDED.song_id, v.song_id),
    raw_partial      = v.raw_partial AND EXCLUDED.raw_partial,
    raw              = CASE WHEN v.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE v.raw END,
    first_seen_run   = LEAST(v.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run    = GREATEST(v.last_seen_run, EXCLUDED.last_seen_run),
    updated_at       = now()
WHERE (v.author_unique_id, v.description, v.create_time, v.song_id, v.raw_partial, v.raw,
       v.first_seen_run, v.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.author_unique_id, v.author_unique_id), COALESCE(EXCLUDED.description, v.description),
       COALESCE(EXCLUDED.create_time, v.create_time), COALESCE(EXCLUDED.song_id, v.song_id),
       v.raw_partial AND EXCLUDED.raw_partial,
       CASE WHEN v.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE v.raw END,
       LEAST(v.first_seen_run, EXCLUDED.first_seen_run), GREATEST(v.last_seen_run, EXCLUDED.last_seen_run))`

func writeSVVideos(batch *pgx.Batch, runID int64, rows []SVVideo) {
	if len(rows) == 0 {
		return
	}
	// Within a batch, a full object beats a partial one; otherwise the last wins.
	rows = dedupe(rows, func(r SVVideo) string { return r.VideoID }, func(prev, next SVVideo) SVVideo {
		if !prev.Partial && next.Partial {
			return prev
		}
		return next
	})
	n := len(rows)
	ids, authors, descs, songs := make([]string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	created, partial, raws := make([]*int64, n), make([]bool, n), make([]string, n)
	for i, r := range rows {
		ids[i], authors[i], descs[i], songs[i] = r.VideoID, r.AuthorUniqueID, r.Description, r.SongID
		created[i], partial[i], raws[i] = r.CreateTime, r.Partial, string(r.Raw)
	}
	batch.Queue(upsertSVVideos, runID, ids, authors, descs, created, songs, partial, raws)
}

const upsertSVVideoSnapshots = `
INSERT INTO shortvideo.video_snapshots AS s (video_id, run_id, play_count, digg_count, comment_count, share_count)
SELECT r.video_id, $1, r.play_count, r.digg_count, r.comment_count, r.share_count
FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
    AS r(video_id, play_count, digg_count, comment_count, share_count)
ON CONFLICT (video_id, run_id) DO UPDATE SET
    play_count    = COALESCE(EXCLUDED.play_count, s.play_count),
    digg_count    = COALESCE(EXCLUDED.digg_count, s.digg_count),
    comment_count = COALESCE(EXCLUDED.comment_count, s.comment_count),
    share_count   = COALESCE(EXCLUDED.share_count, s.share_count)
WHERE (s.play_count, s.digg_count, s.comment_count, s.share_count)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.play_count, s.play_count), COALESCE(EXCLUDED.digg_count, s.digg_count),
       COALESCE(EXCLUDED.comment_count, s.comment_count), COALESCE(EXCLUDED.share_count, s.share_count))`

func writeSVVideoSnapshots(batch *pgx.Batch, runID int64, rows []SVVideoSnapshot) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVVideoSnapshot) string { return r.VideoID }, func(prev, next SVVideoSnapshot) SVVideoSnapshot {
		return SVVideoSnapshot{
			VideoID:      next.VideoID,
			PlayCount:    coalesce(next.PlayCount, prev.PlayCount),
			DiggCount:    coalesce(next.DiggCount, prev.DiggCount),
			CommentCount: coalesce(next.CommentCount, prev.CommentCount),
			ShareCount:   coalesce(next.ShareCount, prev.ShareCount),
		}
	})
	n := len(rows)
	ids := make([]string, n)
	plays, diggs, comments, shares := make([]*int64, n), make([]*int64, n), make([]*int64, n), make([]*int64, n)
	for i, r := range rows {
		ids[i] = r.VideoID
		plays[i], diggs[i], comments[i], shares[i] = r.PlayCount, r.DiggCount, r.CommentCount, r.ShareCount
	}
	batch.Queue(upsertSVVideoSnapshots, runID, ids, plays, diggs, comments, shares)
}
