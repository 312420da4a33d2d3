package sinks

import "github.com/jackc/pgx/v5"

// PSProfile is a photo-sharing account: from the profile endpoint (Profile
// true) or a user object seen elsewhere, e.g. a comment's author (Profile
// false: only username, maybe is_verified).
//
// Nil identity fields never erase stored values. The exposure fields
// (Category, Contact*) are the exception for a Profile row: the contract sends
// them as null when the account does not expose them, so a profile saying null
// clears what an earlier profile said; a non-Profile row never touches them.
type PSProfile struct {
	Username        string
	UserID          *string
	FullName        *string
	Biography       *string
	ProfilePicURL   *string
	Verified        *bool
	Private         *bool
	BusinessAccount *bool
	Category        *string // category_name
	ContactEmail    *string // public_email, else business_email
	ContactPhone    *string // public_phone_number, else business_phone_number
	ContactAddress  *string // business address as sent (text, or JSON as text)
	Profile         bool
	Raw             []byte
}

// PSProfileSnapshot is an account's counters as one run's profile fetch saw
// them.
type PSProfileSnapshot struct {
	Username       string
	FollowerCount  *int64 // edge_followed_by.count
	FollowingCount *int64 // edge_follow.count
	PostCount      *int64 // edge_owner_to_timeline_media.count
}

const upsertPSProfiles = `
INSERT INTO photosocial.profiles AS p (username, user_id, full_name, biography, profile_pic_url, is_verified,
    is_private, is_business_account, category_name, contact_email, contact_phone, contact_address,
    profile_fetched, raw, first_seen_run, last_seen_run)
SELECT r.username, r.user_id, r.full_name, r.biography, r.profile_pic_url, r.is_verified,
    r.is_private, r.is_business_account, r.category_name, r.contact_email, r.contact_phone, r.contact_address,
    r.profile_fetched, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::boolean[], $9::boolean[],
    $10::text[], $11::text[], $12::text[], $13::text[], $14::boolean[], $15::text[])
    AS r(username, user_id, full_name, biography, profile_pic_url, is_verified, is_private, is_business_account,
         category_name, contact_email, contact_phone, contact_address, profile_fetched, raw)
ON CONFLICT (username) DO UPDATE SET
    user_id             = COALESCE(EXCLUDED.user_id, p.user_id),
    full_name           = COALESCE(EXCLUDED.full_name, p.full_name),
    biography           = COALESCE(EXCLUDED.biography, p.biography),
    profile_pic_url     = COALESCE(EXCLUDED.profile_pic_url, p.profile_pic_url),
    is_verified         = COALESCE(EXCLUDED.is_verified, p.is_verified),
    is_private          = COALESCE(EXCLUDED.is_private, p.is_private),
    is_business_account = COALESCE(EXCLUDED.is_business_account, p.is_business_account),
    category_name       = CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.category_name ELSE p.category_name END,
    contact_email       = CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_email ELSE p.contact_email END,
    contact_phone       = CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_phone ELSE p.contact_phone END,
    contact_address     = CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_address ELSE p.contact_address END,
    profile_fetched     = p.profile_fetched OR EXCLUDED.profile_fetched,
    raw                 = CASE WHEN EXCLUDED.profile_fetched OR NOT p.profile_fetched THEN EXCLUDED.raw ELSE p.raw END,
    first_seen_run      = LEAST(p.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run       = GREATEST(p.last_seen_run, EXCLUDED.last_seen_run),
    updated_at          = now()
WHERE (p.user_id, p.full_name, p.biography, p.profile_pic_url, p.is_verified, p.is_private, p.is_business_account,
       p.category_name, p.contact_email, p.contact_phone, p.contact_address, p.profile_fetched, p.raw,
       p.first_seen_run, p.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.user_id, p.user_id), COALESCE(EXCLUDED.full_name, p.full_name),
       COALESCE(EXCLUDED.biography, p.biography), COALESCE(EXCLUDED.profile_pic_url, p.profile_pic_url),
       COALESCE(EXCLUDED.is_verified, p.is_verified), COALESCE(EXCLUDED.is_private, p.is_private),
       COALESCE(EXCLUDED.is_business_account, p.is_business_account),
       CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.category_name ELSE p.category_name END,
       CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_email ELSE p.contact_email END,
       CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_phone ELSE p.contact_phone END,
       CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_address ELSE p.contact_address END,
       p.profile_fetched OR EXCLUDED.profile_fetched,
       CASE WHEN EXCLUDED.profile_fetched OR NOT p.profile_fetched THEN EXCLUDED.raw ELSE p.raw END,
       LEAST(p.first_seen_run, EXCLUDED.first_seen_run), GREATEST(p.last_seen_run, EXCLUDED.last_seen_run))`

func writePSProfiles(batch *pgx.Batch, runID int64, rows []PSProfile) {
	if len(rows) == 0 {
		return
	}
	// A profile row beats a user object of the same account in one batch.
	rows = dedupe(rows, func(r PSProfile) string { return r.Username }, func(prev, next PSProfile) PSProfile {
		if prev.Profile && !next.Profile {
			return prev
		}
		return next
	})
	n := len(rows)
	names, ids, fullNames, bios, pics := make([]string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	verified, private, business := make([]*bool, n), make([]*bool, n), make([]*bool, n)
	categories, emails, phones, addresses := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	profile, raws := make([]bool, n), make([]string, n)
	for i, r := range rows {
		names[i], ids[i], fullNames[i], bios[i], pics[i] = r.Username, r.UserID, r.FullName, r.Biography, r.ProfilePicURL
		verified[i], private[i], business[i] = r.Verified, r.Private, r.BusinessAccount
		categories[i], emails[i], phones[i], addresses[i] = r.Category, r.ContactEmail, r.ContactPhone, r.ContactAddress
		profile[i], raws[i] = r.Profile, string(r.Raw)
	}
	batch.Queue(upsertPSProfiles, runID, names, ids, fullNames, bios, pics, verified, private, business,
		categories, emails, phones, addresses, profile, raws)
}

const upsertPSProfileSnapshots = `
INSERT INTO photosocial.profile_snapshots AS s (username, run_id, follower_count, following_count, post_count)
SELECT r.username, $1, r.follower_count, r.following_count, r.post_count
FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[]) AS r(username, follower_count, following_count, post_count)
ON CONFLICT (username, run_id) DO UPDATE SET
    follower_count  = COALESCE(EXCLUDED.follower_count, s.follower_count),
    following_count = COALESCE(EXCLUDED.following_count, s.following_count),
    post_count      = COALESCE(EXCLUDED.post_count, s.post_count)
WHERE (s.follower_count, s.following_count, s.post_count)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.follower_count, s.follower_count), COALESCE(EXCLUDED.following_count, s.following_count),
       COALESCE(EXCLUDED.post_count, s.post_count))`

func writePSProfileSnapshots(batch *pgx.Batch, runID int64, rows []PSProfileSnapshot) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSProfileSnapshot) string { return r.Username }, nil)
	n := len(rows)
	names, followers, following, posts := make([]string, n), make([]*int64, n), make([]*int64, n), make([]*int64, n)
	for i, r := range rows {
		names[i], followers[i], following[i], posts[i] = r.Username, r.FollowerCount, r.FollowingCount, r.PostCount
	}
	batch.Queue(upsertPSProfileSnapshots, runID, names, followers, following, posts)
}

// PSEmbed is the embed markup of a profile, by the handle asked for.
type PSEmbed struct {
	Username string
	HTML     *string
	Raw      []byte
}

const upsertPSEmbeds = `
INSERT INTO photosocial.embeds AS e (username, html, raw, first_seen_run, last_seen_run)
SELECT r.username, r.html, r.raw::jsonb, $1, $1
FROM unnest($2::text[], $3::text[], $4::text[]) AS r(username, html, raw)
ON CONFLICT (username) DO UPDATE SET
    html           = COALESCE(EXCLUDED.html, e.html),
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(e.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(e.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (e.html, e.raw, e.first_seen_run, e.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.html, e.html), EXCLUDED.raw,
       LEAST(e.first_seen_run, EXCLUDED.first_seen_run), GREATEST(e.last_seen_run, EXCLUDED.last_seen_run))`

func writePSEmbeds(batch *pgx.Batch, runID int64, rows []PSEmbed) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r PSEmbed) string { return r.Username }, nil)
	n := len(rows)
	names, html, raws := make([]string, n), make([]*string, n), make([]string, n)
	for i, r := range rows {
		names[i], html[i], raws[i] = r.Username, r.HTML, string(r.Raw)
	}
	batch.Queue(upsertPSEmbeds, runID, names, html, raws)
}
