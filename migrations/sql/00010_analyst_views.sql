-- The analyst layer: views that answer the common questions without window
-- functions, and a comment on every schema, table, view and column (the ones
-- 00001, 00002 and 00005 left out). docs/schema.md is generated from these
-- comments (make schema-doc); a test fails when a column has none.
--
-- Three families of views per platform:
-- * <entity>_latest: every entity row with the counters of its latest
--   snapshot, and that snapshot's run_id and captured_at (NULL counters when
--   no run took a snapshot, e.g. an account seen only in a followers list).
-- * <snapshot>_growth: one row per snapshot that has an earlier one of the
--   same entity: the previous and the current run, time and counters, and
--   the delta (current - previous). A counter that fell has a negative
--   delta; NULL when either side did not carry the counter.
-- * <ranking>_latest: the ranking of each search (and of each feed) as the
--   latest run that has it returned it, with the query and its filters as
--   columns.
--
-- The views look snapshots up by the primary keys (entity, run_id) with a
-- LATERAL ... ORDER BY run_id DESC LIMIT 1, so a filter on the entity or on
-- the run is pushed into index scans.

-- +goose Up

COMMENT ON SCHEMA crawl IS 'Crawl bookkeeping: runs, the durable frontier of tasks, credit accounting.';
COMMENT ON SCHEMA shortvideo IS 'Data of the short-video platform: accounts, videos, hashtags, songs, searches, feeds, live status.';
COMMENT ON SCHEMA photosocial IS 'Data of the photo-sharing platform: profiles, comments, reels, transcripts, embeds, highlights.';

COMMENT ON TABLE crawl.runs IS 'One row per harvest (run). A run is resumed or joined by id; data rows name it in run_id, first_seen_run and last_seen_run.';
COMMENT ON COLUMN crawl.runs.id IS 'The run id.';
COMMENT ON COLUMN crawl.runs.job_name IS 'The job file''s name.';
COMMENT ON COLUMN crawl.runs.job IS 'The job as loaded (JSON), secrets excluded.';
COMMENT ON COLUMN crawl.runs.state IS 'running, done (frontier empty), stopped (resumable: budget, signal, refused key, outage) or failed.';
COMMENT ON COLUMN crawl.runs.stop_reason IS 'Why a stopped or failed run ended.';
COMMENT ON COLUMN crawl.runs.started_at IS 'When the run was created.';
COMMENT ON COLUMN crawl.runs.finished_at IS 'When the run last ended (NULL while running).';
COMMENT ON COLUMN crawl.runs.max_credits IS 'Credit budget of the run across all its processes; NULL: none.';
COMMENT ON COLUMN crawl.runs.credits_committed IS 'Credits reserved and not given back: billed plus the reservations of live leases (tasks.credits_held). Never above max_credits.';
COMMENT ON COLUMN crawl.runs.credits_billed IS 'Credits the upstream billed to the run.';

COMMENT ON TABLE crawl.tasks IS 'The frontier: one row per list or object to fetch in a run. A list task walks its pages one by one; cursor and pages advance in the same transaction as each page''s rows.';
COMMENT ON COLUMN crawl.tasks.id IS 'The task id.';
COMMENT ON COLUMN crawl.tasks.run_id IS 'The run (crawl.runs) the task belongs to.';
COMMENT ON COLUMN crawl.tasks.kind IS 'What to fetch, e.g. shortvideo.followers, photosocial.reels_search.';
COMMENT ON COLUMN crawl.tasks.key IS 'What identifies the work within its kind: handle, secUid, search term, URL... Unique per run and kind.';
COMMENT ON COLUMN crawl.tasks.params IS 'Extra request parameters (JSON object), e.g. the filters of a keyword search.';
COMMENT ON COLUMN crawl.tasks.depth IS 'Hops from a seed (0: a seed).';
COMMENT ON COLUMN crawl.tasks.max_pages IS 'Page limit of a list task; 0: no limit.';
COMMENT ON COLUMN crawl.tasks.parent_id IS 'The task whose page discovered this one; NULL for seeds.';
COMMENT ON COLUMN crawl.tasks.state IS 'pending, leased (a worker holds it), done, failed or skipped (404).';
COMMENT ON COLUMN crawl.tasks.reason IS 'Why the task ended: the error of a failed or skipped task, or how a list stopped (no more pages, page limit, repeated cursor...).';
COMMENT ON COLUMN crawl.tasks.cursor IS 'Cursor of the next page of a list; empty before the first page.';
COMMENT ON COLUMN crawl.tasks.pages IS 'Pages committed.';
COMMENT ON COLUMN crawl.tasks.items IS 'List entries received over the committed pages (the next page''s ranks start after them).';
COMMENT ON COLUMN crawl.tasks.attempts IS 'Times the task was leased.';
COMMENT ON COLUMN crawl.tasks.lease_owner IS 'The process and worker holding the lease (host:pid:random#worker).';
COMMENT ON COLUMN crawl.tasks.lease_token IS 'Fencing token, bumped on every lease: a commit of an older lease matches no row.';
COMMENT ON COLUMN crawl.tasks.lease_expires_at IS 'When the lease lapses unless renewed; set exactly while leased.';
COMMENT ON COLUMN crawl.tasks.created_at IS 'When the task was added to the frontier.';
COMMENT ON COLUMN crawl.tasks.updated_at IS 'When the row last changed.';
COMMENT ON COLUMN crawl.tasks.finished_at IS 'When the task ended (done, failed or skipped).';

COMMENT ON TABLE crawl.credit_usage IS 'What each endpoint cost a run: requests by outcome, and the last balance the upstream reported.';
COMMENT ON COLUMN crawl.credit_usage.run_id IS 'The run (crawl.runs).';
COMMENT ON COLUMN crawl.credit_usage.endpoint IS 'The endpoint, e.g. shortvideo/profile.';
COMMENT ON COLUMN crawl.credit_usage.requests IS 'Attempts that got an HTTP answer.';
COMMENT ON COLUMN crawl.credit_usage.billed IS 'Attempts that cost a credit.';
COMMENT ON COLUMN crawl.credit_usage.free IS 'Documented free answers (e.g. a private photo-sharing profile).';
COMMENT ON COLUMN crawl.credit_usage.rate_limited IS 'Answers 429 Too Many Requests.';
COMMENT ON COLUMN crawl.credit_usage.errors IS 'Other non-2xx answers.';
COMMENT ON COLUMN crawl.credit_usage.credits_charged IS 'Sum of credits_charged where answers carry it.';
COMMENT ON COLUMN crawl.credit_usage.credits_remaining IS 'Last credits_remaining the upstream reported; NULL if it never did.';

COMMENT ON TABLE shortvideo.users IS 'One row per account, keyed by handle: from its profile, or a list entry (follower, following, search result...) until the profile is fetched. Accounts known only by secUid are secuid:<secUid>. Counters are in user_snapshots.';
COMMENT ON COLUMN shortvideo.users.unique_id IS 'The handle (uniqueId), or secuid:<secUid> for an account known only by its secUid.';
COMMENT ON COLUMN shortvideo.users.user_id IS 'The platform''s user id (id), once the profile is fetched.';
COMMENT ON COLUMN shortvideo.users.sec_uid IS 'The account''s secUid, once known.';
COMMENT ON COLUMN shortvideo.users.nickname IS 'Display name (nickname).';
COMMENT ON COLUMN shortvideo.users.avatar_url IS 'Avatar image URL (avatarLarger), when sent.';
COMMENT ON COLUMN shortvideo.users.signature IS 'Bio text (signature).';
COMMENT ON COLUMN shortvideo.users.verified IS 'Verified badge (verified).';
COMMENT ON COLUMN shortvideo.users.private_account IS 'Private account (privateAccount).';
COMMENT ON COLUMN shortvideo.users.profile_fetched IS 'True once the profile endpoint answered for the account: raw is then the profile body, never replaced by a list entry.';
COMMENT ON COLUMN shortvideo.users.raw IS 'The profile body, or the list entry it was seen in until a profile is fetched.';
COMMENT ON COLUMN shortvideo.users.first_seen_run IS 'First run that saw the account.';
COMMENT ON COLUMN shortvideo.users.last_seen_run IS 'Latest run that saw the account.';
COMMENT ON COLUMN shortvideo.users.updated_at IS 'When the row last changed.';

COMMENT ON TABLE shortvideo.user_snapshots IS 'An account''s counters as one run''s profile fetch saw them: one row per account per run.';
COMMENT ON COLUMN shortvideo.user_snapshots.unique_id IS 'The account (shortvideo.users).';
COMMENT ON COLUMN shortvideo.user_snapshots.run_id IS 'The run that fetched the profile.';
COMMENT ON COLUMN shortvideo.user_snapshots.follower_count IS 'Followers (stats.followerCount).';
COMMENT ON COLUMN shortvideo.user_snapshots.following_count IS 'Accounts followed (stats.followingCount).';
COMMENT ON COLUMN shortvideo.user_snapshots.heart_count IS 'Likes received (stats.heartCount).';
COMMENT ON COLUMN shortvideo.user_snapshots.video_count IS 'Videos posted (stats.videoCount).';
COMMENT ON COLUMN shortvideo.user_snapshots.digg_count IS 'Likes given (stats.diggCount).';
COMMENT ON COLUMN shortvideo.user_snapshots.captured_at IS 'When the snapshot row was first written.';

COMMENT ON TABLE shortvideo.follows IS 'Follow edges: follower follows followee. A followers list of X yields (entry, X); a following list of X yields (X, entry).';
COMMENT ON COLUMN shortvideo.follows.follower IS 'The account that follows (shortvideo.users).';
COMMENT ON COLUMN shortvideo.follows.followee IS 'The account followed (shortvideo.users).';
COMMENT ON COLUMN shortvideo.follows.raw IS 'The list entry the edge came from, as last received.';
COMMENT ON COLUMN shortvideo.follows.first_seen_run IS 'First run that saw the edge.';
COMMENT ON COLUMN shortvideo.follows.last_seen_run IS 'Latest run that saw the edge.';

COMMENT ON SEQUENCE crawl.lease_tokens IS 'Source of crawl.tasks.lease_token fencing tokens.';
COMMENT ON FUNCTION crawl.expect_advanced(bigint) IS 'Aborts a page''s commit batch (SQLSTATE CR001) when its task advance matched no row: the lease was lost or the page already committed.';
COMMENT ON FUNCTION crawl.expect_lease(bigint) IS 'Aborts a credit reservation (SQLSTATE CR002) when the lease it reserves for is gone; returns 1 otherwise.';

-- The latest ranking of a feed: max(run_id) per feed by index.
CREATE INDEX feed_entries_feed_run_idx ON shortvideo.feed_entries (feed, run_id);

-- Short-video: latest state.

CREATE VIEW shortvideo.users_latest AS
SELECT u.unique_id, u.user_id, u.sec_uid, u.nickname, u.avatar_url, u.signature, u.verified,
       u.private_account, u.profile_fetched, u.raw, u.first_seen_run, u.last_seen_run, u.updated_at,
       s.follower_count, s.following_count, s.heart_count, s.video_count, s.digg_count,
       s.run_id, s.captured_at
FROM shortvideo.users u
LEFT JOIN LATERAL (
    SELECT * FROM shortvideo.user_snapshots s
    WHERE s.unique_id = u.unique_id ORDER BY s.run_id DESC LIMIT 1) s ON true;
COMMENT ON VIEW shortvideo.users_latest IS 'Every account with the counters of its latest snapshot (NULL when its profile was never fetched).';

CREATE VIEW shortvideo.videos_latest AS
SELECT v.video_id, v.author_unique_id, v.description, v.create_time, v.song_id, v.raw_partial, v.raw,
       v.first_seen_run, v.last_seen_run, v.updated_at,
       s.play_count, s.digg_count, s.comment_count, s.share_count,
       s.run_id, s.captured_at
FROM shortvideo.videos v
LEFT JOIN LATERAL (
    SELECT * FROM shortvideo.video_snapshots s
    WHERE s.video_id = v.video_id ORDER BY s.run_id DESC LIMIT 1) s ON true;
COMMENT ON VIEW shortvideo.videos_latest IS 'Every video with the counters of its latest snapshot.';

CREATE VIEW shortvideo.hashtags_latest AS
SELECT h.name, h.raw_partial, h.raw, h.first_seen_run, h.last_seen_run, h.updated_at,
       s.view_count, s.video_count, s.growth,
       s.run_id, s.captured_at
FROM shortvideo.hashtags h
LEFT JOIN LATERAL (
    SELECT * FROM shortvideo.hashtag_snapshots s
    WHERE s.name = h.name ORDER BY s.run_id DESC LIMIT 1) s ON true;
COMMENT ON VIEW shortvideo.hashtags_latest IS 'Every hashtag with the counters and growth signals of its latest snapshot.';

CREATE VIEW shortvideo.songs_latest AS
SELECT g.song_id, g.title, g.author_name, g.duration_seconds, g.cover_large_url, g.cover_medium_url,
       g.cover_thumb_url, g.play_url, g.raw_partial, g.raw, g.first_seen_run, g.last_seen_run, g.updated_at,
       s.usage_count,
       s.run_id, s.captured_at
FROM shortvideo.songs g
LEFT JOIN LATERAL (
    SELECT * FROM shortvideo.song_snapshots s
    WHERE s.song_id = g.song_id ORDER BY s.run_id DESC LIMIT 1) s ON true;
COMMENT ON VIEW shortvideo.songs_latest IS 'Every song with the usage count of its latest snapshot.';

CREATE VIEW shortvideo.live_status_latest AS
SELECT DISTINCT ON (l.unique_id)
       l.unique_id, l.is_live, l.title, l.viewer_count, l.start_time, l.raw, l.run_id, l.captured_at
FROM shortvideo.live_status l
ORDER BY l.unique_id, l.run_id DESC;
COMMENT ON VIEW shortvideo.live_status_latest IS 'The latest live status of each handle asked for.';

-- Short-video: growth between consecutive snapshots.

CREATE VIEW shortvideo.user_growth AS
SELECT c.unique_id,
       p.run_id AS prev_run_id, p.captured_at AS prev_captured_at,
       c.run_id, c.captured_at, c.captured_at - p.captured_at AS elapsed,
       p.follower_count AS prev_follower_count, c.follower_count, c.follower_count - p.follower_count AS follower_count_delta,
       p.following_count AS prev_following_count, c.following_count, c.following_count - p.following_count AS following_count_delta,
       p.heart_count AS prev_heart_count, c.heart_count, c.heart_count - p.heart_count AS heart_count_delta,
       p.video_count AS prev_video_count, c.video_count, c.video_count - p.video_count AS video_count_delta,
       p.digg_count AS prev_digg_count, c.digg_count, c.digg_count - p.digg_count AS digg_count_delta
FROM shortvideo.user_snapshots c
JOIN LATERAL (
    SELECT * FROM shortvideo.user_snapshots p
    WHERE p.unique_id = c.unique_id AND p.run_id < c.run_id ORDER BY p.run_id DESC LIMIT 1) p ON true;
COMMENT ON VIEW shortvideo.user_growth IS 'An account''s counters between two consecutive snapshots (the previous run that fetched its profile, and the current one). A fall is a negative delta.';

CREATE VIEW shortvideo.video_growth AS
SELECT c.video_id,
       p.run_id AS prev_run_id, p.captured_at AS prev_captured_at,
       c.run_id, c.captured_at, c.captured_at - p.captured_at AS elapsed,
       p.play_count AS prev_play_count, c.play_count, c.play_count - p.play_count AS play_count_delta,
       p.digg_count AS prev_digg_count, c.digg_count, c.digg_count - p.digg_count AS digg_count_delta,
       p.comment_count AS prev_comment_count, c.comment_count, c.comment_count - p.comment_count AS comment_count_delta,
       p.share_count AS prev_share_count, c.share_count, c.share_count - p.share_count AS share_count_delta
FROM shortvideo.video_snapshots c
JOIN LATERAL (
    SELECT * FROM shortvideo.video_snapshots p
    WHERE p.video_id = c.video_id AND p.run_id < c.run_id ORDER BY p.run_id DESC LIMIT 1) p ON true;
COMMENT ON VIEW shortvideo.video_growth IS 'A video''s counters between two consecutive snapshots (the previous run that saw it, and the current one). A fall is a negative delta; NULL when either snapshot lacks the counter.';

CREATE VIEW shortvideo.hashtag_growth AS
SELECT c.name,
       p.run_id AS prev_run_id, p.captured_at AS prev_captured_at,
       c.run_id, c.captured_at, c.captured_at - p.captured_at AS elapsed,
       p.view_count AS prev_view_count, c.view_count, c.view_count - p.view_count AS view_count_delta,
       p.video_count AS prev_video_count, c.video_count, c.video_count - p.video_count AS video_count_delta
FROM shortvideo.hashtag_snapshots c
JOIN LATERAL (
    SELECT * FROM shortvideo.hashtag_snapshots p
    WHERE p.name = c.name AND p.run_id < c.run_id ORDER BY p.run_id DESC LIMIT 1) p ON true;
COMMENT ON VIEW shortvideo.hashtag_growth IS 'A hashtag''s counters between two consecutive snapshots. A fall is a negative delta.';

CREATE VIEW shortvideo.song_growth AS
SELECT c.song_id,
       p.run_id AS prev_run_id, p.captured_at AS prev_captured_at,
       c.run_id, c.captured_at, c.captured_at - p.captured_at AS elapsed,
       p.usage_count AS prev_usage_count, c.usage_count, c.usage_count - p.usage_count AS usage_count_delta
FROM shortvideo.song_snapshots c
JOIN LATERAL (
    SELECT * FROM shortvideo.song_snapshots p
    WHERE p.song_id = c.song_id AND p.run_id < c.run_id ORDER BY p.run_id DESC LIMIT 1) p ON true;
COMMENT ON VIEW shortvideo.song_growth IS 'A song''s usage count between two consecutive snapshots. A fall is a negative delta.';

-- Short-video: latest rankings.

-- query_key is sinks.QueryKey: the query, then "?" and the form-B filters
-- (date_posted, region, sort_by, trim) url-encoded and sorted by name. Their
-- values are enums and a country code, so they need no decoding.
CREATE VIEW shortvideo.search_results_latest AS
SELECT s.search_kind,
       CASE WHEN q.filters IS NULL THEN s.query_key
            ELSE left(s.query_key, length(s.query_key) - length(q.filters) - 1) END AS query,
       substring('&' || q.filters FROM '&date_posted=([^&]*)') AS date_posted,
       substring('&' || q.filters FROM '&sort_by=([^&]*)') AS sort_by,
       substring('&' || q.filters FROM '&region=([^&]*)') AS region,
       coalesce(substring('&' || q.filters FROM '&trim=([^&]*)') = 'true', false) AS trim,
       s.query_key, s.run_id, r.started_at AS run_started_at,
       s.rank, s.result_type, s.video_id, s.unique_id, s.hashtag_name, s.song_id, s.raw
FROM (SELECT search_kind, query_key, max(run_id) AS run_id
      FROM shortvideo.search_results GROUP BY search_kind, query_key) l
JOIN shortvideo.search_results s USING (search_kind, query_key, run_id)
CROSS JOIN LATERAL (SELECT substring(s.query_key FROM
    '\?((?:date_posted|region|sort_by|trim)=[^&?]*(?:&(?:date_posted|region|sort_by|trim)=[^&?]*)*)$') AS filters) q
LEFT JOIN crawl.runs r ON r.id = s.run_id;
COMMENT ON VIEW shortvideo.search_results_latest IS 'The results of each search (kind and query_key) as the latest run that made it returned them, in rank order, with the query and its filters as columns.';

CREATE VIEW shortvideo.feed_entries_latest AS
SELECT f.feed, f.run_id, r.started_at AS run_started_at, f.rank, f.video_id, f.raw
FROM (SELECT feed, max(run_id) AS run_id FROM shortvideo.feed_entries GROUP BY feed) l
JOIN shortvideo.feed_entries f USING (feed, run_id)
LEFT JOIN crawl.runs r ON r.id = f.run_id;
COMMENT ON VIEW shortvideo.feed_entries_latest IS 'Each feed (trending, popular_videos) as the latest run that fetched it returned it, in rank order.';

CREATE VIEW shortvideo.popular_creators_latest AS
SELECT c.run_id, r.started_at AS run_started_at, c.rank, c.unique_id, c.follower_count, c.verified, c.raw
FROM shortvideo.popular_creators c
LEFT JOIN crawl.runs r ON r.id = c.run_id
WHERE c.run_id = (SELECT max(run_id) FROM shortvideo.popular_creators);
COMMENT ON VIEW shortvideo.popular_creators_latest IS 'The popular creators list as the latest run that fetched it returned it, in rank order.';

-- Photo-sharing: latest state.

CREATE VIEW photosocial.profiles_latest AS
SELECT p.username, p.user_id, p.full_name, p.biography, p.profile_pic_url, p.is_verified, p.is_private,
       p.is_business_account, p.category_name, p.contact_email, p.contact_phone, p.contact_address,
       p.profile_fetched, p.raw, p.first_seen_run, p.last_seen_run, p.updated_at,
       s.follower_count, s.following_count, s.post_count,
       s.run_id, s.captured_at
FROM photosocial.profiles p
LEFT JOIN LATERAL (
    SELECT * FROM photosocial.profile_snapshots s
    WHERE s.username = p.username ORDER BY s.run_id DESC LIMIT 1) s ON true;
COMMENT ON VIEW photosocial.profiles_latest IS 'Every account with the counters of its latest snapshot (NULL when its profile was never fetched).';

CREATE VIEW photosocial.reels_latest AS
SELECT e.reel_id, e.code, e.owner_username, e.caption, e.taken_at, e.raw, e.first_seen_run, e.last_seen_run, e.updated_at,
       s.play_count, s.like_count,
       s.run_id, s.captured_at
FROM photosocial.reels e
LEFT JOIN LATERAL (
    SELECT * FROM photosocial.reel_snapshots s
    WHERE s.reel_id = e.reel_id ORDER BY s.run_id DESC LIMIT 1) s ON true;
COMMENT ON VIEW photosocial.reels_latest IS 'Every reel with the counters of its latest snapshot.';

-- Photo-sharing: growth.

CREATE VIEW photosocial.profile_growth AS
SELECT c.username,
       p.run_id AS prev_run_id, p.captured_at AS prev_captured_at,
       c.run_id, c.captured_at, c.captured_at - p.captured_at AS elapsed,
       p.follower_count AS prev_follower_count, c.follower_count, c.follower_count - p.follower_count AS follower_count_delta,
       p.following_count AS prev_following_count, c.following_count, c.following_count - p.following_count AS following_count_delta,
       p.post_count AS prev_post_count, c.post_count, c.post_count - p.post_count AS post_count_delta
FROM photosocial.profile_snapshots c
JOIN LATERAL (
    SELECT * FROM photosocial.profile_snapshots p
    WHERE p.username = c.username AND p.run_id < c.run_id ORDER BY p.run_id DESC LIMIT 1) p ON true;
COMMENT ON VIEW photosocial.profile_growth IS 'An account''s counters between two consecutive snapshots. A fall is a negative delta.';

CREATE VIEW photosocial.reel_growth AS
SELECT c.reel_id,
       p.run_id AS prev_run_id, p.captured_at AS prev_captured_at,
       c.run_id, c.captured_at, c.captured_at - p.captured_at AS elapsed,
       p.play_count AS prev_play_count, c.play_count, c.play_count - p.play_count AS play_count_delta,
       p.like_count AS prev_like_count, c.like_count, c.like_count - p.like_count AS like_count_delta
FROM photosocial.reel_snapshots c
JOIN LATERAL (
    SELECT * FROM photosocial.reel_snapshots p
    WHERE p.reel_id = c.reel_id AND p.run_id < c.run_id ORDER BY p.run_id DESC LIMIT 1) p ON true;
COMMENT ON VIEW photosocial.reel_growth IS 'A reel''s counters between two consecutive snapshots. A fall is a negative delta.';

-- Photo-sharing: latest rankings.

CREATE VIEW photosocial.reel_search_results_latest AS
SELECT s.query_key AS query, s.run_id, r.started_at AS run_started_at, s.rank, s.reel_id
FROM (SELECT query_key, max(run_id) AS run_id
      FROM photosocial.reel_search_results GROUP BY query_key) l
JOIN photosocial.reel_search_results s USING (query_key, run_id)
LEFT JOIN crawl.runs r ON r.id = s.run_id;
COMMENT ON VIEW photosocial.reel_search_results_latest IS 'The results of each reels search as the latest run that made it returned them, in rank order.';

-- Columns a view derives; the DO block below gives the others the comment of
-- the table column they copy, and the prev_/_delta columns of growth views a
-- comment naming their counter.
COMMENT ON COLUMN shortvideo.users_latest.run_id IS 'The run of the latest snapshot (shortvideo.user_snapshots); NULL when there is none.';
COMMENT ON COLUMN shortvideo.users_latest.captured_at IS 'When the latest snapshot (shortvideo.user_snapshots) was written; NULL when there is none.';
COMMENT ON COLUMN shortvideo.videos_latest.run_id IS 'The run of the latest snapshot (shortvideo.video_snapshots); NULL when there is none.';
COMMENT ON COLUMN shortvideo.videos_latest.captured_at IS 'When the latest snapshot (shortvideo.video_snapshots) was written; NULL when there is none.';
COMMENT ON COLUMN shortvideo.hashtags_latest.run_id IS 'The run of the latest snapshot (shortvideo.hashtag_snapshots); NULL when there is none.';
COMMENT ON COLUMN shortvideo.hashtags_latest.captured_at IS 'When the latest snapshot (shortvideo.hashtag_snapshots) was written; NULL when there is none.';
COMMENT ON COLUMN shortvideo.songs_latest.run_id IS 'The run of the latest snapshot (shortvideo.song_snapshots); NULL when there is none.';
COMMENT ON COLUMN shortvideo.songs_latest.captured_at IS 'When the latest snapshot (shortvideo.song_snapshots) was written; NULL when there is none.';
COMMENT ON COLUMN photosocial.profiles_latest.run_id IS 'The run of the latest snapshot (photosocial.profile_snapshots); NULL when there is none.';
COMMENT ON COLUMN photosocial.profiles_latest.captured_at IS 'When the latest snapshot (photosocial.profile_snapshots) was written; NULL when there is none.';
COMMENT ON COLUMN photosocial.reels_latest.run_id IS 'The run of the latest snapshot (photosocial.reel_snapshots); NULL when there is none.';
COMMENT ON COLUMN photosocial.reels_latest.captured_at IS 'When the latest snapshot (photosocial.reel_snapshots) was written; NULL when there is none.';
COMMENT ON COLUMN shortvideo.live_status_latest.run_id IS 'The latest run that asked for the handle''s live status.';
COMMENT ON COLUMN shortvideo.live_status_latest.captured_at IS 'When that run wrote the status.';
COMMENT ON COLUMN shortvideo.user_growth.prev_run_id IS 'The run of the previous snapshot: the latest run before run_id that took one.';
COMMENT ON COLUMN shortvideo.user_growth.prev_captured_at IS 'When the previous snapshot was written.';
COMMENT ON COLUMN shortvideo.user_growth.run_id IS 'The run of the current snapshot.';
COMMENT ON COLUMN shortvideo.user_growth.captured_at IS 'When the current snapshot was written.';
COMMENT ON COLUMN shortvideo.user_growth.elapsed IS 'Time between the two snapshots (captured_at - prev_captured_at).';
COMMENT ON COLUMN shortvideo.video_growth.prev_run_id IS 'The run of the previous snapshot: the latest run before run_id that took one.';
COMMENT ON COLUMN shortvideo.video_growth.prev_captured_at IS 'When the previous snapshot was written.';
COMMENT ON COLUMN shortvideo.video_growth.run_id IS 'The run of the current snapshot.';
COMMENT ON COLUMN shortvideo.video_growth.captured_at IS 'When the current snapshot was written.';
COMMENT ON COLUMN shortvideo.video_growth.elapsed IS 'Time between the two snapshots (captured_at - prev_captured_at).';
COMMENT ON COLUMN shortvideo.hashtag_growth.prev_run_id IS 'The run of the previous snapshot: the latest run before run_id that took one.';
COMMENT ON COLUMN shortvideo.hashtag_growth.prev_captured_at IS 'When the previous snapshot was written.';
COMMENT ON COLUMN shortvideo.hashtag_growth.run_id IS 'The run of the current snapshot.';
COMMENT ON COLUMN shortvideo.hashtag_growth.captured_at IS 'When the current snapshot was written.';
COMMENT ON COLUMN shortvideo.hashtag_growth.elapsed IS 'Time between the two snapshots (captured_at - prev_captured_at).';
COMMENT ON COLUMN shortvideo.song_growth.prev_run_id IS 'The run of the previous snapshot: the latest run before run_id that took one.';
COMMENT ON COLUMN shortvideo.song_growth.prev_captured_at IS 'When the previous snapshot was written.';
COMMENT ON COLUMN shortvideo.song_growth.run_id IS 'The run of the current snapshot.';
COMMENT ON COLUMN shortvideo.song_growth.captured_at IS 'When the current snapshot was written.';
COMMENT ON COLUMN shortvideo.song_growth.elapsed IS 'Time between the two snapshots (captured_at - prev_captured_at).';
COMMENT ON COLUMN photosocial.profile_growth.prev_run_id IS 'The run of the previous snapshot: the latest run before run_id that took one.';
COMMENT ON COLUMN photosocial.profile_growth.prev_captured_at IS 'When the previous snapshot was written.';
COMMENT ON COLUMN photosocial.profile_growth.run_id IS 'The run of the current snapshot.';
COMMENT ON COLUMN photosocial.profile_growth.captured_at IS 'When the current snapshot was written.';
COMMENT ON COLUMN photosocial.profile_growth.elapsed IS 'Time between the two snapshots (captured_at - prev_captured_at).';
COMMENT ON COLUMN photosocial.reel_growth.prev_run_id IS 'The run of the previous snapshot: the latest run before run_id that took one.';
COMMENT ON COLUMN photosocial.reel_growth.prev_captured_at IS 'When the previous snapshot was written.';
COMMENT ON COLUMN photosocial.reel_growth.run_id IS 'The run of the current snapshot.';
COMMENT ON COLUMN photosocial.reel_growth.captured_at IS 'When the current snapshot was written.';
COMMENT ON COLUMN photosocial.reel_growth.elapsed IS 'Time between the two snapshots (captured_at - prev_captured_at).';
COMMENT ON COLUMN shortvideo.search_results_latest.run_id IS 'The latest run that has this ranking.';
COMMENT ON COLUMN shortvideo.search_results_latest.run_started_at IS 'When that run started (crawl.runs.started_at).';
COMMENT ON COLUMN shortvideo.feed_entries_latest.run_id IS 'The latest run that has this ranking.';
COMMENT ON COLUMN shortvideo.feed_entries_latest.run_started_at IS 'When that run started (crawl.runs.started_at).';
COMMENT ON COLUMN shortvideo.popular_creators_latest.run_id IS 'The latest run that has this ranking.';
COMMENT ON COLUMN shortvideo.popular_creators_latest.run_started_at IS 'When that run started (crawl.runs.started_at).';
COMMENT ON COLUMN photosocial.reel_search_results_latest.run_id IS 'The latest run that has this ranking.';
COMMENT ON COLUMN photosocial.reel_search_results_latest.run_started_at IS 'When that run started (crawl.runs.started_at).';
COMMENT ON COLUMN shortvideo.search_results_latest.query IS 'The search term as stored: lower-cased, white space collapsed, without the filters.';
COMMENT ON COLUMN shortvideo.search_results_latest.date_posted IS 'Keyword search filter date_posted (yesterday, this-week, this-month, last-3-months, last-6-months, all-time); NULL when not set.';
COMMENT ON COLUMN shortvideo.search_results_latest.sort_by IS 'Keyword search filter sort_by (relevance, most-liked, date-posted); NULL when not set.';
COMMENT ON COLUMN shortvideo.search_results_latest.region IS 'Keyword search filter region, a two-letter country code in lower case; NULL when not set.';
COMMENT ON COLUMN shortvideo.search_results_latest.trim IS 'Whether the keyword search asked for trimmed videos (trim=true).';
COMMENT ON COLUMN photosocial.reel_search_results_latest.query IS 'The search term as stored (query_key): lower-cased, white space collapsed.';

-- Column comments of the views still without one.
-- +goose StatementBegin
DO $$
DECLARE
    c record;
    txt text;
BEGIN
    -- A column a view copies from a table gets that column's comment (the
    -- entity table's before the snapshot table's: the lower oid).
    FOR c IN
        SELECT v.oid, n.nspname, v.relname, a.attname
        FROM pg_class v
        JOIN pg_namespace n ON n.oid = v.relnamespace
        JOIN pg_attribute a ON a.attrelid = v.oid AND a.attnum > 0
        WHERE v.relkind = 'v' AND n.nspname IN ('shortvideo', 'photosocial')
          AND col_description(v.oid, a.attnum) IS NULL
        ORDER BY v.oid, a.attnum
    LOOP
        SELECT col_description(d.refobjid, d.refobjsubid) INTO txt
        FROM pg_rewrite w
        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                        AND d.refclassid = 'pg_class'::regclass AND d.refobjsubid > 0
        JOIN pg_attribute ta ON ta.attrelid = d.refobjid AND ta.attnum = d.refobjsubid
        WHERE w.ev_class = c.oid AND ta.attname = c.attname AND d.refobjid <> 'crawl.runs'::regclass
        ORDER BY d.refobjid
        LIMIT 1;
        IF txt IS NOT NULL THEN
            EXECUTE format('COMMENT ON COLUMN %I.%I.%I IS %L', c.nspname, c.relname, c.attname, txt);
        END IF;
    END LOOP;
    -- Growth views: prev_<counter> and <counter>_delta.
    FOR c IN
        SELECT v.oid, n.nspname, v.relname, a.attname
        FROM pg_class v
        JOIN pg_namespace n ON n.oid = v.relnamespace
        JOIN pg_attribute a ON a.attrelid = v.oid AND a.attnum > 0
        WHERE v.relkind = 'v' AND v.relname LIKE '%\_growth'
          AND n.nspname IN ('shortvideo', 'photosocial')
          AND col_description(v.oid, a.attnum) IS NULL
    LOOP
        IF c.attname LIKE 'prev\_%' THEN
            txt := format('%s in the previous snapshot (prev_run_id).', substr(c.attname, 6));
        ELSIF c.attname LIKE '%\_delta' THEN
            txt := format('%1$s - prev_%1$s: negative when the count fell, NULL when either snapshot lacks it.',
                          left(c.attname, -6));
        ELSE
            CONTINUE;
        END IF;
        EXECUTE format('COMMENT ON COLUMN %I.%I.%I IS %L', c.nspname, c.relname, c.attname, txt);
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP VIEW photosocial.reel_search_results_latest, photosocial.reel_growth, photosocial.profile_growth,
    photosocial.reels_latest, photosocial.profiles_latest,
    shortvideo.popular_creators_latest, shortvideo.feed_entries_latest, shortvideo.search_results_latest,
    shortvideo.song_growth, shortvideo.hashtag_growth, shortvideo.video_growth, shortvideo.user_growth,
    shortvideo.live_status_latest, shortvideo.songs_latest, shortvideo.hashtags_latest,
    shortvideo.videos_latest, shortvideo.users_latest;
DROP INDEX shortvideo.feed_entries_feed_run_idx;
-- The comments on tables stay: they describe the tables of 00001 to 00009.
