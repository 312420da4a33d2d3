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
ON CONFLICT (song_id) DO UPDATE SET
    title            = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN COALESCE(EXCLUDED.title, s.title) ELSE COALESCE(s.title, EXCLUDED.title) END,
    author_name      = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN COALESCE(EXCLUDED.author_name, s.author_name) ELSE COALESCE(s.author_name, EXCLUDED.author_name) END,
    duration_seconds = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN COALESCE(EXCLUDED.duration_seconds, s.duration_seconds) ELSE COALESCE(s.duration_seconds, EXCLUDED.duration_seconds) END,
    cover_large_url  = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN COALESCE(EXCLUDED.cover_large_url, s.cover_large_url) ELSE COALESCE(s.cover_large_url, EXCLUDED.cover_large_url) END,
    cover_medium_url = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN COALESCE(EXCLUDED.cover_medium_url, s.cover_medium_url) ELSE COALESCE(s.cover_medium_url, EXCLUDED.cover_medium_url) END,
    cover_thumb_url  = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN COALESCE(EXCLUDED.cover_thumb_url, s.cover_thumb_url) ELSE COALESCE(s.cover_thumb_url, EXCLUDED.cover_thumb_url) END,
    play_url         = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN COALESCE(EXCLUDED.play_url, s.play_url) ELSE COALESCE(s.play_url, EXCLUDED.play_url) END,
    raw_partial      = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN s.raw_partial AND EXCLUDED.raw_partial ELSE s.raw_partial END,
    raw              = CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run THEN CASE WHEN s.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE s.raw END ELSE s.raw END,
    first_seen_run   = LEAST(s.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run    = GREATEST(s.last_seen_run, EXCLUDED.last_seen_run),
    updated_at       = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= s.last_seen_run
    THEN (s.title, s.author_name, s.duration_seconds, s.cover_large_url, s.cover_medium_url, s.cover_thumb_url,
          s.play_url, s.raw_partial, s.raw, s.first_seen_run, s.last_seen_run)
         IS DISTINCT FROM
         (COALESCE(EXCLUDED.title, s.title), COALESCE(EXCLUDED.author_name, s.author_name),
          COALESCE(EXCLUDED.duration_seconds, s.duration_seconds), COALESCE(EXCLUDED.cover_large_url, s.cover_large_url),
          COALESCE(EXCLUDED.cover_medium_url, s.cover_medium_url), COALESCE(EXCLUDED.cover_thumb_url, s.cover_thumb_url),
          COALESCE(EXCLUDED.play_url, s.play_url), s.raw_partial AND EXCLUDED.raw_partial,
          CASE WHEN s.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE s.raw END,
          LEAST(s.first_seen_run, EXCLUDED.first_seen_run), GREATEST(s.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (s.title, s.author_name, s.duration_seconds, s.cover_large_url, s.cover_medium_url, s.cover_thumb_url,
          s.play_url, s.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(s.title, EXCLUDED.title), COALESCE(s.author_name, EXCLUDED.author_name),
          COALESCE(s.duration_seconds, EXCLUDED.duration_seconds),
          COALESCE(s.cover_large_url, EXCLUDED.cover_large_url),
          COALESCE(s.cover_medium_url, EXCLUDED.cover_medium_url),
          COALESCE(s.cover_thumb_url, EXCLUDED.cover_thumb_url), COALESCE(s.play_url, EXCLUDED.play_url),
          LEAST(s.first_seen_run, EXCLUDED.first_seen_run)) END;

-- name: UpsertSVSongSnapshots
INSERT INTO shortvideo.song_snapshots AS s (song_id, run_id, usage_count)
SELECT r.song_id, @run_id, r.usage_count
FROM unnest(@song_id::text[], @usage_count::bigint[]) AS r(song_id, usage_count)
ON CONFLICT (song_id, run_id) DO UPDATE SET
    usage_count = COALESCE(EXCLUDED.usage_count, s.usage_count)
WHERE s.usage_count IS DISTINCT FROM COALESCE(EXCLUDED.usage_count, s.usage_count);

-- name: UpsertSVSongVideos
INSERT INTO shortvideo.song_videos AS l (song_id, video_id, first_seen_run, last_seen_run)
SELECT r.song_id, r.video_id, @run_id, @run_id
FROM unnest(@song_id::text[], @video_id::text[]) AS r(song_id, video_id)
ON CONFLICT (song_id, video_id) DO UPDATE SET
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run)
WHERE (l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run));
