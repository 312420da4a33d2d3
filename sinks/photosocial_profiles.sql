-- Bulk upserts of photosocial_profiles.go (schema photosocial). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSProfiles
INSERT INTO photosocial.profiles AS p (username, user_id, full_name, biography, profile_pic_url, is_verified,
    is_private, is_business_account, category_name, contact_email, contact_phone, contact_address,
    profile_fetched, raw, first_seen_run, last_seen_run)
SELECT r.username, r.user_id, r.full_name, r.biography, r.profile_pic_url, r.is_verified,
    r.is_private, r.is_business_account, r.category_name, r.contact_email, r.contact_phone, r.contact_address,
    r.profile_fetched, r.raw::jsonb, @run_id, @run_id
FROM unnest(@username::text[], @user_id::text[], @full_name::text[], @biography::text[], @profile_pic_url::text[], @is_verified::boolean[], @is_private::boolean[], @is_business_account::boolean[],
    @category_name::text[], @contact_email::text[], @contact_phone::text[], @contact_address::text[], @profile_fetched::boolean[], @raw::text[])
    AS r(username, user_id, full_name, biography, profile_pic_url, is_verified, is_private, is_business_account,
         category_name, contact_email, contact_phone, contact_address, profile_fetched, raw)
-- from: NewestRunWins as=p key=username set=user_id,full_name,biography,profile_pic_url,is_verified,is_private,is_business_account,category_name,contact_email,contact_phone,contact_address fill=user_id,full_name,biography,profile_pic_url,is_verified,is_private,is_business_account fetched=category_name,contact_email,contact_phone,contact_address profile_fetched=yes

-- name: UpsertPSProfileSnapshots
INSERT INTO photosocial.profile_snapshots AS s (username, run_id, follower_count, following_count, post_count)
SELECT r.username, @run_id, r.follower_count, r.following_count, r.post_count
FROM unnest(@username::text[], @follower_count::bigint[], @following_count::bigint[], @post_count::bigint[]) AS r(username, follower_count, following_count, post_count)
-- from: RunSnapshot as=s key=username,run_id set=follower_count,following_count,post_count fill=all

-- name: UpsertPSEmbeds
INSERT INTO photosocial.embeds AS e (username, html, raw, first_seen_run, last_seen_run)
SELECT r.username, r.html, r.raw::jsonb, @run_id, @run_id
FROM unnest(@username::text[], @html::text[], @raw::text[]) AS r(username, html, raw)
-- from: NewestRunWins as=e key=username set=html,raw fill=html
