-- Analyst views over the real service's content (issue 27): a creator's
-- videos with their latest counters and what is stored under them, the
-- comment threads of videos, and posts with their latest counters.

-- +goose Up
CREATE VIEW shortvideo.creator_videos AS
SELECT l.unique_id, v.video_id, v.description, v.create_time, l.first_seen_run, l.last_seen_run,
       s.play_count, s.digg_count, s.comment_count, s.share_count, s.run_id AS snapshot_run_id,
       (SELECT count(*) FROM shortvideo.comments c WHERE c.video_id = v.video_id) AS comments_stored,
       t.has_speech
FROM shortvideo.profile_videos l
JOIN shortvideo.videos v USING (video_id)
LEFT JOIN LATERAL (
    SELECT * FROM shortvideo.video_snapshots s
    WHERE s.video_id = v.video_id ORDER BY s.run_id DESC LIMIT 1) s ON true
LEFT JOIN shortvideo.transcripts t ON t.video_id = v.video_id;
COMMENT ON VIEW shortvideo.creator_videos IS 'Each creator''s videos (its videos list) with the counters of their latest snapshot, how many comments and replies are stored under each, and whether its transcript has speech.';
COMMENT ON COLUMN shortvideo.creator_videos.unique_id IS 'The creator''s handle (shortvideo.profile_videos).';
COMMENT ON COLUMN shortvideo.creator_videos.video_id IS 'The video (shortvideo.videos).';
COMMENT ON COLUMN shortvideo.creator_videos.description IS 'Video description text (desc).';
COMMENT ON COLUMN shortvideo.creator_videos.create_time IS 'When the video was posted (create_time).';
COMMENT ON COLUMN shortvideo.creator_videos.first_seen_run IS 'First run whose walk of the creator''s list saw the video.';
COMMENT ON COLUMN shortvideo.creator_videos.last_seen_run IS 'Latest run whose walk of the creator''s list saw the video.';
COMMENT ON COLUMN shortvideo.creator_videos.play_count IS 'Views in the latest snapshot (statistics.play_count).';
COMMENT ON COLUMN shortvideo.creator_videos.digg_count IS 'Likes in the latest snapshot (statistics.digg_count).';
COMMENT ON COLUMN shortvideo.creator_videos.comment_count IS 'Comments the platform counted in the latest snapshot (statistics.comment_count).';
COMMENT ON COLUMN shortvideo.creator_videos.share_count IS 'Shares in the latest snapshot (statistics.share_count).';
COMMENT ON COLUMN shortvideo.creator_videos.snapshot_run_id IS 'The run of the latest snapshot (shortvideo.video_snapshots); NULL when there is none.';
COMMENT ON COLUMN shortvideo.creator_videos.comments_stored IS 'Comments and replies stored for the video (shortvideo.comments).';
COMMENT ON COLUMN shortvideo.creator_videos.has_speech IS 'Whether its latest transcript had speech (shortvideo.transcripts); NULL when never asked.';

CREATE VIEW shortvideo.comment_threads AS
SELECT c.video_id, c.comment_id, c.author_unique_id, c.text, c.create_time, c.digg_count, c.reply_count,
       (SELECT count(*) FROM shortvideo.comments r WHERE r.parent_comment_id = c.comment_id) AS replies_stored
FROM shortvideo.comments c
WHERE c.parent_comment_id IS NULL;
COMMENT ON VIEW shortvideo.comment_threads IS 'Each comment on a video with how many replies it says it has and how many are stored (its replies are the shortvideo.comments whose parent_comment_id is its comment_id).';
COMMENT ON COLUMN shortvideo.comment_threads.video_id IS 'The video commented (shortvideo.comments.video_id).';
COMMENT ON COLUMN shortvideo.comment_threads.comment_id IS 'The comment (cid).';
COMMENT ON COLUMN shortvideo.comment_threads.author_unique_id IS 'The commenter''s handle (user.unique_id).';
COMMENT ON COLUMN shortvideo.comment_threads.text IS 'Comment text.';
COMMENT ON COLUMN shortvideo.comment_threads.create_time IS 'When the comment was posted (create_time).';
COMMENT ON COLUMN shortvideo.comment_threads.digg_count IS 'Likes, as last seen (digg_count).';
COMMENT ON COLUMN shortvideo.comment_threads.reply_count IS 'Replies the comment says it has, as last seen (reply_comment_total).';
COMMENT ON COLUMN shortvideo.comment_threads.replies_stored IS 'Replies stored for it: below reply_count when its replies were not walked (expand.comment_replies off, or the page limit).';

CREATE VIEW photosocial.posts_latest AS
SELECT p.code, p.post_id, p.url, p.owner_username, p.media_type, p.product_type, p.caption, p.taken_at,
       p.first_seen_run, p.last_seen_run,
       s.like_count, s.comment_count, s.play_count, s.run_id AS snapshot_run_id, s.captured_at
FROM photosocial.posts p
LEFT JOIN LATERAL (
    SELECT * FROM photosocial.post_snapshots s
    WHERE s.code = p.code ORDER BY s.run_id DESC LIMIT 1) s ON true;
COMMENT ON VIEW photosocial.posts_latest IS 'Every post with the counters of its latest snapshot.';
COMMENT ON COLUMN photosocial.posts_latest.code IS 'The post''s shortcode (photosocial.posts).';
COMMENT ON COLUMN photosocial.posts_latest.post_id IS 'The platform''s media id (pk).';
COMMENT ON COLUMN photosocial.posts_latest.url IS 'The post''s web address as its answer gave it.';
COMMENT ON COLUMN photosocial.posts_latest.owner_username IS 'Owner''s handle; join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.posts_latest.media_type IS 'Media type (1 image, 2 video, 8 carousel).';
COMMENT ON COLUMN photosocial.posts_latest.product_type IS 'Product type (clips for a reel).';
COMMENT ON COLUMN photosocial.posts_latest.caption IS 'Caption text.';
COMMENT ON COLUMN photosocial.posts_latest.taken_at IS 'When the post was published.';
COMMENT ON COLUMN photosocial.posts_latest.first_seen_run IS 'First run that saw the post.';
COMMENT ON COLUMN photosocial.posts_latest.last_seen_run IS 'Latest run that saw the post.';
COMMENT ON COLUMN photosocial.posts_latest.like_count IS 'Likes in the latest snapshot.';
COMMENT ON COLUMN photosocial.posts_latest.comment_count IS 'Comments in the latest snapshot.';
COMMENT ON COLUMN photosocial.posts_latest.play_count IS 'Plays in the latest snapshot (videos).';
COMMENT ON COLUMN photosocial.posts_latest.snapshot_run_id IS 'The run of the latest snapshot (photosocial.post_snapshots); NULL when there is none.';
COMMENT ON COLUMN photosocial.posts_latest.captured_at IS 'When the latest snapshot was written; NULL when there is none.';

-- +goose Down
DROP VIEW photosocial.posts_latest;
DROP VIEW shortvideo.comment_threads;
DROP VIEW shortvideo.creator_videos;
