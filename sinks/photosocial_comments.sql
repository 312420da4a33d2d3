-- Bulk upserts of photosocial_comments.go (schema photosocial). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSComments
INSERT INTO photosocial.comments AS c (comment_key, comment_id, post_code, post_url, username, text, created_at,
    like_count, child_comment_count, parent_comment_id, raw, first_seen_run, last_seen_run)
SELECT r.comment_key, r.comment_id, r.post_code, r.post_url, r.username, r.text,
    to_timestamp(NULLIF(r.created_at, 0)), r.like_count, r.child_comment_count, r.parent_comment_id, r.raw::jsonb, @run_id, @run_id
FROM unnest(@comment_key::text[], @comment_id::text[], @post_code::text[], @post_url::text[], @username::text[], @text::text[], @created_at::bigint[], @like_count::bigint[],
    @child_comment_count::bigint[], @parent_comment_id::text[], @raw::text[])
    AS r(comment_key, comment_id, post_code, post_url, username, text, created_at, like_count,
         child_comment_count, parent_comment_id, raw)
-- from: NewestRunWins as=c key=comment_key set=comment_id,post_url,like_count,child_comment_count,parent_comment_id,raw fill=comment_id,like_count,child_comment_count,parent_comment_id
