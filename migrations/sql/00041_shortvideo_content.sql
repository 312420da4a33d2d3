-- A creator's videos and what is said under them, on the short-video
-- platform (issue 27): the real service's profile videos, video comments,
-- comment replies and transcripts. The videos themselves and their counters
-- are shortvideo.videos and video_snapshots, as from any list.
--
-- References: a comment names its video and the comment it replies to by
-- plain indexed columns without foreign key (the video may be known only by
-- the URL its comments were asked with; the parent may be on a page not
-- walked), as photosocial.comments does.

-- +goose Up
CREATE TABLE shortvideo.profile_videos (
    unique_id      text   NOT NULL,
    video_id       text   NOT NULL REFERENCES shortvideo.videos (video_id),
    first_seen_run bigint NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint NOT NULL REFERENCES crawl.runs (id),
    PRIMARY KEY (unique_id, video_id)
);
CREATE INDEX profile_videos_video_idx ON shortvideo.profile_videos (video_id);
CREATE INDEX profile_videos_last_seen_run_idx ON shortvideo.profile_videos (last_seen_run);
COMMENT ON TABLE shortvideo.profile_videos IS 'Link: the creator''s videos list (newest first) named the video. No foreign key on unique_id: the list is fetched by handle, the profile by another request. A video the creator deleted keeps its row; its last_seen_run stops moving (only a walk that reaches it tells).';
COMMENT ON COLUMN shortvideo.profile_videos.unique_id IS 'The creator''s handle, as the list was asked for; join shortvideo.users.unique_id.';
COMMENT ON COLUMN shortvideo.profile_videos.video_id IS 'The video (shortvideo.videos).';
COMMENT ON COLUMN shortvideo.profile_videos.first_seen_run IS 'First run whose walk of the list saw the video.';
COMMENT ON COLUMN shortvideo.profile_videos.last_seen_run IS 'Latest run whose walk of the list saw the video.';

CREATE TABLE shortvideo.comments (
    comment_id        text        PRIMARY KEY,
    video_id          text        NOT NULL,
    parent_comment_id text,
    author_unique_id  text,
    text              text        NOT NULL,
    create_time       timestamptz,
    digg_count        bigint,
    reply_count       bigint,
    raw               jsonb       NOT NULL,
    first_seen_run    bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run     bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX comments_video_idx ON shortvideo.comments (video_id, create_time);
CREATE INDEX comments_parent_idx ON shortvideo.comments (parent_comment_id) WHERE parent_comment_id IS NOT NULL;
CREATE INDEX comments_author_idx ON shortvideo.comments (author_unique_id) WHERE author_unique_id IS NOT NULL;
CREATE INDEX comments_last_seen_run_idx ON shortvideo.comments (last_seen_run);
COMMENT ON TABLE shortvideo.comments IS 'One row per comment on a video, and per reply to one (parent_comment_id set). Counters are as last seen.';
COMMENT ON COLUMN shortvideo.comments.comment_id IS 'The platform''s comment id (cid).';
COMMENT ON COLUMN shortvideo.comments.video_id IS 'The video commented (aweme_id, else the id in the URL the comments were asked with); join shortvideo.videos.video_id. No foreign key.';
COMMENT ON COLUMN shortvideo.comments.parent_comment_id IS 'For a reply, the comment it answers (reply_id); NULL for a comment on the video.';
COMMENT ON COLUMN shortvideo.comments.author_unique_id IS 'The commenter''s handle (user.unique_id); join shortvideo.users.unique_id. NULL when not sent.';
COMMENT ON COLUMN shortvideo.comments.text IS 'Comment text.';
COMMENT ON COLUMN shortvideo.comments.create_time IS 'When the comment was posted (create_time).';
COMMENT ON COLUMN shortvideo.comments.digg_count IS 'Likes, as last seen (digg_count).';
COMMENT ON COLUMN shortvideo.comments.reply_count IS 'Replies the comment has, as last seen (reply_comment_total); NULL on a reply.';
COMMENT ON COLUMN shortvideo.comments.raw IS 'The comment object as last received.';
COMMENT ON COLUMN shortvideo.comments.first_seen_run IS 'First run that saw the comment.';
COMMENT ON COLUMN shortvideo.comments.last_seen_run IS 'Latest run that saw the comment.';
COMMENT ON COLUMN shortvideo.comments.updated_at IS 'When the row last changed.';

CREATE TABLE shortvideo.transcripts (
    video_id       text        PRIMARY KEY,
    video_url      text        NOT NULL,
    transcript     text,
    has_speech     boolean     NOT NULL,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX transcripts_last_seen_run_idx ON shortvideo.transcripts (last_seen_run);
COMMENT ON TABLE shortvideo.transcripts IS 'A video''s transcript, one row per video asked for, including answers without one (no speech, or a video the service does not transcribe), so an empty answer is known to be checked.';
COMMENT ON COLUMN shortvideo.transcripts.video_id IS 'The video (id of the answer, else the id in its URL); join shortvideo.videos.video_id.';
COMMENT ON COLUMN shortvideo.transcripts.video_url IS 'The video URL as last sent to the API.';
COMMENT ON COLUMN shortvideo.transcripts.transcript IS 'The transcript as WEBVTT text (timestamped segments); NULL when the answer had none.';
COMMENT ON COLUMN shortvideo.transcripts.has_speech IS 'Whether the latest answer had a transcript with text.';
COMMENT ON COLUMN shortvideo.transcripts.raw IS 'The answer as last received.';
COMMENT ON COLUMN shortvideo.transcripts.first_seen_run IS 'First run that asked.';
COMMENT ON COLUMN shortvideo.transcripts.last_seen_run IS 'Latest run that asked.';
COMMENT ON COLUMN shortvideo.transcripts.updated_at IS 'When the row last changed.';

-- +goose Down
DROP TABLE shortvideo.transcripts;
DROP TABLE shortvideo.comments;
DROP TABLE shortvideo.profile_videos;
