-- Bulk upserts of the photosocial schema (package sinks). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSComments
INSERT INTO photosocial.comments AS c (comment_key, comment_id, post_code, post_url, username, text, created_at,
    like_count, child_comment_count, raw, first_seen_run, last_seen_run)
SELECT r.comment_key, r.comment_id, r.post_code, r.post_url, r.username, r.text,
    to_timestamp(NULLIF(r.created_at, 0)), r.like_count, r.child_comment_count, r.raw::jsonb, @run_id, @run_id
FROM unnest(@comment_key::text[], @comment_id::text[], @post_code::text[], @post_url::text[], @username::text[], @text::text[], @created_at::bigint[], @like_count::bigint[],
    @child_comment_count::bigint[], @raw::text[])
    AS r(comment_key, comment_id, post_code, post_url, username, text, created_at, like_count,
         child_comment_count, raw)
ON CONFLICT (comment_key) DO UPDATE SET
    comment_id          = COALESCE(EXCLUDED.comment_id, c.comment_id),
    post_url            = EXCLUDED.post_url,
    like_count          = COALESCE(EXCLUDED.like_count, c.like_count),
    child_comment_count = COALESCE(EXCLUDED.child_comment_count, c.child_comment_count),
    raw                 = EXCLUDED.raw,
    first_seen_run      = LEAST(c.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run       = GREATEST(c.last_seen_run, EXCLUDED.last_seen_run),
    updated_at          = now()
WHERE (c.comment_id, c.post_url, c.like_count, c.child_comment_count, c.raw, c.first_seen_run, c.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.comment_id, c.comment_id), EXCLUDED.post_url, COALESCE(EXCLUDED.like_count, c.like_count),
       COALESCE(EXCLUDED.child_comment_count, c.child_comment_count), EXCLUDED.raw,
       LEAST(c.first_seen_run, EXCLUDED.first_seen_run), GREATEST(c.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSHighlights
INSERT INTO photosocial.highlights AS h (highlight_id, title, media_count, owner_username, owner_verified, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.title, r.media_count, r.owner_username, r.owner_verified, r.raw::jsonb, @run_id, @run_id
FROM unnest(@highlight_id::text[], @title::text[], @media_count::bigint[], @owner_username::text[], @owner_verified::boolean[], @raw::text[])
    AS r(highlight_id, title, media_count, owner_username, owner_verified, raw)
ON CONFLICT (highlight_id) DO UPDATE SET
    title          = COALESCE(EXCLUDED.title, h.title),
    media_count    = COALESCE(EXCLUDED.media_count, h.media_count),
    owner_username = COALESCE(EXCLUDED.owner_username, h.owner_username),
    owner_verified = COALESCE(EXCLUDED.owner_verified, h.owner_verified),
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(h.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(h.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (h.title, h.media_count, h.owner_username, h.owner_verified, h.raw, h.first_seen_run, h.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.title, h.title), COALESCE(EXCLUDED.media_count, h.media_count),
       COALESCE(EXCLUDED.owner_username, h.owner_username), COALESCE(EXCLUDED.owner_verified, h.owner_verified),
       EXCLUDED.raw, LEAST(h.first_seen_run, EXCLUDED.first_seen_run), GREATEST(h.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSHighlightItems
-- An item is whatever the highlight holds at that position now: its columns
-- are replaced, not merged (an image that replaced a video has no video_url).
INSERT INTO photosocial.highlight_items AS i (highlight_id, position, item_id, media_type, video_url, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.position, r.item_id, r.media_type, r.video_url, r.raw::jsonb, @run_id, @run_id
FROM unnest(@highlight_id::text[], @position::integer[], @item_id::text[], @media_type::integer[], @video_url::text[], @raw::text[])
    AS r(highlight_id, position, item_id, media_type, video_url, raw)
ON CONFLICT (highlight_id, position) DO UPDATE SET
    item_id        = EXCLUDED.item_id,
    media_type     = EXCLUDED.media_type,
    video_url      = EXCLUDED.video_url,
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(i.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(i.last_seen_run, EXCLUDED.last_seen_run)
WHERE (i.item_id, i.media_type, i.video_url, i.raw, i.first_seen_run, i.last_seen_run)
  IS DISTINCT FROM
      (EXCLUDED.item_id, EXCLUDED.media_type, EXCLUDED.video_url, EXCLUDED.raw,
       LEAST(i.first_seen_run, EXCLUDED.first_seen_run), GREATEST(i.last_seen_run, EXCLUDED.last_seen_run));

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
       LEAST(p.first_seen_run, EXCLUDED.first_seen_run), GREATEST(p.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSProfileSnapshots
INSERT INTO photosocial.profile_snapshots AS s (username, run_id, follower_count, following_count, post_count)
SELECT r.username, @run_id, r.follower_count, r.following_count, r.post_count
FROM unnest(@username::text[], @follower_count::bigint[], @following_count::bigint[], @post_count::bigint[]) AS r(username, follower_count, following_count, post_count)
ON CONFLICT (username, run_id) DO UPDATE SET
    follower_count  = COALESCE(EXCLUDED.follower_count, s.follower_count),
    following_count = COALESCE(EXCLUDED.following_count, s.following_count),
    post_count      = COALESCE(EXCLUDED.post_count, s.post_count)
WHERE (s.follower_count, s.following_count, s.post_count)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.follower_count, s.follower_count), COALESCE(EXCLUDED.following_count, s.following_count),
       COALESCE(EXCLUDED.post_count, s.post_count));

-- name: UpsertPSEmbeds
INSERT INTO photosocial.embeds AS e (username, html, raw, first_seen_run, last_seen_run)
SELECT r.username, r.html, r.raw::jsonb, @run_id, @run_id
FROM unnest(@username::text[], @html::text[], @raw::text[]) AS r(username, html, raw)
ON CONFLICT (username) DO UPDATE SET
    html           = COALESCE(EXCLUDED.html, e.html),
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(e.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(e.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (e.html, e.raw, e.first_seen_run, e.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.html, e.html), EXCLUDED.raw,
       LEAST(e.first_seen_run, EXCLUDED.first_seen_run), GREATEST(e.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSReels
-- The code is set once (a stored NULL takes the first code sent). It is not
-- unique (migration 00008): a reel without a code, or one code under two
-- ids, must not fail the page.
INSERT INTO photosocial.reels AS l (reel_id, code, owner_username, caption, taken_at, raw, first_seen_run, last_seen_run)
SELECT r.reel_id, NULLIF(r.code, ''), r.owner_username, r.caption, to_timestamp(NULLIF(r.taken_at, 0)), r.raw::jsonb, @run_id, @run_id
FROM unnest(@reel_id::text[], @code::text[], @owner_username::text[], @caption::text[], @taken_at::bigint[], @raw::text[])
    AS r(reel_id, code, owner_username, caption, taken_at, raw)
ON CONFLICT (reel_id) DO UPDATE SET
    code           = COALESCE(l.code, EXCLUDED.code),
    owner_username = COALESCE(EXCLUDED.owner_username, l.owner_username),
    caption        = COALESCE(EXCLUDED.caption, l.caption),
    taken_at       = COALESCE(EXCLUDED.taken_at, l.taken_at),
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (l.code, l.owner_username, l.caption, l.taken_at, l.raw, l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(l.code, EXCLUDED.code), COALESCE(EXCLUDED.owner_username, l.owner_username), COALESCE(EXCLUDED.caption, l.caption),
       COALESCE(EXCLUDED.taken_at, l.taken_at), EXCLUDED.raw,
       LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSReelSnapshots
INSERT INTO photosocial.reel_snapshots AS s (reel_id, run_id, play_count, like_count)
SELECT r.reel_id, @run_id, r.play_count, r.like_count
FROM unnest(@reel_id::text[], @play_count::bigint[], @like_count::bigint[]) AS r(reel_id, play_count, like_count)
ON CONFLICT (reel_id, run_id) DO UPDATE SET
    play_count = COALESCE(EXCLUDED.play_count, s.play_count),
    like_count = COALESCE(EXCLUDED.like_count, s.like_count)
WHERE (s.play_count, s.like_count)
  IS DISTINCT FROM (COALESCE(EXCLUDED.play_count, s.play_count), COALESCE(EXCLUDED.like_count, s.like_count));

-- name: UpsertPSReelSearchResults
INSERT INTO photosocial.reel_search_results AS s (run_id, query_key, rank, reel_id)
SELECT @run_id, r.query_key, r.rank, r.reel_id
FROM unnest(@query_key::text[], @rank::integer[], @reel_id::text[]) AS r(query_key, rank, reel_id)
ON CONFLICT (run_id, query_key, rank) DO UPDATE SET
    reel_id = EXCLUDED.reel_id
WHERE s.reel_id IS DISTINCT FROM EXCLUDED.reel_id;

-- name: UpsertPSTranscripts
INSERT INTO photosocial.transcripts AS t (shortcode, entry_id, text, media_url, raw, first_seen_run, last_seen_run)
SELECT r.shortcode, r.entry_id, r.text, r.media_url, r.raw::jsonb, @run_id, @run_id
FROM unnest(@shortcode::text[], @entry_id::text[], @text::text[], @media_url::text[], @raw::text[]) AS r(shortcode, entry_id, text, media_url, raw)
ON CONFLICT (shortcode, entry_id) DO UPDATE SET
    text           = COALESCE(EXCLUDED.text, t.text),
    media_url      = EXCLUDED.media_url,
    raw            = EXCLUDED.raw,
    first_seen_run = LEAST(t.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(t.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE (t.text, t.media_url, t.raw, t.first_seen_run, t.last_seen_run)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.text, t.text), EXCLUDED.media_url, EXCLUDED.raw,
       LEAST(t.first_seen_run, EXCLUDED.first_seen_run), GREATEST(t.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSTranscriptChecks
INSERT INTO photosocial.transcript_checks AS c (shortcode, media_url, has_speech, entry_count,
    first_checked_run, last_checked_run)
SELECT r.shortcode, r.media_url, r.has_speech, r.entry_count, @run_id, @run_id
FROM unnest(@shortcode::text[], @media_url::text[], @has_speech::boolean[], @entry_count::integer[]) AS r(shortcode, media_url, has_speech, entry_count)
ON CONFLICT (shortcode) DO UPDATE SET
    media_url         = EXCLUDED.media_url,
    has_speech        = EXCLUDED.has_speech,
    entry_count       = EXCLUDED.entry_count,
    first_checked_run = LEAST(c.first_checked_run, EXCLUDED.first_checked_run),
    last_checked_run  = GREATEST(c.last_checked_run, EXCLUDED.last_checked_run),
    updated_at        = now()
WHERE (c.media_url, c.has_speech, c.entry_count, c.first_checked_run, c.last_checked_run)
  IS DISTINCT FROM
      (EXCLUDED.media_url, EXCLUDED.has_speech, EXCLUDED.entry_count,
       LEAST(c.first_checked_run, EXCLUDED.first_checked_run), GREATEST(c.last_checked_run, EXCLUDED.last_checked_run));
