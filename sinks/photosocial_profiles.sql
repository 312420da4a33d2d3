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
ON CONFLICT (username) DO UPDATE SET
    user_id             = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.user_id, p.user_id) ELSE COALESCE(p.user_id, EXCLUDED.user_id) END,
    full_name           = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.full_name, p.full_name) ELSE COALESCE(p.full_name, EXCLUDED.full_name) END,
    biography           = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.biography, p.biography) ELSE COALESCE(p.biography, EXCLUDED.biography) END,
    profile_pic_url     = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.profile_pic_url, p.profile_pic_url) ELSE COALESCE(p.profile_pic_url, EXCLUDED.profile_pic_url) END,
    is_verified         = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.is_verified, p.is_verified) ELSE COALESCE(p.is_verified, EXCLUDED.is_verified) END,
    is_private          = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.is_private, p.is_private) ELSE COALESCE(p.is_private, EXCLUDED.is_private) END,
    is_business_account = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.is_business_account, p.is_business_account) ELSE COALESCE(p.is_business_account, EXCLUDED.is_business_account) END,
    category_name       = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.category_name ELSE p.category_name END ELSE p.category_name END,
    contact_email       = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_email ELSE p.contact_email END ELSE p.contact_email END,
    contact_phone       = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_phone ELSE p.contact_phone END ELSE p.contact_phone END,
    contact_address     = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.contact_address ELSE p.contact_address END ELSE p.contact_address END,
    profile_fetched     = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN p.profile_fetched OR EXCLUDED.profile_fetched ELSE p.profile_fetched END,
    raw                 = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN CASE WHEN EXCLUDED.profile_fetched OR NOT p.profile_fetched THEN EXCLUDED.raw ELSE p.raw END ELSE p.raw END,
    first_seen_run      = LEAST(p.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run       = GREATEST(p.last_seen_run, EXCLUDED.last_seen_run),
    updated_at          = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run
    THEN (p.user_id, p.full_name, p.biography, p.profile_pic_url, p.is_verified, p.is_private, p.is_business_account,
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
          LEAST(p.first_seen_run, EXCLUDED.first_seen_run), GREATEST(p.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (p.user_id, p.full_name, p.biography, p.profile_pic_url, p.is_verified, p.is_private,
          p.is_business_account, p.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(p.user_id, EXCLUDED.user_id), COALESCE(p.full_name, EXCLUDED.full_name),
          COALESCE(p.biography, EXCLUDED.biography), COALESCE(p.profile_pic_url, EXCLUDED.profile_pic_url),
          COALESCE(p.is_verified, EXCLUDED.is_verified), COALESCE(p.is_private, EXCLUDED.is_private),
          COALESCE(p.is_business_account, EXCLUDED.is_business_account),
          LEAST(p.first_seen_run, EXCLUDED.first_seen_run)) END;

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
