-- Bulk upserts of photosocial_highlights.go (schema photosocial). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSHighlights
INSERT INTO photosocial.highlights AS h (highlight_id, title, media_count, owner_username, owner_verified, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.title, r.media_count, r.owner_username, r.owner_verified, r.raw::jsonb, @run_id, @run_id
FROM unnest(@highlight_id::text[], @title::text[], @media_count::bigint[], @owner_username::text[], @owner_verified::boolean[], @raw::text[])
    AS r(highlight_id, title, media_count, owner_username, owner_verified, raw)
ON CONFLICT (highlight_id) DO UPDATE SET
    title          = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN COALESCE(EXCLUDED.title, h.title) ELSE COALESCE(h.title, EXCLUDED.title) END,
    media_count    = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN COALESCE(EXCLUDED.media_count, h.media_count) ELSE COALESCE(h.media_count, EXCLUDED.media_count) END,
    owner_username = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN COALESCE(EXCLUDED.owner_username, h.owner_username) ELSE COALESCE(h.owner_username, EXCLUDED.owner_username) END,
    owner_verified = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN COALESCE(EXCLUDED.owner_verified, h.owner_verified) ELSE COALESCE(h.owner_verified, EXCLUDED.owner_verified) END,
    raw            = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN EXCLUDED.raw ELSE h.raw END,
    first_seen_run = LEAST(h.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(h.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run
    THEN (h.title, h.media_count, h.owner_username, h.owner_verified, h.raw, h.first_seen_run, h.last_seen_run)
         IS DISTINCT FROM
         (COALESCE(EXCLUDED.title, h.title), COALESCE(EXCLUDED.media_count, h.media_count),
          COALESCE(EXCLUDED.owner_username, h.owner_username), COALESCE(EXCLUDED.owner_verified, h.owner_verified),
          EXCLUDED.raw, LEAST(h.first_seen_run, EXCLUDED.first_seen_run), GREATEST(h.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (h.title, h.media_count, h.owner_username, h.owner_verified, h.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(h.title, EXCLUDED.title), COALESCE(h.media_count, EXCLUDED.media_count),
          COALESCE(h.owner_username, EXCLUDED.owner_username),
          COALESCE(h.owner_verified, EXCLUDED.owner_verified), LEAST(h.first_seen_run, EXCLUDED.first_seen_run)) END;

-- name: UpsertPSHighlightItems
-- An item is whatever the highlight holds at that position now: its columns
-- are replaced, not merged (an image that replaced a video has no video_url).
INSERT INTO photosocial.highlight_items AS i (highlight_id, position, item_id, media_type, video_url, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.position, r.item_id, r.media_type, r.video_url, r.raw::jsonb, @run_id, @run_id
FROM unnest(@highlight_id::text[], @position::integer[], @item_id::text[], @media_type::integer[], @video_url::text[], @raw::text[])
    AS r(highlight_id, position, item_id, media_type, video_url, raw)
ON CONFLICT (highlight_id, position) DO UPDATE SET
    item_id        = CASE WHEN EXCLUDED.last_seen_run >= i.last_seen_run THEN EXCLUDED.item_id ELSE i.item_id END,
    media_type     = CASE WHEN EXCLUDED.last_seen_run >= i.last_seen_run THEN EXCLUDED.media_type ELSE i.media_type END,
    video_url      = CASE WHEN EXCLUDED.last_seen_run >= i.last_seen_run THEN EXCLUDED.video_url ELSE i.video_url END,
    raw            = CASE WHEN EXCLUDED.last_seen_run >= i.last_seen_run THEN EXCLUDED.raw ELSE i.raw END,
    first_seen_run = LEAST(i.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(i.last_seen_run, EXCLUDED.last_seen_run)
WHERE CASE WHEN EXCLUDED.last_seen_run >= i.last_seen_run
    THEN (i.item_id, i.media_type, i.video_url, i.raw, i.first_seen_run, i.last_seen_run)
         IS DISTINCT FROM
         (EXCLUDED.item_id, EXCLUDED.media_type, EXCLUDED.video_url, EXCLUDED.raw,
          LEAST(i.first_seen_run, EXCLUDED.first_seen_run), GREATEST(i.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only first_seen_run.
    ELSE i.first_seen_run IS DISTINCT FROM LEAST(i.first_seen_run, EXCLUDED.first_seen_run) END;
