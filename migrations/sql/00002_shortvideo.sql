-- Short-video platform: users, counter snapshots, follow edges.

-- +goose Up
CREATE SCHEMA shortvideo;

-- Users are keyed by handle (uniqueId): follower and following entries carry
-- no other id. user_id and sec_uid are filled once the profile is fetched.
CREATE TABLE shortvideo.users (
    unique_id        text        PRIMARY KEY,
    user_id          text,
    sec_uid          text,
    nickname         text,
    avatar_url       text,
    signature        text,
    verified         boolean,
    private_account  boolean,
    profile_fetched  boolean     NOT NULL DEFAULT false,
    raw              jsonb       NOT NULL,       -- profile body, or the list entry until a profile is fetched
    first_seen_run   bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run    bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX users_sec_uid_idx ON shortvideo.users (sec_uid) WHERE sec_uid IS NOT NULL;

-- One row per user per run that fetched its profile: counters over time.
CREATE TABLE shortvideo.user_snapshots (
    unique_id        text        NOT NULL REFERENCES shortvideo.users (unique_id),
    run_id           bigint      NOT NULL REFERENCES crawl.runs (id),
    follower_count   bigint,
    following_count  bigint,
    heart_count      bigint,
    video_count      bigint,
    digg_count       bigint,
    captured_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (unique_id, run_id)
);

-- follower follows followee. A followers list of X yields (entry, X); a
-- following list of X yields (X, entry).
CREATE TABLE shortvideo.follows (
    follower         text        NOT NULL REFERENCES shortvideo.users (unique_id),
    followee         text        NOT NULL REFERENCES shortvideo.users (unique_id),
    raw              jsonb       NOT NULL,       -- the list entry it came from
    first_seen_run   bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run    bigint      NOT NULL REFERENCES crawl.runs (id),
    PRIMARY KEY (follower, followee)
);
CREATE INDEX follows_followee_idx ON shortvideo.follows (followee);

-- +goose Down
DROP SCHEMA shortvideo CASCADE;
