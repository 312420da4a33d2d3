-- Bulk upserts of shortvideo_content.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVProfileVideos
-- from: ListEntry table=shortvideo.profile_videos owner=unique_id entry=video_id

-- name: UpsertSVComments
INSERT INTO shortvideo.comments AS c (comment_id, video_id, parent_comment_id, author_unique_id, text, create_time,
    digg_count, reply_count, raw, first_seen_run, last_seen_run)
SELECT r.comment_id, r.video_id, r.parent_comment_id, r.author_unique_id, r.text, to_timestamp(NULLIF(r.create_time, 0)),
    r.digg_count, r.reply_count, r.raw::jsonb, @run_id, @run_id
FROM unnest(@comment_id::text[], @video_id::text[], @parent_comment_id::text[], @author_unique_id::text[], @text::text[],
    @create_time::bigint[], @digg_count::bigint[], @reply_count::bigint[], @raw::text[])
    AS r(comment_id, video_id, parent_comment_id, author_unique_id, text, create_time, digg_count, reply_count, raw)
ON CONFLICT (comment_id) DO UPDATE SET
    parent_comment_id = COALESCE(c.parent_comment_id, EXCLUDED.parent_comment_id),
    author_unique_id  = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.author_unique_id, c.author_unique_id) ELSE COALESCE(c.author_unique_id, EXCLUDED.author_unique_id) END,
    text              = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN EXCLUDED.text ELSE c.text END,
    create_time       = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.create_time, c.create_time) ELSE COALESCE(c.create_time, EXCLUDED.create_time) END,
    digg_count        = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.digg_count, c.digg_count) ELSE COALESCE(c.digg_count, EXCLUDED.digg_count) END,
    reply_count       = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.reply_count, c.reply_count) ELSE COALESCE(c.reply_count, EXCLUDED.reply_count) END,
    raw               = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN EXCLUDED.raw ELSE c.raw END,
    first_seen_run    = LEAST(c.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run     = GREATEST(c.last_seen_run, EXCLUDED.last_seen_run),
    updated_at        = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run
    THEN (c.parent_comment_id, c.author_unique_id, c.text, c.create_time, c.digg_count, c.reply_count, c.raw,
           c.first_seen_run, c.last_seen_run)
      IS DISTINCT FROM
          (COALESCE(c.parent_comment_id, EXCLUDED.parent_comment_id), COALESCE(EXCLUDED.author_unique_id, c.author_unique_id),
           EXCLUDED.text, COALESCE(EXCLUDED.create_time, c.create_time), COALESCE(EXCLUDED.digg_count, c.digg_count),
           COALESCE(EXCLUDED.reply_count, c.reply_count), EXCLUDED.raw,
           LEAST(c.first_seen_run, EXCLUDED.first_seen_run), GREATEST(c.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (c.parent_comment_id, c.author_unique_id, c.create_time, c.digg_count, c.reply_count, c.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(c.parent_comment_id, EXCLUDED.parent_comment_id), COALESCE(c.author_unique_id, EXCLUDED.author_unique_id), COALESCE(c.create_time, EXCLUDED.create_time), COALESCE(c.digg_count, EXCLUDED.digg_count), COALESCE(c.reply_count, EXCLUDED.reply_count),
          LEAST(c.first_seen_run, EXCLUDED.first_seen_run)) END;

-- name: UpsertSVTranscripts
INSERT INTO shortvideo.transcripts AS t (video_id, video_url, transcript, has_speech, raw, first_seen_run, last_seen_run)
SELECT r.video_id, r.video_url, r.transcript, r.has_speech, r.raw::jsonb, @run_id, @run_id
FROM unnest(@video_id::text[], @video_url::text[], @transcript::text[], @has_speech::boolean[], @raw::text[])
    AS r(video_id, video_url, transcript, has_speech, raw)
-- from: NewestRunWins as=t key=video_id set=video_url,transcript,has_speech,raw
