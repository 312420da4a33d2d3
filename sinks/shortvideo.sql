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
ON CONFLICT (unique_id) DO UPDATE SET
    user_id         = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN COALESCE(EXCLUDED.user_id, u.user_id) ELSE COALESCE(u.user_id, EXCLUDED.user_id) END,
    sec_uid         = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN COALESCE(EXCLUDED.sec_uid, u.sec_uid) ELSE COALESCE(u.sec_uid, EXCLUDED.sec_uid) END,
    nickname        = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN COALESCE(EXCLUDED.nickname, u.nickname) ELSE COALESCE(u.nickname, EXCLUDED.nickname) END,
    avatar_url      = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN COALESCE(EXCLUDED.avatar_url, u.avatar_url) ELSE COALESCE(u.avatar_url, EXCLUDED.avatar_url) END,
    signature       = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN COALESCE(EXCLUDED.signature, u.signature) ELSE COALESCE(u.signature, EXCLUDED.signature) END,
    verified        = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN COALESCE(EXCLUDED.verified, u.verified) ELSE COALESCE(u.verified, EXCLUDED.verified) END,
    private_account = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN COALESCE(EXCLUDED.private_account, u.private_account) ELSE COALESCE(u.private_account, EXCLUDED.private_account) END,
    profile_fetched = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN u.profile_fetched OR EXCLUDED.profile_fetched ELSE u.profile_fetched END,
    raw             = CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run THEN CASE WHEN EXCLUDED.profile_fetched OR NOT u.profile_fetched THEN EXCLUDED.raw ELSE u.raw END ELSE u.raw END,
    first_seen_run  = LEAST(u.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run   = GREATEST(u.last_seen_run, EXCLUDED.last_seen_run),
    updated_at      = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= u.last_seen_run
    THEN (u.user_id, u.sec_uid, u.nickname, u.avatar_url, u.signature, u.verified, u.private_account,
          u.profile_fetched, u.raw, u.first_seen_run, u.last_seen_run)
         IS DISTINCT FROM
         (COALESCE(EXCLUDED.user_id, u.user_id), COALESCE(EXCLUDED.sec_uid, u.sec_uid),
          COALESCE(EXCLUDED.nickname, u.nickname), COALESCE(EXCLUDED.avatar_url, u.avatar_url),
          COALESCE(EXCLUDED.signature, u.signature), COALESCE(EXCLUDED.verified, u.verified),
          COALESCE(EXCLUDED.private_account, u.private_account), u.profile_fetched OR EXCLUDED.profile_fetched,
          CASE WHEN EXCLUDED.profile_fetched OR NOT u.profile_fetched THEN EXCLUDED.raw ELSE u.raw END,
          LEAST(u.first_seen_run, EXCLUDED.first_seen_run), GREATEST(u.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (u.user_id, u.sec_uid, u.nickname, u.avatar_url, u.signature, u.verified, u.private_account,
          u.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(u.user_id, EXCLUDED.user_id), COALESCE(u.sec_uid, EXCLUDED.sec_uid),
          COALESCE(u.nickname, EXCLUDED.nickname), COALESCE(u.avatar_url, EXCLUDED.avatar_url),
          COALESCE(u.signature, EXCLUDED.signature), COALESCE(u.verified, EXCLUDED.verified),
          COALESCE(u.private_account, EXCLUDED.private_account),
          LEAST(u.first_seen_run, EXCLUDED.first_seen_run)) END;

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
