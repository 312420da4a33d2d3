-- What the real service's content kinds (package kinds,
-- shortvideo_content.go and photosocial_content.go) read of stored data:
-- stop_at_seen over a creator's lists, and the tasks a fetch made, from
-- what it stored (Kind.Reexpand, FreshRule.Expand). Each reads one
-- owner's rows through an index. The Seen* counts are reuse.sql's SeenKeys.

-- name: SeenProfileVideos
-- How many of the videos @keys of creator @owner earlier runs stored as
-- its videos.
-- from: SeenKeys table=shortvideo.profile_videos owner=unique_id key=video_id

-- name: SeenProfilePosts
-- How many of the posts @keys (codes) of profile @owner earlier runs
-- stored as its posts.
-- from: SeenKeys table=photosocial.profile_posts owner=username key=code

-- name: SeenProfileReels
-- How many of the reels @keys (ids) of profile @owner earlier runs stored
-- as its reels.
-- from: SeenKeys table=photosocial.profile_reels owner=username key=reel_id

-- name: RunProfileVideos
-- The videos of creator @owner that a walk of run @run_id stored: each
-- one's id, the URL its answer carried ('' when none), its author and its
-- comment count as that run saw it (NULL when none: its comments task
-- then carries no counter).
SELECT l.video_id,
       coalesce(v.raw->>'url', split_part(split_part(v.raw->>'share_url', '#', 1), '?', 1), ''),
       coalesce(v.author_unique_id, ''),
       (SELECT s.comment_count FROM shortvideo.video_snapshots s WHERE s.video_id = l.video_id AND s.run_id = @run_id)
FROM shortvideo.profile_videos l JOIN shortvideo.videos v USING (video_id)
WHERE l.unique_id = @owner AND l.last_seen_run = @run_id
ORDER BY l.video_id;

-- name: RunVideoCommentsWithReplies
-- The comments on video @owner that run @run_id stored and that have
-- replies.
SELECT comment_id FROM shortvideo.comments
WHERE video_id = @owner AND last_seen_run = @run_id AND parent_comment_id IS NULL AND reply_count > 0
ORDER BY comment_id;

-- name: RunProfilePosts
-- The posts of profile @owner that a walk of run @run_id stored: each
-- one's code, the URL its answer carried ('' when none), whether it is a
-- video, whether a reel, and its comment count as that run saw it (NULL
-- when none).
SELECT p.code, coalesce(p.url, ''),
       coalesce(p.media_type = 2 OR p.product_type = 'clips' OR p.raw->>'is_video' = 'true', false),
       coalesce(p.product_type = 'clips', false),
       (SELECT s.comment_count FROM photosocial.post_snapshots s WHERE s.code = p.code AND s.run_id = @run_id)
FROM photosocial.profile_posts l JOIN photosocial.posts p USING (code)
WHERE l.username = @owner AND l.last_seen_run = @run_id
ORDER BY p.code;

-- name: RunProfileReels
-- The reels of profile @owner that a walk of run @run_id stored: each
-- one's code and the URL its answer carried ('' when none).
SELECT r.code, coalesce(r.raw->>'url', r.raw->'media'->>'url', '')
FROM photosocial.profile_reels l JOIN photosocial.reels r USING (reel_id)
WHERE l.username = @owner AND l.last_seen_run = @run_id AND r.code IS NOT NULL
ORDER BY r.code;

-- name: RunProfileHighlights
-- The highlights profile @owner listed in run @run_id, in its order.
SELECT highlight_id FROM photosocial.profile_highlights
WHERE username = @owner AND last_seen_run = @run_id
ORDER BY position;

-- name: RunPostCommentsWithReplies
-- The comments of post @owner (its code) that run @run_id stored and that
-- have replies beyond those their answer carried (has_more_replies, or
-- child_comment_count above the replies shown).
SELECT comment_id FROM photosocial.comments
WHERE post_code = @owner AND last_seen_run = @run_id AND parent_comment_id IS NULL AND comment_id IS NOT NULL
  AND CASE WHEN jsonb_typeof(raw->'has_more_replies') = 'boolean' THEN raw->>'has_more_replies' = 'true'
           ELSE coalesce(child_comment_count, 0) > coalesce(jsonb_array_length(CASE WHEN jsonb_typeof(raw->'replies') = 'array' THEN raw->'replies' END), 0) END
ORDER BY comment_id;

-- name: StoredPost
-- What a post fetch stored of post @code: whether it is a video, and a
-- reel (its comments and transcript are keyed /reel/<code>/).
SELECT coalesce(media_type = 2 OR product_type = 'clips' OR raw->>'is_video' = 'true', false),
       coalesce(product_type = 'clips', false)
FROM photosocial.posts WHERE code = @code;

-- name: StoredPSProfile
-- Whether the photo-sharing profile @unique_id, as its fetch stored it, is
-- private.
SELECT coalesce(is_private, false) FROM photosocial.profiles
WHERE username = @unique_id AND profile_fetched;

-- name: StoredVideoCommentsWithReplies
-- The comments on video @owner any run stored, not since marked deleted,
-- that have replies, with their reply count as last seen: the replies
-- lists a video's comments lead to when the list is not bought again
-- (kinds.ChangeRule.Expand).
SELECT comment_id, reply_count FROM shortvideo.comments
WHERE video_id = @owner AND parent_comment_id IS NULL AND reply_count > 0
  AND (deleted_run IS NULL OR deleted_run <= last_seen_run)
ORDER BY comment_id;

-- name: StoredPostCommentsWithReplies
-- RunPostCommentsWithReplies of any run, not since marked deleted, with
-- their child_comment_count as last seen.
SELECT comment_id, child_comment_count FROM photosocial.comments
WHERE post_code = @owner AND parent_comment_id IS NULL AND comment_id IS NOT NULL
  AND (deleted_run IS NULL OR deleted_run <= last_seen_run)
  AND CASE WHEN jsonb_typeof(raw->'has_more_replies') = 'boolean' THEN raw->>'has_more_replies' = 'true'
           ELSE coalesce(child_comment_count, 0) > coalesce(jsonb_array_length(CASE WHEN jsonb_typeof(raw->'replies') = 'array' THEN raw->'replies' END), 0) END
ORDER BY comment_id;

-- name: StoredSVCommentCounts
-- The comments (or replies) @keys of video @owner that runs before
-- @run_id stored and none marked deleted since, with their reply count as
-- last seen (0 for a reply): what a page of a comments or replies list
-- adds to its counter's rise (kinds.ChangeRule.Explain).
SELECT comment_id, coalesce(reply_count, 0) FROM shortvideo.comments
WHERE video_id = @owner AND comment_id = ANY(@keys::text[]) AND first_seen_run < @run_id
  AND (deleted_run IS NULL OR deleted_run <= last_seen_run);

-- name: StoredPSCommentCounts
-- StoredSVCommentCounts of post @owner (its code), by comment key, with
-- child_comment_count as last seen.
SELECT comment_key, coalesce(child_comment_count, 0) FROM photosocial.comments
WHERE post_code = @owner AND comment_key = ANY(@keys::text[]) AND first_seen_run < @run_id
  AND (deleted_run IS NULL OR deleted_run <= last_seen_run);
