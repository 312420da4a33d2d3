-- Bulk upserts of shortvideo_videos.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVVideos
INSERT INTO shortvideo.videos AS v (video_id, author_unique_id, description, create_time, song_id,
    raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.video_id, r.author_unique_id, r.description, to_timestamp(NULLIF(r.create_time, 0)), r.song_id,
    r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@video_id::text[], @author_unique_id::text[], @description::text[], @create_time::bigint[], @song_id::text[], @raw_partial::boolean[], @raw::text[])
    AS r(video_id, author_unique_id, description, create_time, song_id, raw_partial, raw)
ON CONFLICT (video_id) DO UPDATE SET
    author_unique_id = CASE WHEN EXCLUDED.last_seen_run >= v.last_seen_run THEN COALESCE(EXCLUDED.author_unique_id, v.author_unique_id) ELSE COALESCE(v.author_unique_id, EXCLUDED.author_unique_id) END,
    description      = CASE WHEN EXCLUDED.last_seen_run >= v.last_seen_run THEN COALESCE(EXCLUDED.description, v.description) ELSE COALESCE(v.description, EXCLUDED.description) END,
    create_time      = CASE WHEN EXCLUDED.last_seen_run >= v.last_seen_run THEN COALESCE(EXCLUDED.create_time, v.create_time) ELSE COALESCE(v.create_time, EXCLUDED.create_time) END,
    song_id          = CASE WHEN EXCLUDED.last_seen_run >= v.last_seen_run THEN COALESCE(EXCLUDED.song_id, v.song_id) ELSE COALESCE(v.song_id, EXCLUDED.song_id) END,
    raw_partial      = CASE WHEN EXCLUDED.last_seen_run >= v.last_seen_run THEN v.raw_partial AND EXCLUDED.raw_partial ELSE v.raw_partial END,
    raw              = CASE WHEN EXCLUDED.last_seen_run >= v.last_seen_run THEN CASE WHEN v.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE v.raw END ELSE v.raw END,
    first_seen_run   = LEAST(v.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run    = GREATEST(v.last_seen_run, EXCLUDED.last_seen_run),
    updated_at       = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= v.last_seen_run
    THEN (v.author_unique_id, v.description, v.create_time, v.song_id, v.raw_partial, v.raw,
          v.first_seen_run, v.last_seen_run)
         IS DISTINCT FROM
         (COALESCE(EXCLUDED.author_unique_id, v.author_unique_id), COALESCE(EXCLUDED.description, v.description),
          COALESCE(EXCLUDED.create_time, v.create_time), COALESCE(EXCLUDED.song_id, v.song_id),
          v.raw_partial AND EXCLUDED.raw_partial,
          CASE WHEN v.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE v.raw END,
          LEAST(v.first_seen_run, EXCLUDED.first_seen_run), GREATEST(v.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (v.author_unique_id, v.description, v.create_time, v.song_id, v.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(v.author_unique_id, EXCLUDED.author_unique_id),
          COALESCE(v.description, EXCLUDED.description), COALESCE(v.create_time, EXCLUDED.create_time),
          COALESCE(v.song_id, EXCLUDED.song_id), LEAST(v.first_seen_run, EXCLUDED.first_seen_run)) END;

-- name: UpsertSVVideoSnapshots
INSERT INTO shortvideo.video_snapshots AS s (video_id, run_id, play_count, digg_count, comment_count, share_count)
SELECT r.video_id, @run_id, r.play_count, r.digg_count, r.comment_count, r.share_count
FROM unnest(@video_id::text[], @play_count::bigint[], @digg_count::bigint[], @comment_count::bigint[], @share_count::bigint[])
    AS r(video_id, play_count, digg_count, comment_count, share_count)
ON CONFLICT (video_id, run_id) DO UPDATE SET
    play_count    = COALESCE(EXCLUDED.play_count, s.play_count),
    digg_count    = COALESCE(EXCLUDED.digg_count, s.digg_count),
    comment_count = COALESCE(EXCLUDED.comment_count, s.comment_count),
    share_count   = COALESCE(EXCLUDED.share_count, s.share_count)
WHERE (s.play_count, s.digg_count, s.comment_count, s.share_count)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.play_count, s.play_count), COALESCE(EXCLUDED.digg_count, s.digg_count),
       COALESCE(EXCLUDED.comment_count, s.comment_count), COALESCE(EXCLUDED.share_count, s.share_count));
