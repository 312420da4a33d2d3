-- Bulk upserts of shortvideo_rankings.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

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
