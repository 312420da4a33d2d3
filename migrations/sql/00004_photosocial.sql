-- Photo-sharing platform: profiles, comments, reels, transcripts, embeds and
-- highlights.
--
-- Same conventions as the short-video schema (00002, 00003): entity rows keep
-- raw and first_seen_run/last_seen_run, counters go to per-run snapshot tables
-- keyed (entity, run_id), unix-second timestamps become timestamptz (0 is
-- NULL), and a column naming a row of the same API answer has a foreign key
-- while one naming an entity fetched by another request (a comment's or a
-- reel's author, a highlight's owner, an embed's account) is a plain indexed
-- column: join profiles.username with LEFT JOIN.

-- +goose Up
CREATE SCHEMA photosocial;

CREATE TABLE photosocial.profiles (
    username            text        PRIMARY KEY,
    user_id             text,
    full_name           text,
    biography           text,
    profile_pic_url     text,
    is_verified         boolean,
    is_private          boolean,
    is_business_account boolean,
    category_name       text,
    contact_email       text,
    contact_phone       text,
    contact_address     text,
    profile_fetched     boolean     NOT NULL DEFAULT false,
    raw                 jsonb       NOT NULL,
    first_seen_run      bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run       bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX profiles_user_id_idx ON photosocial.profiles (user_id) WHERE user_id IS NOT NULL;
COMMENT ON TABLE photosocial.profiles IS 'One row per account: from the (deep) profile endpoint, or a user object seen elsewhere (comment author, reel owner...) until the profile is fetched. Counters are in profile_snapshots.';
COMMENT ON COLUMN photosocial.profiles.username IS 'The handle (data.user.username).';
COMMENT ON COLUMN photosocial.profiles.user_id IS 'The platform''s user id (data.user.id).';
COMMENT ON COLUMN photosocial.profiles.full_name IS 'Display name (full_name).';
COMMENT ON COLUMN photosocial.profiles.biography IS 'Bio text (biography).';
COMMENT ON COLUMN photosocial.profiles.profile_pic_url IS 'Profile picture URL (profile_pic_url), when sent.';
COMMENT ON COLUMN photosocial.profiles.is_verified IS 'Verified badge (is_verified).';
COMMENT ON COLUMN photosocial.profiles.is_private IS 'Private account (is_private).';
COMMENT ON COLUMN photosocial.profiles.is_business_account IS 'Business account (is_business_account).';
COMMENT ON COLUMN photosocial.profiles.category_name IS 'Business category (category_name); NULL when the account does not expose it. Set as the latest profile says: an account that stops exposing it goes back to NULL.';
COMMENT ON COLUMN photosocial.profiles.contact_email IS 'Public contact e-mail (public_email, else business_email); NULL when not exposed, as the latest profile says.';
COMMENT ON COLUMN photosocial.profiles.contact_phone IS 'Public contact phone (public_phone_number, else business_phone_number); NULL when not exposed, as the latest profile says.';
COMMENT ON COLUMN photosocial.profiles.contact_address IS 'Public business address as sent (text or JSON text); NULL when not exposed, as the latest profile says.';
COMMENT ON COLUMN photosocial.profiles.profile_fetched IS 'True once the profile endpoint answered for the account: raw is then the profile body, never replaced by a user object seen elsewhere.';
COMMENT ON COLUMN photosocial.profiles.raw IS 'The profile body, or the user object it was seen in until a profile is fetched.';
COMMENT ON COLUMN photosocial.profiles.first_seen_run IS 'First run that saw the account.';
COMMENT ON COLUMN photosocial.profiles.last_seen_run IS 'Latest run that saw the account.';
COMMENT ON COLUMN photosocial.profiles.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.profile_snapshots (
    username        text        NOT NULL REFERENCES photosocial.profiles (username),
    run_id          bigint      NOT NULL REFERENCES crawl.runs (id),
    follower_count  bigint,
    following_count bigint,
    post_count      bigint,
    captured_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (username, run_id)
);
CREATE INDEX profile_snapshots_run_idx ON photosocial.profile_snapshots (run_id);
COMMENT ON TABLE photosocial.profile_snapshots IS 'An account''s counters as one run''s profile fetch saw them.';
COMMENT ON COLUMN photosocial.profile_snapshots.username IS 'The account (photosocial.profiles).';
COMMENT ON COLUMN photosocial.profile_snapshots.run_id IS 'The run that fetched the profile.';
COMMENT ON COLUMN photosocial.profile_snapshots.follower_count IS 'Followers (edge_followed_by.count).';
COMMENT ON COLUMN photosocial.profile_snapshots.following_count IS 'Accounts followed (edge_follow.count).';
COMMENT ON COLUMN photosocial.profile_snapshots.post_count IS 'Posts (edge_owner_to_timeline_media.count).';
COMMENT ON COLUMN photosocial.profile_snapshots.captured_at IS 'When the snapshot row was first written.';

CREATE TABLE photosocial.comments (
    comment_key         text        PRIMARY KEY CHECK (comment_key ~ '^[0-9a-f]{64}$'),
    comment_id          text,
    post_code           text        NOT NULL,
    post_url            text        NOT NULL,
    username            text        NOT NULL,
    text                text        NOT NULL,
    created_at          timestamptz,
    like_count          bigint,
    child_comment_count bigint,
    raw                 jsonb       NOT NULL,
    first_seen_run      bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run       bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX comments_post_idx ON photosocial.comments (post_code, created_at);
CREATE INDEX comments_username_idx ON photosocial.comments (username);
COMMENT ON TABLE photosocial.comments IS 'One row per comment of a post. The contract gives comments no id, so comment_key is derived from what identifies one: post, author, time and text.';
COMMENT ON COLUMN photosocial.comments.comment_key IS 'Hex SHA-256 of (post_code, username, created_at, text), each length-prefixed: sinks.CommentKey. An edited text is a new key.';
COMMENT ON COLUMN photosocial.comments.comment_id IS 'The platform''s comment id, when the answer carries one (not in the contract).';
COMMENT ON COLUMN photosocial.comments.post_code IS 'Shortcode of the post, from its URL (the segment after /p/, /reel/ or /reels/): the same post whatever URL form was sent.';
COMMENT ON COLUMN photosocial.comments.post_url IS 'The post URL as last sent to the API.';
COMMENT ON COLUMN photosocial.comments.username IS 'Author''s handle (user.username); join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.comments.text IS 'Comment text.';
COMMENT ON COLUMN photosocial.comments.created_at IS 'When the comment was posted (created_at).';
COMMENT ON COLUMN photosocial.comments.like_count IS 'Likes, as last seen (like_count).';
COMMENT ON COLUMN photosocial.comments.child_comment_count IS 'Replies, as last seen (child_comment_count); NULL when the API sent null.';
COMMENT ON COLUMN photosocial.comments.raw IS 'The comment object as last received.';
COMMENT ON COLUMN photosocial.comments.first_seen_run IS 'First run that saw the comment.';
COMMENT ON COLUMN photosocial.comments.last_seen_run IS 'Latest run that saw the comment.';
COMMENT ON COLUMN photosocial.comments.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.reels (
    reel_id        text        PRIMARY KEY,
    code           text        NOT NULL UNIQUE,
    owner_username text,
    caption        text,
    taken_at       timestamptz,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reels_owner_idx ON photosocial.reels (owner_username) WHERE owner_username IS NOT NULL;
COMMENT ON TABLE photosocial.reels IS 'One row per reel seen in a reels search. Counters are in reel_snapshots.';
COMMENT ON COLUMN photosocial.reels.reel_id IS 'The platform''s reel id (id).';
COMMENT ON COLUMN photosocial.reels.code IS 'The reel''s shortcode (code), as in its URL /reel/<code>/; matches comments.post_code and transcripts.shortcode.';
COMMENT ON COLUMN photosocial.reels.owner_username IS 'Owner''s handle (owner.username); join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.reels.caption IS 'Caption text, when sent.';
COMMENT ON COLUMN photosocial.reels.taken_at IS 'When the reel was posted (taken_at), when sent.';
COMMENT ON COLUMN photosocial.reels.raw IS 'The reel object as last received.';
COMMENT ON COLUMN photosocial.reels.first_seen_run IS 'First run that saw the reel.';
COMMENT ON COLUMN photosocial.reels.last_seen_run IS 'Latest run that saw the reel.';
COMMENT ON COLUMN photosocial.reels.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.reel_snapshots (
    reel_id     text        NOT NULL REFERENCES photosocial.reels (reel_id),
    run_id      bigint      NOT NULL REFERENCES crawl.runs (id),
    play_count  bigint,
    like_count  bigint,
    captured_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (reel_id, run_id)
);
CREATE INDEX reel_snapshots_run_idx ON photosocial.reel_snapshots (run_id);
COMMENT ON TABLE photosocial.reel_snapshots IS 'A reel''s counters as one run saw them.';
COMMENT ON COLUMN photosocial.reel_snapshots.reel_id IS 'The reel (photosocial.reels).';
COMMENT ON COLUMN photosocial.reel_snapshots.run_id IS 'The run that saw these values.';
COMMENT ON COLUMN photosocial.reel_snapshots.play_count IS 'Plays (play_count).';
COMMENT ON COLUMN photosocial.reel_snapshots.like_count IS 'Likes (like_count).';
COMMENT ON COLUMN photosocial.reel_snapshots.captured_at IS 'When the snapshot row was first written.';

CREATE TABLE photosocial.reel_search_results (
    run_id    bigint  NOT NULL REFERENCES crawl.runs (id),
    query_key text    NOT NULL,
    rank      integer NOT NULL CHECK (rank >= 1),
    reel_id   text    NOT NULL REFERENCES photosocial.reels (reel_id),
    PRIMARY KEY (run_id, query_key, rank)
);
CREATE INDEX reel_search_results_query_idx ON photosocial.reel_search_results (query_key, run_id);
CREATE INDEX reel_search_results_reel_idx ON photosocial.reel_search_results (reel_id);
COMMENT ON TABLE photosocial.reel_search_results IS 'What a reels search returned, in the platform''s order: one row per result per query per run.';
COMMENT ON COLUMN photosocial.reel_search_results.run_id IS 'The run that searched.';
COMMENT ON COLUMN photosocial.reel_search_results.query_key IS 'Canonical search string (sinks.QueryKey): query lower-cased, white space collapsed.';
COMMENT ON COLUMN photosocial.reel_search_results.rank IS 'Position in the results as returned, 1-based across pages.';
COMMENT ON COLUMN photosocial.reel_search_results.reel_id IS 'The reel (photosocial.reels).';

CREATE TABLE photosocial.transcripts (
    shortcode      text        NOT NULL,
    entry_id       text        NOT NULL,
    text           text,
    media_url      text        NOT NULL,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (shortcode, entry_id)
);
COMMENT ON TABLE photosocial.transcripts IS 'Transcript entries of a post or reel. Media without speech has no entry here: see transcript_checks.';
COMMENT ON COLUMN photosocial.transcripts.shortcode IS 'Shortcode of the media (shortcode).';
COMMENT ON COLUMN photosocial.transcripts.entry_id IS 'The entry''s id (id).';
COMMENT ON COLUMN photosocial.transcripts.text IS 'Transcribed text; NULL when the API sent null (no speech).';
COMMENT ON COLUMN photosocial.transcripts.media_url IS 'The media URL as last sent to the API.';
COMMENT ON COLUMN photosocial.transcripts.raw IS 'The transcript entry as last received.';
COMMENT ON COLUMN photosocial.transcripts.first_seen_run IS 'First run that saw the entry.';
COMMENT ON COLUMN photosocial.transcripts.last_seen_run IS 'Latest run that saw the entry.';
COMMENT ON COLUMN photosocial.transcripts.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.transcript_checks (
    shortcode         text        PRIMARY KEY,
    media_url         text        NOT NULL,
    has_speech        boolean     NOT NULL,
    entry_count       integer     NOT NULL CHECK (entry_count >= 0),
    first_checked_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_checked_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE photosocial.transcript_checks IS 'One row per media whose transcript was asked for, including answers with no transcript (media without speech), so an empty answer is known to be checked.';
COMMENT ON COLUMN photosocial.transcript_checks.shortcode IS 'Shortcode of the media, from its URL.';
COMMENT ON COLUMN photosocial.transcript_checks.media_url IS 'The media URL as last sent to the API.';
COMMENT ON COLUMN photosocial.transcript_checks.has_speech IS 'Whether the latest answer had a transcript with text.';
COMMENT ON COLUMN photosocial.transcript_checks.entry_count IS 'Transcript entries in the latest answer (0: no speech).';
COMMENT ON COLUMN photosocial.transcript_checks.first_checked_run IS 'First run that asked.';
COMMENT ON COLUMN photosocial.transcript_checks.last_checked_run IS 'Latest run that asked.';
COMMENT ON COLUMN photosocial.transcript_checks.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.embeds (
    username       text        PRIMARY KEY,
    html           text,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE photosocial.embeds IS 'Embeddable markup of a profile, one row per account asked for. No foreign key: join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.embeds.username IS 'The handle asked for.';
COMMENT ON COLUMN photosocial.embeds.html IS 'The embed markup (html).';
COMMENT ON COLUMN photosocial.embeds.raw IS 'The answer as last received.';
COMMENT ON COLUMN photosocial.embeds.first_seen_run IS 'First run that fetched it.';
COMMENT ON COLUMN photosocial.embeds.last_seen_run IS 'Latest run that fetched it.';
COMMENT ON COLUMN photosocial.embeds.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.highlights (
    highlight_id   text        PRIMARY KEY CHECK (highlight_id ~ '^[0-9]+$'),
    title          text,
    media_count    bigint,
    owner_username text,
    owner_verified boolean,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX highlights_owner_idx ON photosocial.highlights (owner_username) WHERE owner_username IS NOT NULL;
COMMENT ON TABLE photosocial.highlights IS 'One row per highlight (story collection) fetched. Its media are in highlight_items.';
COMMENT ON COLUMN photosocial.highlights.highlight_id IS 'The bare numeric id, as the detail endpoint takes it (the answer''s highlight: prefix removed).';
COMMENT ON COLUMN photosocial.highlights.title IS 'Highlight title.';
COMMENT ON COLUMN photosocial.highlights.media_count IS 'Media in the highlight (media_count), as last seen.';
COMMENT ON COLUMN photosocial.highlights.owner_username IS 'Owner''s handle (user.username); join photosocial.profiles.username.';
COMMENT ON COLUMN photosocial.highlights.owner_verified IS 'Owner''s verified badge (user.is_verified).';
COMMENT ON COLUMN photosocial.highlights.raw IS 'The highlight object as last received.';
COMMENT ON COLUMN photosocial.highlights.first_seen_run IS 'First run that fetched it.';
COMMENT ON COLUMN photosocial.highlights.last_seen_run IS 'Latest run that fetched it.';
COMMENT ON COLUMN photosocial.highlights.updated_at IS 'When the row last changed.';

CREATE TABLE photosocial.highlight_items (
    highlight_id   text        NOT NULL REFERENCES photosocial.highlights (highlight_id),
    position       integer     NOT NULL CHECK (position >= 1),
    item_id        text,
    media_type     integer,
    video_url      text,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    PRIMARY KEY (highlight_id, position)
);
COMMENT ON TABLE photosocial.highlight_items IS 'The media of a highlight, in order. A highlight that shrank keeps its old tail: items whose last_seen_run is older than the highlight''s are gone.';
COMMENT ON COLUMN photosocial.highlight_items.highlight_id IS 'The highlight (photosocial.highlights).';
COMMENT ON COLUMN photosocial.highlight_items.position IS 'Position in items, 1-based.';
COMMENT ON COLUMN photosocial.highlight_items.item_id IS 'The item''s media id, when sent.';
COMMENT ON COLUMN photosocial.highlight_items.media_type IS 'Media type as sent (media_type: 1 image, 2 video).';
COMMENT ON COLUMN photosocial.highlight_items.video_url IS 'URL of the first video version (video_versions[0].url); NULL for images.';
COMMENT ON COLUMN photosocial.highlight_items.raw IS 'The item as last received.';
COMMENT ON COLUMN photosocial.highlight_items.first_seen_run IS 'First run that saw the item at this position.';
COMMENT ON COLUMN photosocial.highlight_items.last_seen_run IS 'Latest run that saw the item at this position.';

-- +goose Down
DROP SCHEMA photosocial CASCADE;
