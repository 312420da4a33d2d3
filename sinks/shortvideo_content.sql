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
-- from: NewestRunWins as=c key=comment_id set=parent_comment_id,author_unique_id,text,create_time,digg_count,reply_count,raw fill=author_unique_id,create_time,digg_count,reply_count once=parent_comment_id

-- name: UpsertSVTranscripts
INSERT INTO shortvideo.transcripts AS t (video_id, video_url, transcript, has_speech, raw, first_seen_run, last_seen_run)
SELECT r.video_id, r.video_url, r.transcript, r.has_speech, r.raw::jsonb, @run_id, @run_id
FROM unnest(@video_id::text[], @video_url::text[], @transcript::text[], @has_speech::boolean[], @raw::text[])
    AS r(video_id, video_url, transcript, has_speech, raw)
-- from: NewestRunWins as=t key=video_id set=video_url,transcript,has_speech,raw
