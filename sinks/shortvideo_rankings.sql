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
-- from: RunSnapshot as=s key=run_id,search_kind,query_key,rank set=result_type,video_id,unique_id,hashtag_name,song_id,raw

-- name: UpsertSVFeedEntries
INSERT INTO shortvideo.feed_entries AS f (run_id, feed, rank, video_id, raw)
SELECT @run_id, r.feed, r.rank, r.video_id, r.raw::jsonb
FROM unnest(@feed::text[], @rank::integer[], @video_id::text[], @raw::text[]) AS r(feed, rank, video_id, raw)
-- from: RunSnapshot as=f key=run_id,feed,rank set=video_id,raw

-- name: UpsertSVPopularCreators
INSERT INTO shortvideo.popular_creators AS c (run_id, rank, unique_id, follower_count, verified, raw)
SELECT @run_id, r.rank, r.unique_id, r.follower_count, r.verified, r.raw::jsonb
FROM unnest(@rank::integer[], @unique_id::text[], @follower_count::bigint[], @verified::boolean[], @raw::text[])
    AS r(rank, unique_id, follower_count, verified, raw)
-- from: RunSnapshot as=c key=run_id,rank set=unique_id,follower_count,verified,raw
