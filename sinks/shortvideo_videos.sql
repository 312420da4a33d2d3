-- Bulk upserts of shortvideo_videos.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVVideos
INSERT INTO shortvideo.videos AS v (video_id, author_unique_id, description, create_time, song_id,
    raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.video_id, r.author_unique_id, r.description, to_timestamp(NULLIF(r.create_time, 0)), r.song_id,
    r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@video_id::text[], @author_unique_id::text[], @description::text[], @create_time::bigint[], @song_id::text[], @raw_partial::boolean[], @raw::text[])
    AS r(video_id, author_unique_id, description, create_time, song_id, raw_partial, raw)
-- from: NewestRunWins as=v key=video_id set=author_unique_id,description,create_time,song_id fill=all raw_partial=yes

-- name: UpsertSVVideoSnapshots
INSERT INTO shortvideo.video_snapshots AS s (video_id, run_id, play_count, digg_count, comment_count, share_count)
SELECT r.video_id, @run_id, r.play_count, r.digg_count, r.comment_count, r.share_count
FROM unnest(@video_id::text[], @play_count::bigint[], @digg_count::bigint[], @comment_count::bigint[], @share_count::bigint[])
    AS r(video_id, play_count, digg_count, comment_count, share_count)
-- from: RunSnapshot as=s key=video_id,run_id set=play_count,digg_count,comment_count,share_count fill=all
