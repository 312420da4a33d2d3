-- Bulk upserts of the shortvideo schema (package sinks). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVUsers
INSERT INTO shortvideo.users AS u (unique_id, user_id, sec_uid, nickname, avatar_url, signature,
    verified, private_account, profile_fetched, raw, first_seen_run, last_seen_run)
SELECT r.unique_id, r.user_id, r.sec_uid, r.nickname, r.avatar_url, r.signature,
    r.verified, r.private_account, r.profile_fetched, r.raw::jsonb, @run_id, @run_id
FROM unnest(@unique_id::text[], @user_id::text[], @sec_uid::text[], @nickname::text[], @avatar_url::text[], @signature::text[],
    @verified::boolean[], @private_account::boolean[], @profile_fetched::boolean[], @raw::text[])
    AS r(unique_id, user_id, sec_uid, nickname, avatar_url, signature, verified, private_account, profile_fetched, raw)
ON CONFLICT (unique_id) DO UPDATE SET
    user_id         = COALESCE(EXCLUDED.user_id, u.user_id),
    sec_uid         = COALESCE(EXCLUDED.sec_uid, u.sec_uid),
    nickname        = COALESCE(EXCLUDED.nickname, u.nickname),
    avatar_url      = COALESCE(EXCLUDED.avatar_url, u.avatar_url),
    signature       = COALESCE(EXCLUDED.signature, u.signature),
    verified        = COALESCE(EXCLUDED.verified, u.verified),
    private_account = COALESCE(EXCLUDED.private_account, u.private_account),
    profile_fetched = u.profile_fetched OR EXCLUDED.profile_fetched,
    raw             = CASE WHEN EXCLUDED.profile_fetched OR NOT u.profile_fetched THEN EXCLUDED.raw ELSE u.raw END,
    first_seen_run  = LEAST(u.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run   = GREATEST(u.last_seen_run, EXCLUDED.last_seen_run),
    updated_at      = now()
WHERE (u.user_id, u.sec_uid, u.nickname, u.avatar_url, u.signature, u.verified, u.private_account,
       u.profile_fetched, u.raw, u.first_seen_run, u.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.user_id, u.user_id), COALESCE(EXCLUDED.sec_uid, u.sec_uid),
       COALESCE(EXCLUDED.nickname, u.nickname), COALESCE(EXCLUDED.avatar_url, u.avatar_url),
       COALESCE(EXCLUDED.signature, u.signature), COALESCE(EXCLUDED.verified, u.verified),
       COALESCE(EXCLUDED.private_account, u.private_account), u.profile_fetched OR EXCLUDED.profile_fetched,
       CASE WHEN EXCLUDED.profile_fetched OR NOT u.profile_fetched THEN EXCLUDED.raw ELSE u.raw END,
       LEAST(u.first_seen_run, EXCLUDED.first_seen_run), GREATEST(u.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertSVSnapshots
INSERT INTO shortvideo.user_snapshots AS s (unique_id, run_id, follower_count, following_count,
    heart_count, video_count, digg_count)
SELECT r.unique_id, @run_id, r.follower_count, r.following_count, r.heart_count, r.video_count, r.digg_count
FROM unnest(@unique_id::text[], @follower_count::bigint[], @following_count::bigint[], @heart_count::bigint[], @video_count::bigint[], @digg_count::bigint[])
    AS r(unique_id, follower_count, following_count, heart_count, video_count, digg_count)
ON CONFLICT (unique_id, run_id) DO UPDATE SET
    follower_count  = EXCLUDED.follower_count,
    following_count = EXCLUDED.following_count,
    heart_count     = EXCLUDED.heart_count,
    video_count     = EXCLUDED.video_count,
    digg_count      = EXCLUDED.digg_count
WHERE (s.follower_count, s.following_count, s.heart_count, s.video_count, s.digg_count)
  IS DISTINCT FROM
      (EXCLUDED.follower_count, EXCLUDED.following_count, EXCLUDED.heart_count, EXCLUDED.video_count, EXCLUDED.digg_count);

-- name: UpsertSVFollows
INSERT INTO shortvideo.follows AS f (follower, followee, raw, first_seen_run, last_seen_run)
SELECT r.follower, r.followee, r.raw::jsonb, @run_id, @run_id
FROM unnest(@follower::text[], @followee::text[], @raw::text[]) AS r(follower, followee, raw)
ON CONFLICT (follower, followee) DO UPDATE SET
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(f.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(f.last_seen_run, EXCLUDED.last_seen_run)
WHERE (f.raw, f.first_seen_run, f.last_seen_run)
  IS DISTINCT FROM
      (EXCLUDED.raw, LEAST(f.first_seen_run, EXCLUDED.first_seen_run), GREATEST(f.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertSVHashtags
INSERT INTO shortvideo.hashtags AS h (name, raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.name, r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@name::text[], @raw_partial::boolean[], @raw::text[]) AS r(name, raw_partial, raw)
ON CONFLICT (name) DO UPDATE SET
    raw_partial    = h.raw_partial AND EXCLUDED.raw_partial,
    raw            = CASE WHEN h.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE h.raw END,
    first_seen_run = LEAST(h.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(h.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (h.raw_partial, h.raw, h.first_seen_run, h.last_seen_run)
  IS DISTINCT FROM
      (h.raw_partial AND EXCLUDED.raw_partial,
       CASE WHEN h.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE h.raw END,
       LEAST(h.first_seen_run, EXCLUDED.first_seen_run), GREATEST(h.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertSVHashtagSnapshots
INSERT INTO shortvideo.hashtag_snapshots AS s (name, run_id, view_count, video_count, growth)
SELECT r.name, @run_id, r.view_count, r.video_count, NULLIF(NULLIF(r.growth, ''), 'null')::jsonb
FROM unnest(@name::text[], @view_count::bigint[], @video_count::bigint[], @growth::text[]) AS r(name, view_count, video_count, growth)
ON CONFLICT (name, run_id) DO UPDATE SET
    view_count  = COALESCE(EXCLUDED.view_count, s.view_count),
    video_count = COALESCE(EXCLUDED.video_count, s.video_count),
    growth      = COALESCE(EXCLUDED.growth, s.growth)
WHERE (s.view_count, s.video_count, s.growth)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.view_count, s.view_count), COALESCE(EXCLUDED.video_count, s.video_count),
       COALESCE(EXCLUDED.growth, s.growth));

-- name: UpsertSVLiveStatuses
INSERT INTO shortvideo.live_status AS l (unique_id, run_id, is_live, title, viewer_count, start_time, raw)
SELECT r.unique_id, @run_id, r.is_live, r.title, r.viewer_count, to_timestamp(NULLIF(r.start_time, 0)), r.raw::jsonb
FROM unnest(@unique_id::text[], @is_live::boolean[], @title::text[], @viewer_count::bigint[], @start_time::bigint[], @raw::text[])
    AS r(unique_id, is_live, title, viewer_count, start_time, raw)
ON CONFLICT (unique_id, run_id) DO UPDATE SET
    is_live      = EXCLUDED.is_live,
    title        = EXCLUDED.title,
    viewer_count = EXCLUDED.viewer_count,
    start_time   = EXCLUDED.start_time,
    raw          = EXCLUDED.raw
WHERE (l.is_live, l.title, l.viewer_count, l.start_time, l.raw)
  IS DISTINCT FROM (EXCLUDED.is_live, EXCLUDED.title, EXCLUDED.viewer_count, EXCLUDED.start_time, EXCLUDED.raw);

-- name: UpsertSVSearchResults
INSERT INTO shortvideo.search_results AS s (run_id, search_kind, query_key, rank, result_type,
    video_id, unique_id, hashtag_name, song_id, raw)
SELECT @run_id, r.search_kind, r.query_key, r.rank, r.result_type, r.video_id, r.unique_id, r.hashtag_name,
    r.song_id, r.raw::jsonb
FROM unnest(@search_kind::text[], @query_key::text[], @rank::integer[], @result_type::text[], @video_id::text[], @unique_id::text[], @hashtag_name::text[], @song_id::text[],
    @raw::text[])
    AS r(search_kind, query_key, rank, result_type, video_id, unique_id, hashtag_name, song_id, raw)
ON CONFLICT (run_id, search_kind, query_key, rank) DO UPDATE SET
    result_type  = EXCLUDED.result_type,
    video_id     = EXCLUDED.video_id,
    unique_id    = EXCLUDED.unique_id,
    hashtag_name = EXCLUDED.hashtag_name,
    song_id      = EXCLUDED.song_id,
    raw          = EXCLUDED.raw
WHERE (s.result_type, s.video_id, s.unique_id, s.hashtag_name, s.song_id, s.raw)
  IS DISTINCT FROM
      (EXCLUDED.result_type, EXCLUDED.video_id, EXCLUDED.unique_id, EXCLUDED.hashtag_name, EXCLUDED.song_id,
       EXCLUDED.raw);

-- name: UpsertSVFeedEntries
INSERT INTO shortvideo.feed_entries AS f (run_id, feed, rank, video_id, raw)
SELECT @run_id, r.feed, r.rank, r.video_id, r.raw::jsonb
FROM unnest(@feed::text[], @rank::integer[], @video_id::text[], @raw::text[]) AS r(feed, rank, video_id, raw)
ON CONFLICT (run_id, feed, rank) DO UPDATE SET
    video_id = EXCLUDED.video_id,
    raw      = EXCLUDED.raw
WHERE (f.video_id, f.raw) IS DISTINCT FROM (EXCLUDED.video_id, EXCLUDED.raw);

-- name: UpsertSVPopularCreators
INSERT INTO shortvideo.popular_creators AS c (run_id, rank, unique_id, follower_count, verified, raw)
SELECT @run_id, r.rank, r.unique_id, r.follower_count, r.verified, r.raw::jsonb
FROM unnest(@rank::integer[], @unique_id::text[], @follower_count::bigint[], @verified::boolean[], @raw::text[])
    AS r(rank, unique_id, follower_count, verified, raw)
ON CONFLICT (run_id, rank) DO UPDATE SET
    unique_id      = EXCLUDED.unique_id,
    follower_count = EXCLUDED.follower_count,
    verified       = EXCLUDED.verified,
    raw            = EXCLUDED.raw
WHERE (c.unique_id, c.follower_count, c.verified, c.raw)
  IS DISTINCT FROM (EXCLUDED.unique_id, EXCLUDED.follower_count, EXCLUDED.verified, EXCLUDED.raw);

-- name: UpsertSVSongs
INSERT INTO shortvideo.songs AS s (song_id, title, author_name, duration_seconds, cover_large_url,
    cover_medium_url, cover_thumb_url, play_url, raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.song_id, r.title, r.author_name, r.duration_seconds, r.cover_large_url,
    r.cover_medium_url, r.cover_thumb_url, r.play_url, r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@song_id::text[], @title::text[], @author_name::text[], @duration_seconds::integer[], @cover_large_url::text[], @cover_medium_url::text[], @cover_thumb_url::text[], @play_url::text[],
    @raw_partial::boolean[], @raw::text[])
    AS r(song_id, title, author_name, duration_seconds, cover_large_url, cover_medium_url, cover_thumb_url,
         play_url, raw_partial, raw)
ON CONFLICT (song_id) DO UPDATE SET
    title            = COALESCE(EXCLUDED.title, s.title),
    author_name      = COALESCE(EXCLUDED.author_name, s.author_name),
    duration_seconds = COALESCE(EXCLUDED.duration_seconds, s.duration_seconds),
    cover_large_url  = COALESCE(EXCLUDED.cover_large_url, s.cover_large_url),
    cover_medium_url = COALESCE(EXCLUDED.cover_medium_url, s.cover_medium_url),
    cover_thumb_url  = COALESCE(EXCLUDED.cover_thumb_url, s.cover_thumb_url),
    play_url         = COALESCE(EXCLUDED.play_url, s.play_url),
    raw_partial      = s.raw_partial AND EXCLUDED.raw_partial,
    raw              = CASE WHEN s.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE s.raw END,
    first_seen_run   = LEAST(s.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run    = GREATEST(s.last_seen_run, EXCLUDED.last_seen_run),
    updated_at       = now()
WHERE (s.title, s.author_name, s.duration_seconds, s.cover_large_url, s.cover_medium_url, s.cover_thumb_url,
       s.play_url, s.raw_partial, s.raw, s.first_seen_run, s.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.title, s.title), COALESCE(EXCLUDED.author_name, s.author_name),
       COALESCE(EXCLUDED.duration_seconds, s.duration_seconds), COALESCE(EXCLUDED.cover_large_url, s.cover_large_url),
       COALESCE(EXCLUDED.cover_medium_url, s.cover_medium_url), COALESCE(EXCLUDED.cover_thumb_url, s.cover_thumb_url),
       COALESCE(EXCLUDED.play_url, s.play_url), s.raw_partial AND EXCLUDED.raw_partial,
       CASE WHEN s.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE s.raw END,
       LEAST(s.first_seen_run, EXCLUDED.first_seen_run), GREATEST(s.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertSVSongSnapshots
INSERT INTO shortvideo.song_snapshots AS s (song_id, run_id, usage_count)
SELECT r.song_id, @run_id, r.usage_count
FROM unnest(@song_id::text[], @usage_count::bigint[]) AS r(song_id, usage_count)
ON CONFLICT (song_id, run_id) DO UPDATE SET
    usage_count = COALESCE(EXCLUDED.usage_count, s.usage_count)
WHERE s.usage_count IS DISTINCT FROM COALESCE(EXCLUDED.usage_count, s.usage_count);

-- name: UpsertSVSongVideos
INSERT INTO shortvideo.song_videos AS l (song_id, video_id, first_seen_run, last_seen_run)
SELECT r.song_id, r.video_id, @run_id, @run_id
FROM unnest(@song_id::text[], @video_id::text[]) AS r(song_id, video_id)
ON CONFLICT (song_id, video_id) DO UPDATE SET
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run)
WHERE (l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertSVVideos
INSERT INTO shortvideo.videos AS v (video_id, author_unique_id, description, create_time, song_id,
    raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.video_id, r.author_unique_id, r.description, to_timestamp(NULLIF(r.create_time, 0)), r.song_id,
    r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@video_id::text[], @author_unique_id::text[], @description::text[], @create_time::bigint[], @song_id::text[], @raw_partial::boolean[], @raw::text[])
    AS r(video_id, author_unique_id, description, create_time, song_id, raw_partial, raw)
ON CONFLICT (video_id) DO UPDATE SET
    author_unique_id = COALESCE(EXCLUDED.author_unique_id, v.author_unique_id),
    description      = COALESCE(EXCLUDED.description, v.description),
    create_time      = COALESCE(EXCLUDED.create_time, v.create_time),
    song_id          = COALESCE(EXCLUDED.song_id, v.song_id),
    raw_partial      = v.raw_partial AND EXCLUDED.raw_partial,
    raw              = CASE WHEN v.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE v.raw END,
    first_seen_run   = LEAST(v.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run    = GREATEST(v.last_seen_run, EXCLUDED.last_seen_run),
    updated_at       = now()
WHERE (v.author_unique_id, v.description, v.create_time, v.song_id, v.raw_partial, v.raw,
       v.first_seen_run, v.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.author_unique_id, v.author_unique_id), COALESCE(EXCLUDED.description, v.description),
       COALESCE(EXCLUDED.create_time, v.create_time), COALESCE(EXCLUDED.song_id, v.song_id),
       v.raw_partial AND EXCLUDED.raw_partial,
       CASE WHEN v.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE v.raw END,
       LEAST(v.first_seen_run, EXCLUDED.first_seen_run), GREATEST(v.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertSVVideoSnapshots
INSERT INTO shortvideo.video_snapshots AS s (video_id, run_id, play_count, digg_count, comment_count, share_count)
SELECT r.video_id, @run_id, r.play_count, r.digg_count, r.comment_count, r.share_count
FROM unnest(@video_id::text[], @play_count::bigint[], @digg_count::bigint[], @comment_count::bigint[], @share_count::bigint[])
    AS r(video_id, play_count, digg_count, comment_count, share_count)
ON CONFLICT (video_id, run_id) DO UPDATE SET
    play_count    = COALESCE(EXCLUDED.play_count, s.play_count),
    digg_count    = COALESCE(EXCLUDED.digg_count, s.digg_count),
    comment_count = COALESCE(EXCLUDED.comment_count, s.comment_count),
    share_count   = COALESCE(EXCLUDED.share_count, s.share_count)
WHERE (s.play_count, s.digg_count, s.comment_count, s.share_count)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.play_count, s.play_count), COALESCE(EXCLUDED.digg_count, s.digg_count),
       COALESCE(EXCLUDED.comment_count, s.comment_count), COALESCE(EXCLUDED.share_count, s.share_count));
