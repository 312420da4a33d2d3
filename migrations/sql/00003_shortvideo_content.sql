-- Short-video platform content: videos, hashtags, songs, searches, feeds and
-- live status, next to the accounts of 00002.
--
-- Conventions (as in 00002):
-- * Entity tables keep the JSON they were last written from in raw, and the
--   runs that first and last saw the entity (first_seen_run, last_seen_run).
-- * Counters live in per-run snapshot tables, primary key (entity, run_id):
--   one row per entity per run that saw it, so their history is a query.
-- * Timestamps the API sends as unix seconds are stored as timestamptz; the
--   API's 0 ("unset") is stored as NULL.
-- * raw_partial: some lists carry a trimmed object (only stats.playCount, a
--   top-search hashtag with only viewCount...). Such a row fills columns that
--   are still empty but never replaces a fuller raw or a known value.
--
-- References: a column naming a row that comes in the same API answer has a
-- foreign key (snapshots, search results, feed entries, popular creators,
-- song_videos.video_id), and sinks.Write writes parents first. A column naming
-- an entity that another request describes is a plain indexed column without
-- foreign key: a video's author (videos.author_unique_id), the song a videos
-- list was asked for (song_videos.song_id, videos.song_id) and the handle of a
-- live status. Those entities may never be fetched, and requiring them would
-- mean inventing stub rows; join them with LEFT JOIN.

-- +goose Up

CREATE TABLE shortvideo.videos (
    video_id         text        PRIMARY KEY,
    author_unique_id text,
    description      text,
    create_time      timestamptz,
    song_id          text,
    raw_partial      boolean     NOT NULL DEFAULT false,
    raw              jsonb       NOT NULL,
    first_seen_run   bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run    bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX videos_author_idx ON shortvideo.videos (author_unique_id) WHERE author_unique_id IS NOT NULL;
CREATE INDEX videos_song_idx ON shortvideo.videos (song_id) WHERE song_id IS NOT NULL;
COMMENT ON TABLE shortvideo.videos IS 'One row per video seen in any list (searches, song videos, feeds, profile item lists). Counters are in video_snapshots.';
COMMENT ON COLUMN shortvideo.videos.video_id IS 'The platform''s video id (id).';
COMMENT ON COLUMN shortvideo.videos.author_unique_id IS 'Handle of the author (author.uniqueId); join shortvideo.users.unique_id. No foreign key: the author may never have been fetched.';
COMMENT ON COLUMN shortvideo.videos.description IS 'Video description text (desc).';
COMMENT ON COLUMN shortvideo.videos.create_time IS 'When the video was posted (createTime), NULL if never sent.';
COMMENT ON COLUMN shortvideo.videos.song_id IS 'The video''s sound: music id of the full metadata, or the song whose videos list carried it. Join shortvideo.songs.song_id; no foreign key.';
COMMENT ON COLUMN shortvideo.videos.raw_partial IS 'True while raw holds only a trimmed list entry; a full object replaces it, a trimmed one never replaces a full one.';
COMMENT ON COLUMN shortvideo.videos.raw IS 'The video object as last received (the fullest one seen).';
COMMENT ON COLUMN shortvideo.videos.first_seen_run IS 'First run (crawl.runs.id) that saw the video.';
COMMENT ON COLUMN shortvideo.videos.last_seen_run IS 'Latest run that saw the video.';
COMMENT ON COLUMN shortvideo.videos.updated_at IS 'When the row last changed.';

CREATE TABLE shortvideo.video_snapshots (
    video_id      text        NOT NULL REFERENCES shortvideo.videos (video_id),
    run_id        bigint      NOT NULL REFERENCES crawl.runs (id),
    play_count    bigint,
    digg_count    bigint,
    comment_count bigint,
    share_count   bigint,
    captured_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (video_id, run_id)
);
CREATE INDEX video_snapshots_run_idx ON shortvideo.video_snapshots (run_id);
COMMENT ON TABLE shortvideo.video_snapshots IS 'A video''s counters as one run saw them: one row per video per run. A counter a list did not carry is NULL; a fuller list of the same run fills it.';
COMMENT ON COLUMN shortvideo.video_snapshots.video_id IS 'The video (shortvideo.videos).';
COMMENT ON COLUMN shortvideo.video_snapshots.run_id IS 'The run (crawl.runs) that saw these values.';
COMMENT ON COLUMN shortvideo.video_snapshots.play_count IS 'Views (stats.playCount).';
COMMENT ON COLUMN shortvideo.video_snapshots.digg_count IS 'Likes (stats.diggCount).';
COMMENT ON COLUMN shortvideo.video_snapshots.comment_count IS 'Comments (stats.commentCount), when sent.';
COMMENT ON COLUMN shortvideo.video_snapshots.share_count IS 'Shares (stats.shareCount), when sent.';
COMMENT ON COLUMN shortvideo.video_snapshots.captured_at IS 'When the snapshot row was first written.';

CREATE TABLE shortvideo.hashtags (
    name           text        PRIMARY KEY,
    raw_partial    boolean     NOT NULL DEFAULT false,
    raw            jsonb       NOT NULL,
    first_seen_run bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE shortvideo.hashtags IS 'One row per hashtag seen in a hashtag search or a top search. Counters and growth are in hashtag_snapshots.';
COMMENT ON COLUMN shortvideo.hashtags.name IS 'Hashtag name as sent (name), without #.';
COMMENT ON COLUMN shortvideo.hashtags.raw_partial IS 'True while raw holds only a top-search entry; a hashtag-search entry replaces it, never the reverse.';
COMMENT ON COLUMN shortvideo.hashtags.raw IS 'The hashtag object as last received (the fullest one seen).';
COMMENT ON COLUMN shortvideo.hashtags.first_seen_run IS 'First run that saw the hashtag.';
COMMENT ON COLUMN shortvideo.hashtags.last_seen_run IS 'Latest run that saw the hashtag.';
COMMENT ON COLUMN shortvideo.hashtags.updated_at IS 'When the row last changed.';

CREATE TABLE shortvideo.hashtag_snapshots (
    name        text        NOT NULL REFERENCES shortvideo.hashtags (name),
    run_id      bigint      NOT NULL REFERENCES crawl.runs (id),
    view_count  bigint,
    video_count bigint,
    growth      jsonb,
    captured_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (name, run_id)
);
CREATE INDEX hashtag_snapshots_run_idx ON shortvideo.hashtag_snapshots (run_id);
COMMENT ON TABLE shortvideo.hashtag_snapshots IS 'A hashtag''s counters and growth signals as one run saw them.';
COMMENT ON COLUMN shortvideo.hashtag_snapshots.name IS 'The hashtag (shortvideo.hashtags).';
COMMENT ON COLUMN shortvideo.hashtag_snapshots.run_id IS 'The run that saw these values.';
COMMENT ON COLUMN shortvideo.hashtag_snapshots.view_count IS 'Views of the hashtag''s videos (viewCount).';
COMMENT ON COLUMN shortvideo.hashtag_snapshots.video_count IS 'Videos using the hashtag (videoCount).';
COMMENT ON COLUMN shortvideo.hashtag_snapshots.growth IS 'Growth signals as sent (e.g. {"views7d": .., "videos7d": ..}); the contract does not fix their shape.';
COMMENT ON COLUMN shortvideo.hashtag_snapshots.captured_at IS 'When the snapshot row was first written.';

CREATE TABLE shortvideo.songs (
    song_id          text        PRIMARY KEY,
    title            text,
    author_name      text,
    duration_seconds integer,
    cover_large_url  text,
    cover_medium_url text,
    cover_thumb_url  text,
    play_url         text,
    raw_partial      boolean     NOT NULL DEFAULT false,
    raw              jsonb       NOT NULL,
    first_seen_run   bigint      NOT NULL REFERENCES crawl.runs (id),
    last_seen_run    bigint      NOT NULL REFERENCES crawl.runs (id),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE shortvideo.songs IS 'One row per song (sound): from the song endpoint, or a sound entry of a top search. Usage counts are in song_snapshots.';
COMMENT ON COLUMN shortvideo.songs.song_id IS 'The platform''s song/sound id (id).';
COMMENT ON COLUMN shortvideo.songs.title IS 'Song title (title).';
COMMENT ON COLUMN shortvideo.songs.author_name IS 'Name of the song''s author (authorName).';
COMMENT ON COLUMN shortvideo.songs.duration_seconds IS 'Length in seconds (duration).';
COMMENT ON COLUMN shortvideo.songs.cover_large_url IS 'Cover art, large (coverLarge).';
COMMENT ON COLUMN shortvideo.songs.cover_medium_url IS 'Cover art, medium (coverMedium).';
COMMENT ON COLUMN shortvideo.songs.cover_thumb_url IS 'Cover art, thumbnail (coverThumb).';
COMMENT ON COLUMN shortvideo.songs.play_url IS 'Audio URL (playUrl).';
COMMENT ON COLUMN shortvideo.songs.raw_partial IS 'True while raw holds only a top-search entry; the song endpoint''s object replaces it, never the reverse.';
COMMENT ON COLUMN shortvideo.songs.raw IS 'The song object as last received (the fullest one seen).';
COMMENT ON COLUMN shortvideo.songs.first_seen_run IS 'First run that saw the song.';
COMMENT ON COLUMN shortvideo.songs.last_seen_run IS 'Latest run that saw the song.';
COMMENT ON COLUMN shortvideo.songs.updated_at IS 'When the row last changed.';

CREATE TABLE shortvideo.song_snapshots (
    song_id     text        NOT NULL REFERENCES shortvideo.songs (song_id),
    run_id      bigint      NOT NULL REFERENCES crawl.runs (id),
    usage_count bigint,
    captured_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (song_id, run_id)
);
CREATE INDEX song_snapshots_run_idx ON shortvideo.song_snapshots (run_id);
COMMENT ON TABLE shortvideo.song_snapshots IS 'A song''s usage count as one run saw it.';
COMMENT ON COLUMN shortvideo.song_snapshots.song_id IS 'The song (shortvideo.songs).';
COMMENT ON COLUMN shortvideo.song_snapshots.run_id IS 'The run that saw this value.';
COMMENT ON COLUMN shortvideo.song_snapshots.usage_count IS 'Videos using the song (usageCount).';
COMMENT ON COLUMN shortvideo.song_snapshots.captured_at IS 'When the snapshot row was first written.';

CREATE TABLE shortvideo.song_videos (
    song_id        text   NOT NULL,
    video_id       text   NOT NULL REFERENCES shortvideo.videos (video_id),
    first_seen_run bigint NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint NOT NULL REFERENCES crawl.runs (id),
    PRIMARY KEY (song_id, video_id)
);
CREATE INDEX song_videos_video_idx ON shortvideo.song_videos (video_id);
COMMENT ON TABLE shortvideo.song_videos IS 'Link: the song''s videos list named the video. No foreign key on song_id: the list is fetched by id, the song itself by another request.';
COMMENT ON COLUMN shortvideo.song_videos.song_id IS 'The song whose videos list was fetched; join shortvideo.songs.song_id.';
COMMENT ON COLUMN shortvideo.song_videos.video_id IS 'A video of that list (shortvideo.videos).';
COMMENT ON COLUMN shortvideo.song_videos.first_seen_run IS 'First run whose list named the video.';
COMMENT ON COLUMN shortvideo.song_videos.last_seen_run IS 'Latest run whose list named the video.';

CREATE TABLE shortvideo.search_results (
    run_id       bigint  NOT NULL REFERENCES crawl.runs (id),
    search_kind  text    NOT NULL CHECK (search_kind IN ('keyword', 'hashtag', 'top')),
    query_key    text    NOT NULL,
    rank         integer NOT NULL CHECK (rank >= 1),
    result_type  text    NOT NULL,
    video_id     text    REFERENCES shortvideo.videos (video_id),
    unique_id    text    REFERENCES shortvideo.users (unique_id),
    hashtag_name text    REFERENCES shortvideo.hashtags (name),
    song_id      text    REFERENCES shortvideo.songs (song_id),
    raw          jsonb   NOT NULL,
    PRIMARY KEY (run_id, search_kind, query_key, rank),
    CHECK (num_nonnulls(video_id, unique_id, hashtag_name, song_id) <= 1),
    CHECK (video_id IS NULL OR result_type = 'video'),
    CHECK (unique_id IS NULL OR result_type = 'user'),
    CHECK (hashtag_name IS NULL OR result_type = 'hashtag'),
    CHECK (song_id IS NULL OR result_type = 'sound')
);
CREATE INDEX search_results_query_idx ON shortvideo.search_results (search_kind, query_key, run_id);
CREATE INDEX search_results_video_idx ON shortvideo.search_results (video_id) WHERE video_id IS NOT NULL;
CREATE INDEX search_results_user_idx ON shortvideo.search_results (unique_id) WHERE unique_id IS NOT NULL;
CREATE INDEX search_results_hashtag_idx ON shortvideo.search_results (hashtag_name) WHERE hashtag_name IS NOT NULL;
CREATE INDEX search_results_song_idx ON shortvideo.search_results (song_id) WHERE song_id IS NOT NULL;
COMMENT ON TABLE shortvideo.search_results IS 'What a search returned, in the platform''s order: one row per result per search per run. The ranking is the platform''s own (de-personalised) and is never reordered.';
COMMENT ON COLUMN shortvideo.search_results.run_id IS 'The run that searched.';
COMMENT ON COLUMN shortvideo.search_results.search_kind IS 'keyword (videos), hashtag (hashtags) or top (mixed results).';
COMMENT ON COLUMN shortvideo.search_results.query_key IS 'Canonical search string (sinks.QueryKey): keyword lower-cased, white space collapsed, then ?filters when the search had any.';
COMMENT ON COLUMN shortvideo.search_results.rank IS 'Position in the results as returned, 1-based across pages.';
COMMENT ON COLUMN shortvideo.search_results.result_type IS 'Kind of result: video, user, hashtag or sound (song); another kind the platform adds is kept with every id column NULL.';
COMMENT ON COLUMN shortvideo.search_results.video_id IS 'The video, for result_type video.';
COMMENT ON COLUMN shortvideo.search_results.unique_id IS 'The account''s handle, for result_type user.';
COMMENT ON COLUMN shortvideo.search_results.hashtag_name IS 'The hashtag, for result_type hashtag.';
COMMENT ON COLUMN shortvideo.search_results.song_id IS 'The song, for result_type sound.';
COMMENT ON COLUMN shortvideo.search_results.raw IS 'The result entry as received.';

CREATE TABLE shortvideo.feed_entries (
    run_id   bigint  NOT NULL REFERENCES crawl.runs (id),
    feed     text    NOT NULL CHECK (feed IN ('trending', 'popular_videos')),
    rank     integer NOT NULL CHECK (rank >= 1),
    video_id text    NOT NULL REFERENCES shortvideo.videos (video_id),
    raw      jsonb   NOT NULL,
    PRIMARY KEY (run_id, feed, rank)
);
CREATE INDEX feed_entries_video_idx ON shortvideo.feed_entries (video_id);
COMMENT ON TABLE shortvideo.feed_entries IS 'The trending feed and the popular videos as one run saw them, in order.';
COMMENT ON COLUMN shortvideo.feed_entries.run_id IS 'The run that fetched the feed.';
COMMENT ON COLUMN shortvideo.feed_entries.feed IS 'trending (get-trending-feed) or popular_videos (videos/popular).';
COMMENT ON COLUMN shortvideo.feed_entries.rank IS 'Position in the feed as returned, 1-based.';
COMMENT ON COLUMN shortvideo.feed_entries.video_id IS 'The video (shortvideo.videos).';
COMMENT ON COLUMN shortvideo.feed_entries.raw IS 'The feed entry as received.';

CREATE TABLE shortvideo.popular_creators (
    run_id         bigint  NOT NULL REFERENCES crawl.runs (id),
    rank           integer NOT NULL CHECK (rank >= 1),
    unique_id      text    NOT NULL REFERENCES shortvideo.users (unique_id),
    follower_count bigint,
    verified       boolean,
    raw            jsonb   NOT NULL,
    PRIMARY KEY (run_id, rank)
);
CREATE INDEX popular_creators_user_idx ON shortvideo.popular_creators (unique_id);
COMMENT ON TABLE shortvideo.popular_creators IS 'The popular creators list as one run saw it, in order.';
COMMENT ON COLUMN shortvideo.popular_creators.run_id IS 'The run that fetched the list.';
COMMENT ON COLUMN shortvideo.popular_creators.rank IS 'Position in the list as returned, 1-based.';
COMMENT ON COLUMN shortvideo.popular_creators.unique_id IS 'The creator''s handle (shortvideo.users).';
COMMENT ON COLUMN shortvideo.popular_creators.follower_count IS 'Followers as the list reported them (followerCount).';
COMMENT ON COLUMN shortvideo.popular_creators.verified IS 'Verified badge as the list reported it.';
COMMENT ON COLUMN shortvideo.popular_creators.raw IS 'The list entry as received.';

CREATE TABLE shortvideo.live_status (
    unique_id    text        NOT NULL,
    run_id       bigint      NOT NULL REFERENCES crawl.runs (id),
    is_live      boolean,
    title        text,
    viewer_count bigint,
    start_time   timestamptz,
    raw          jsonb       NOT NULL,
    captured_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (unique_id, run_id)
);
CREATE INDEX live_status_run_idx ON shortvideo.live_status (run_id);
COMMENT ON TABLE shortvideo.live_status IS 'Live status history: one row per handle per run that asked. No foreign key on unique_id: the status is fetched by handle, the profile by another request.';
COMMENT ON COLUMN shortvideo.live_status.unique_id IS 'The handle asked for; join shortvideo.users.unique_id.';
COMMENT ON COLUMN shortvideo.live_status.run_id IS 'The run that asked.';
COMMENT ON COLUMN shortvideo.live_status.is_live IS 'Whether the account was live (isLive).';
COMMENT ON COLUMN shortvideo.live_status.title IS 'Title of the live stream (title).';
COMMENT ON COLUMN shortvideo.live_status.viewer_count IS 'Viewers at the time of the request (viewerCount).';
COMMENT ON COLUMN shortvideo.live_status.start_time IS 'When the stream started (startTime); NULL when not live.';
COMMENT ON COLUMN shortvideo.live_status.raw IS 'The live status object as received.';
COMMENT ON COLUMN shortvideo.live_status.captured_at IS 'When the row was first written.';

-- +goose Down
DROP TABLE shortvideo.live_status;
DROP TABLE shortvideo.popular_creators;
DROP TABLE shortvideo.feed_entries;
DROP TABLE shortvideo.search_results;
DROP TABLE shortvideo.song_videos;
DROP TABLE shortvideo.song_snapshots;
DROP TABLE shortvideo.songs;
DROP TABLE shortvideo.hashtag_snapshots;
DROP TABLE shortvideo.hashtags;
DROP TABLE shortvideo.video_snapshots;
DROP TABLE shortvideo.videos;
