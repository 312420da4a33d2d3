-- A profile's posts, reels and highlights on the photo-sharing platform
-- (issue 27): the real service's user posts, user reels, post detail and
-- user highlights. Reels land in photosocial.reels (with reel_snapshots)
-- whichever list found them; comments, their replies and transcripts in the
-- tables of 00004.

-- +goose Up
CREATE TABLE photosocial.posts (
    code           text        PRIMARY KEY,
    post_id        text,
    url            text,
    owner_username text,
    media_type     integer,
    product_type   text,
    caption        text,
    taken_at       timestamptz,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX posts_owner_idx ON photosocial.posts (owner_username) WHERE owner_username IS NOT NULL;
CREATE INDEX posts_post_id_idx ON photosocial.posts (post_id) WHERE post_id IS NOT NULL;
CREATE INDEX posts_last_seen_run_idx ON photosocial.posts (last_seen_run);
COMMENT ON TABLE photosocial.posts IS 'One row per post (photo, video, carousel or reel) seen in a profile''s posts or fetched by URL. Counters are in post_snapshots.';
COMMENT ON COLUMN photosocial.posts.code IS 'The post''s shortcode (code, shortcode), as in its URL /p/<code>/; matches comments.post_code and transcripts.shortcode.';
COMMENT ON COLUMN photosocial.posts.post_id IS 'The platform''s media id (pk; the part of id before its owner).';
COMMENT ON COLUMN photosocial.posts.url IS 'The post''s web address as the answer gave it (url), when it did.';
COMMENT ON COLUMN photosocial.posts.owner_username IS 'Owner''s handle (owner.username, user.username); join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.posts.media_type IS 'Media type as sent (media_type: 1 image, 2 video, 8 carousel), when sent.';
COMMENT ON COLUMN photosocial.posts.product_type IS 'Product type as sent (product_type: clips for a reel, feed, carousel_container), when sent.';
COMMENT ON COLUMN photosocial.posts.caption IS 'Caption text (caption.text, edge_media_to_caption), when sent.';
COMMENT ON COLUMN photosocial.posts.taken_at IS 'When the post was published (taken_at, taken_at_timestamp), when sent.';
COMMENT ON COLUMN photosocial.posts.raw IS 'The post object as last received.';
COMMENT ON COLUMN photosocial.posts.first_seen_run IS 'First run that saw the post.';
COMMENT ON COLUMN photosocial.posts.last_seen_run IS 'Latest run that saw the post.';
COMMENT ON COLUMN photosocial.posts.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.post_snapshots (
    code          text        NOT NULL REFERENCES photosocial.posts (code),
    run_id        bigint      NOT NULL REFERENCES crawl.runs (id),
    like_count    bigint,
    comment_count bigint,
    play_count    bigint,
    captured_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (code, run_id)
);
CREATE INDEX post_snapshots_run_idx ON photosocial.post_snapshots (run_id);
COMMENT ON TABLE photosocial.post_snapshots IS 'A post''s counters as one run saw them: one row per post per run. A counter the answer did not carry is NULL.';
COMMENT ON COLUMN photosocial.post_snapshots.code IS 'The post (photosocial.posts).';
COMMENT ON COLUMN photosocial.post_snapshots.run_id IS 'The run that saw these values.';
COMMENT ON COLUMN photosocial.post_snapshots.like_count IS 'Likes (like_count, edge_media_preview_like.count).';
COMMENT ON COLUMN photosocial.post_snapshots.comment_count IS 'Comments (comment_count, edge_media_to_parent_comment.count).';
COMMENT ON COLUMN photosocial.post_snapshots.play_count IS 'Plays of a video (play_count, ig_play_count, video_play_count): the platform''s own, not counting cross-posted views.';
COMMENT ON COLUMN photosocial.post_snapshots.captured_at IS 'When the snapshot row was first written.';

CREATE TABLE photosocial.profile_posts (
    username       text   NOT NULL,
    code           text   NOT NULL REFERENCES photosocial.posts (code),
    first_seen_run bigint NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint NOT NULL REFERENCES crawl.runs (id),
    PRIMARY KEY (username, code)
);
CREATE INDEX profile_posts_code_idx ON photosocial.profile_posts (code);
CREATE INDEX profile_posts_last_seen_run_idx ON photosocial.profile_posts (last_seen_run);
COMMENT ON TABLE photosocial.profile_posts IS 'Link: the profile''s posts list (newest first) named the post. No foreign key on username: the list is fetched by handle, the profile by another request.';
COMMENT ON COLUMN photosocial.profile_posts.username IS 'The profile''s handle, as the list was asked for; join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.profile_posts.code IS 'The post (photosocial.posts).';
COMMENT ON COLUMN photosocial.profile_posts.first_seen_run IS 'First run whose walk of the list saw the post.';
COMMENT ON COLUMN photosocial.profile_posts.last_seen_run IS 'Latest run whose walk of the list saw the post.';

CREATE TABLE photosocial.profile_reels (
    username       text   NOT NULL,
    reel_id        text   NOT NULL REFERENCES photosocial.reels (reel_id),
    first_seen_run bigint NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint NOT NULL REFERENCES crawl.runs (id),
    PRIMARY KEY (username, reel_id)
);
CREATE INDEX profile_reels_reel_idx ON photosocial.profile_reels (reel_id);
CREATE INDEX profile_reels_last_seen_run_idx ON photosocial.profile_reels (last_seen_run);
COMMENT ON TABLE photosocial.profile_reels IS 'Link: the profile''s reels list (newest first) named the reel. No foreign key on username, as profile_posts.';
COMMENT ON COLUMN photosocial.profile_reels.username IS 'The profile''s handle, as the list was asked for; join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.profile_reels.reel_id IS 'The reel (photosocial.reels).';
COMMENT ON COLUMN photosocial.profile_reels.first_seen_run IS 'First run whose walk of the list saw the reel.';
COMMENT ON COLUMN photosocial.profile_reels.last_seen_run IS 'Latest run whose walk of the list saw the reel.';

CREATE TABLE photosocial.profile_highlights (
    username       text        NOT NULL,
    highlight_id   text        NOT NULL CHECK (highlight_id ~ '^[0-9]+$'),
    position       integer     NOT NULL CHECK (position >= 1),
    title          text,
    cover_url      text,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (username, highlight_id)
);
CREATE INDEX profile_highlights_highlight_idx ON photosocial.profile_highlights (highlight_id);
CREATE INDEX profile_highlights_last_seen_run_idx ON photosocial.profile_highlights (last_seen_run);
COMMENT ON TABLE photosocial.profile_highlights IS 'The highlights (story collections) a profile lists, as the latest run saw them. Each highlight''s detail and media are photosocial.highlights and highlight_items; no foreign key: the detail is another request.';
COMMENT ON COLUMN photosocial.profile_highlights.username IS 'The profile''s handle, as the list was asked for.';
COMMENT ON COLUMN photosocial.profile_highlights.highlight_id IS 'The highlight''s bare numeric id (as the detail endpoint takes it).';
COMMENT ON COLUMN photosocial.profile_highlights.position IS 'Position in the profile''s list, 1-based, as last seen.';
COMMENT ON COLUMN photosocial.profile_highlights.title IS 'Highlight title, as last seen.';
COMMENT ON COLUMN photosocial.profile_highlights.cover_url IS 'Cover thumbnail URL (cover_media.thumbnail_src), as last seen.';
COMMENT ON COLUMN photosocial.profile_highlights.raw IS 'The list entry as last received.';
COMMENT ON COLUMN photosocial.profile_highlights.first_seen_run IS 'First run whose list showed the highlight.';
COMMENT ON COLUMN photosocial.profile_highlights.last_seen_run IS 'Latest run whose list showed the highlight.';
COMMENT ON COLUMN photosocial.profile_highlights.updated_at IS 'When the row last changed.';

-- +goose Down
DROP TABLE photosocial.profile_highlights;
DROP TABLE photosocial.profile_reels;
DROP TABLE photosocial.profile_posts;
DROP TABLE photosocial.post_snapshots;
DROP TABLE photosocial.posts;
