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
ON CONFLICT (comment_key) DO UPDATE SET
    comment_id          = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.comment_id, c.comment_id) ELSE COALESCE(c.comment_id, EXCLUDED.comment_id) END,
    post_url            = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN EXCLUDED.post_url ELSE c.post_url END,
    like_count          = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.like_count, c.like_count) ELSE COALESCE(c.like_count, EXCLUDED.like_count) END,
    child_comment_count = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.child_comment_count, c.child_comment_count) ELSE COALESCE(c.child_comment_count, EXCLUDED.child_comment_count) END,
    parent_comment_id   = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN COALESCE(EXCLUDED.parent_comment_id, c.parent_comment_id) ELSE COALESCE(c.parent_comment_id, EXCLUDED.parent_comment_id) END,
    raw                 = CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run THEN EXCLUDED.raw ELSE c.raw END,
    first_seen_run      = LEAST(c.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run       = GREATEST(c.last_seen_run, EXCLUDED.last_seen_run),
    updated_at          = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= c.last_seen_run
    THEN (c.comment_id, c.post_url, c.like_count, c.child_comment_count, c.parent_comment_id, c.raw, c.first_seen_run, c.last_seen_run)
         IS DISTINCT FROM
         (COALESCE(EXCLUDED.comment_id, c.comment_id), EXCLUDED.post_url, COALESCE(EXCLUDED.like_count, c.like_count),
          COALESCE(EXCLUDED.child_comment_count, c.child_comment_count), COALESCE(EXCLUDED.parent_comment_id, c.parent_comment_id), EXCLUDED.raw,
          LEAST(c.first_seen_run, EXCLUDED.first_seen_run), GREATEST(c.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (c.comment_id, c.like_count, c.child_comment_count, c.parent_comment_id, c.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(c.comment_id, EXCLUDED.comment_id), COALESCE(c.like_count, EXCLUDED.like_count),
          COALESCE(c.child_comment_count, EXCLUDED.child_comment_count),
          COALESCE(c.parent_comment_id, EXCLUDED.parent_comment_id),
          LEAST(c.first_seen_run, EXCLUDED.first_seen_run)) END;
