package sinks

import "github.com/jackc/pgx/v5"

// SVUser is a short-video user, from a profile (Profile true: every field
// known) or from a follower/following entry (only handle, nickname, verified).
type SVUser struct {
	UniqueID  string
	UserID    *string
	SecUID    *string
	Nickname  *string
	AvatarURL *string
	Signature *string
	Verified  *bool
	Private   *bool
	Profile   bool
	Raw       []byte
}

// SVUserSnapshot is a user's counters as one run saw them.
type SVUserSnapshot struct {
	UniqueID       string
	FollowerCount  *int64
	FollowingCount *int64
	HeartCount     *int64
	VideoCount     *int64
	DiggCount      *int64
}

// SVFollow is an edge: Follower follows Followee.
type SVFollow struct {
	Follower string
	Followee string
	Raw      []byte
}

const upsertSVUsers = `
INSERT INTO shortvideo.users AS u (unique_id, user_id, sec_uid, nickname, avatar_url, signature,
    verified, private_account, profile_fetched, raw, first_seen_run, last_seen_run)
SELECT r.unique_id, r.user_id, r.sec_uid, r.nickname, r.avatar_url, r.signature,
    r.verified, r.private_account, r.profile_fetched, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::boolean[], $9::boolean[], $10::boolean[], $11::text[])
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
       LEAST(u.first_seen_run, EXCLUDED.first_seen_run), GREATEST(u.last_seen_run, EXCLUDED.last_seen_run))`

func writeSVUsers(batch *pgx.Batch, runID int64, rows []SVUser) {
	if len(rows) == 0 {
		return
	}
	// A profile row beats an entry row of the same user in one batch.
	rows = dedupe(rows, func(r SVUser) string { return r.UniqueID }, func(prev, next SVUser) SVUser {
		if prev.Profile && !next.Profile {
			return prev
		}
		return next
	})
	n := len(rows)
	ids, userIDs, secUIDs := make([]string, n), make([]*string, n), make([]*string, n)
	nicks, avatars, sigs := make([]*string, n), make([]*string, n), make([]*string, n)
	verified, private, profile, raws := make([]*bool, n), make([]*bool, n), make([]bool, n), make([]string, n)
	for i, r := range rows {
		ids[i], userIDs[i], secUIDs[i] = r.UniqueID, r.UserID, r.SecUID
		nicks[i], avatars[i], sigs[i] = r.Nickname, r.AvatarURL, r.Signature
		verified[i], private[i], profile[i], raws[i] = r.Verified, r.Private, r.Profile, string(r.Raw)
	}
	batch.Queue(upsertSVUsers, runID, ids, userIDs, secUIDs, nicks, avatars, sigs, verified, private, profile, raws)
}

const upsertSVSnapshots = `
INSERT INTO shortvideo.user_snapshots AS s (unique_id, run_id, follower_count, following_count,
    heart_count, video_count, digg_count)
SELECT r.unique_id, $1, r.follower_count, r.following_count, r.heart_count, r.video_count, r.digg_count
FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
    AS r(unique_id, follower_count, following_count, heart_count, video_count, digg_count)
ON CONFLICT (unique_id, run_id) DO UPDATE SET
    follower_count  = EXCLUDED.follower_count,
    following_count = EXCLUDED.following_count,
    heart_count     = EXCLUDED.heart_count,
    video_count     = EXCLUDED.video_count,
    digg_count      = EXCLUDED.digg_count
WHERE (s.follower_count, s.following_count, s.heart_count, s.video_count, s.digg_count)
  IS DISTINCT FROM
      (EXCLUDED.follower_count, EXCLUDED.following_count, EXCLUDED.heart_count, EXCLUDED.video_count, EXCLUDED.digg_count)`

func writeSVSnapshots(batch *pgx.Batch, runID int64, rows []SVUserSnapshot) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVUserSnapshot) string { return r.UniqueID }, nil)
	n := len(rows)
	ids := make([]string, n)
	fol, fing, heart, vid, digg := make([]*int64, n), make([]*int64, n), make([]*int64, n), make([]*int64, n), make([]*int64, n)
	for i, r := range rows {
		ids[i] = r.UniqueID
		fol[i], fing[i], heart[i], vid[i], digg[i] = r.FollowerCount, r.FollowingCount, r.HeartCount, r.VideoCount, r.DiggCount
	}
	batch.Queue(upsertSVSnapshots, runID, ids, fol, fing, heart, vid, digg)
}

const upsertSVFollows = `
INSERT INTO shortvideo.follows AS f (follower, followee, raw, first_seen_run, last_seen_run)
SELECT r.follower, r.followee, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[]) AS r(follower, followee, raw)
ON CONFLICT (follower, followee) DO UPDATE SET
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(f.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(f.last_seen_run, EXCLUDED.last_seen_run)
WHERE (f.raw, f.first_seen_run, f.last_seen_run)
  IS DISTINCT FROM
      (EXCLUDED.raw, LEAST(f.first_seen_run, EXCLUDED.first_seen_run), GREATEST(f.last_seen_run, EXCLUDED.last_seen_run))`

func writeSVFollows(batch *pgx.Batch, runID int64, rows []SVFollow) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVFollow) string { return r.Follower + "\x00" + r.Followee }, nil)
	n := len(rows)
	from, to, raws := make([]string, n), make([]string, n), make([]string, n)
	for i, r := range rows {
		from[i], to[i], raws[i] = r.Follower, r.Followee, string(r.Raw)
	}
	batch.Queue(upsertSVFollows, runID, from, to, raws)
}
