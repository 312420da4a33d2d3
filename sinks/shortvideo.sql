-- Bulk upserts of shortvideo.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVUsers
INSERT INTO shortvideo.users AS u (unique_id, user_id, sec_uid, nickname, avatar_url, signature,
    verified, private_account, profile_fetched, raw, first_seen_run, last_seen_run)
SELECT r.unique_id, r.user_id, r.sec_uid, r.nickname, r.avatar_url, r.signature,
    r.verified, r.private_account, r.profile_fetched, r.raw::jsonb, @run_id, @run_id
FROM unnest(@unique_id::text[], @user_id::text[], @sec_uid::text[], @nickname::text[], @avatar_url::text[], @signature::text[],
    @verified::boolean[], @private_account::boolean[], @profile_fetched::boolean[], @raw::text[])
    AS r(unique_id, user_id, sec_uid, nickname, avatar_url, signature, verified, private_account, profile_fetched, raw)
-- from: NewestRunWins as=u key=unique_id set=user_id,sec_uid,nickname,avatar_url,signature,verified,private_account fill=all profile_fetched=yes

-- name: UpsertSVSnapshots
INSERT INTO shortvideo.user_snapshots AS s (unique_id, run_id, follower_count, following_count,
    heart_count, video_count, digg_count)
SELECT r.unique_id, @run_id, r.follower_count, r.following_count, r.heart_count, r.video_count, r.digg_count
FROM unnest(@unique_id::text[], @follower_count::bigint[], @following_count::bigint[], @heart_count::bigint[], @video_count::bigint[], @digg_count::bigint[])
    AS r(unique_id, follower_count, following_count, heart_count, video_count, digg_count)
-- from: RunSnapshot as=s key=unique_id,run_id set=follower_count,following_count,heart_count,video_count,digg_count

-- name: UpsertSVFollows
INSERT INTO shortvideo.follows AS f (follower, followee, raw, first_seen_run, last_seen_run)
SELECT r.follower, r.followee, r.raw::jsonb, @run_id, @run_id
FROM unnest(@follower::text[], @followee::text[], @raw::text[]) AS r(follower, followee, raw)
-- from: NewestRunWins as=f key=follower,followee set=raw updated_at=no
