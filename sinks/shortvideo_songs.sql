-- Bulk upserts of shortvideo_songs.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVSongs
INSERT INTO shortvideo.songs AS s (song_id, title, author_name, duration_seconds, cover_large_url,
    cover_medium_url, cover_thumb_url, play_url, raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.song_id, r.title, r.author_name, r.duration_seconds, r.cover_large_url,
    r.cover_medium_url, r.cover_thumb_url, r.play_url, r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@song_id::text[], @title::text[], @author_name::text[], @duration_seconds::integer[], @cover_large_url::text[], @cover_medium_url::text[], @cover_thumb_url::text[], @play_url::text[],
    @raw_partial::boolean[], @raw::text[])
    AS r(song_id, title, author_name, duration_seconds, cover_large_url, cover_medium_url, cover_thumb_url,
         play_url, raw_partial, raw)
-- from: NewestRunWins as=s key=song_id set=title,author_name,duration_seconds,cover_large_url,cover_medium_url,cover_thumb_url,play_url fill=all raw_partial=yes

-- name: UpsertSVSongSnapshots
INSERT INTO shortvideo.song_snapshots AS s (song_id, run_id, usage_count)
SELECT r.song_id, @run_id, r.usage_count
FROM unnest(@song_id::text[], @usage_count::bigint[]) AS r(song_id, usage_count)
-- from: RunSnapshot as=s key=song_id,run_id set=usage_count fill=all

-- name: UpsertSVSongVideos
-- from: ListEntry table=shortvideo.song_videos owner=song_id entry=video_id
