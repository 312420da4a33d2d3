package sinks

// PSUser is a photo-sharing account, a row of photosocial.profiles
// (sources.PSProfile is the profile endpoint's answer): from that endpoint (Profile
// true) or a user object seen elsewhere, e.g. a comment's author (Profile
// false: only username, maybe is_verified).
//
// Nil identity fields never erase stored values. The exposure fields
// (Category, Contact*) are the exception for a Profile row: the contract sends
// them as null when the account does not expose them, so a profile saying null
// clears what an earlier profile said; a non-Profile row never touches them.
type PSUser struct {
	Username        string  `db:"username"`
	UserID          *string `db:"user_id"`
	FullName        *string `db:"full_name"`
	Biography       *string `db:"biography"`
	ProfilePicURL   *string `db:"profile_pic_url"`
	Verified        *bool   `db:"is_verified"`
	Private         *bool   `db:"is_private"`
	BusinessAccount *bool   `db:"is_business_account"`
	Category        *string `db:"category_name"`   // category_name
	ContactEmail    *string `db:"contact_email"`   // public_email, else business_email
	ContactPhone    *string `db:"contact_phone"`   // public_phone_number, else business_phone_number
	ContactAddress  *string `db:"contact_address"` // business address as sent (text, or JSON as text)
	Profile         bool    `db:"profile_fetched"`
	Raw             []byte  `db:"raw"`
}

// PSProfileSnapshot is an account's counters as one run's profile fetch saw
// them.
type PSProfileSnapshot struct {
	Username       string `db:"username"`
	FollowerCount  *int64 `db:"follower_count"`  // edge_followed_by.count
	FollowingCount *int64 `db:"following_count"` // edge_follow.count
	PostCount      *int64 `db:"post_count"`      // edge_owner_to_timeline_media.count
}

// A profile row beats a user object of the same account in one batch.
var _ = upsert("photosocial.profiles", 201, "UpsertPSProfiles", func(r PSUser) string { return r.Username }, preferFull(func(r PSUser) bool { return !r.Profile }))

var _ = upsert("photosocial.profile_snapshots", 211, "UpsertPSProfileSnapshots", func(r PSProfileSnapshot) string { return r.Username }, nil)

// PSEmbed is the embed markup of a profile, by the handle asked for.
type PSEmbed struct {
	Username string  `db:"username"`
	HTML     *string `db:"html"`
	Raw      []byte  `db:"raw"`
}

var _ = upsert("photosocial.embeds", 217, "UpsertPSEmbeds", func(r PSEmbed) string { return r.Username }, nil)
