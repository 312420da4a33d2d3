package sinks

// SVUser is a short-video user, from a profile (Profile true: every field
// known) or from a follower/following entry (only handle, nickname, verified).
type SVUser struct {
	UniqueID  string  `db:"unique_id"`
	UserID    *string `db:"user_id"`
	SecUID    *string `db:"sec_uid"`
	Nickname  *string `db:"nickname"`
	AvatarURL *string `db:"avatar_url"`
	Signature *string `db:"signature"`
	Verified  *bool   `db:"verified"`
	Private   *bool   `db:"private_account"`
	Profile   bool    `db:"profile_fetched"`
	Raw       []byte  `db:"raw"`
}

// SVUserSnapshot is a user's counters as one run saw them.
type SVUserSnapshot struct {
	UniqueID       string `db:"unique_id"`
	FollowerCount  *int64 `db:"follower_count"`
	FollowingCount *int64 `db:"following_count"`
	HeartCount     *int64 `db:"heart_count"`
	VideoCount     *int64 `db:"video_count"`
	DiggCount      *int64 `db:"digg_count"`
}

// SVFollow is an edge: Follower follows Followee.
type SVFollow struct {
	Follower string `db:"follower"`
	Followee string `db:"followee"`
	Raw      []byte `db:"raw"`
}

// A profile row beats an entry row of the same user in one batch.
var _ = upsert("shortvideo.users", 101, "UpsertSVUsers", func(r SVUser) string { return r.UniqueID }, preferFull(func(r SVUser) bool { return !r.Profile }))

var _ = upsert("shortvideo.user_snapshots", 111, "UpsertSVSnapshots", func(r SVUserSnapshot) string { return r.UniqueID }, nil)

var _ = upsert("shortvideo.follows", 112, "UpsertSVFollows", func(r SVFollow) string { return r.Follower + "\x00" + r.Followee }, nil)
