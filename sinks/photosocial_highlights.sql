-- Bulk upserts of photosocial_highlights.go (schema photosocial). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSHighlights
INSERT INTO photosocial.highlights AS h (highlight_id, title, media_count, owner_username, owner_verified, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.title, r.media_count, r.owner_username, r.owner_verified, r.raw::jsonb, @run_id, @run_id
FROM unnest(@highlight_id::text[], @title::text[], @media_count::bigint[], @owner_username::text[], @owner_verified::boolean[], @raw::text[])
    AS r(highlight_id, title, media_count, owner_username, owner_verified, raw)
-- from: NewestRunWins as=h key=highlight_id set=title,media_count,owner_username,owner_verified,raw fill=title,media_count,owner_username,owner_verified

-- name: UpsertPSHighlightItems
-- An item is whatever the highlight holds at that position now: its columns
-- are replaced, not merged (an image that replaced a video has no video_url).
INSERT INTO photosocial.highlight_items AS i (highlight_id, position, item_id, media_type, video_url, raw,
    first_seen_run, last_seen_run)
SELECT r.highlight_id, r.position, r.item_id, r.media_type, r.video_url, r.raw::jsonb, @run_id, @run_id
FROM unnest(@highlight_id::text[], @position::integer[], @item_id::text[], @media_type::integer[], @video_url::text[], @raw::text[])
    AS r(highlight_id, position, item_id, media_type, video_url, raw)
-- from: NewestRunWins as=i key=highlight_id,position set=item_id,media_type,video_url,raw updated_at=no
