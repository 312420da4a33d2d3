-- Bulk upserts of photosocial_posts.go (schema photosocial). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSPosts
INSERT INTO photosocial.posts AS p (code, post_id, url, owner_username, media_type, product_type, caption, taken_at, raw,
    first_seen_run, last_seen_run)
SELECT r.code, r.post_id, r.url, r.owner_username, r.media_type, r.product_type, r.caption, to_timestamp(NULLIF(r.taken_at, 0)),
    r.raw::jsonb, @run_id, @run_id
FROM unnest(@code::text[], @post_id::text[], @url::text[], @owner_username::text[], @media_type::integer[], @product_type::text[],
    @caption::text[], @taken_at::bigint[], @raw::text[])
    AS r(code, post_id, url, owner_username, media_type, product_type, caption, taken_at, raw)
ON CONFLICT (code) DO UPDATE SET
    post_id        = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.post_id, p.post_id) ELSE COALESCE(p.post_id, EXCLUDED.post_id) END,
    url            = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.url, p.url) ELSE COALESCE(p.url, EXCLUDED.url) END,
    owner_username = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.owner_username, p.owner_username) ELSE COALESCE(p.owner_username, EXCLUDED.owner_username) END,
    media_type     = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.media_type, p.media_type) ELSE COALESCE(p.media_type, EXCLUDED.media_type) END,
    product_type   = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.product_type, p.product_type) ELSE COALESCE(p.product_type, EXCLUDED.product_type) END,
    caption        = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.caption, p.caption) ELSE COALESCE(p.caption, EXCLUDED.caption) END,
    taken_at       = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN COALESCE(EXCLUDED.taken_at, p.taken_at) ELSE COALESCE(p.taken_at, EXCLUDED.taken_at) END,
    raw            = CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run THEN EXCLUDED.raw ELSE p.raw END,
    first_seen_run = LEAST(p.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(p.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= p.last_seen_run
    THEN (p.post_id, p.url, p.owner_username, p.media_type, p.product_type, p.caption, p.taken_at, p.raw, p.first_seen_run, p.last_seen_run)
      IS DISTINCT FROM
          (COALESCE(EXCLUDED.post_id, p.post_id), COALESCE(EXCLUDED.url, p.url), COALESCE(EXCLUDED.owner_username, p.owner_username),
           COALESCE(EXCLUDED.media_type, p.media_type), COALESCE(EXCLUDED.product_type, p.product_type), COALESCE(EXCLUDED.caption, p.caption),
           COALESCE(EXCLUDED.taken_at, p.taken_at), EXCLUDED.raw,
           LEAST(p.first_seen_run, EXCLUDED.first_seen_run), GREATEST(p.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (p.post_id, p.url, p.owner_username, p.media_type, p.product_type, p.caption, p.taken_at, p.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(p.post_id, EXCLUDED.post_id), COALESCE(p.url, EXCLUDED.url), COALESCE(p.owner_username, EXCLUDED.owner_username), COALESCE(p.media_type, EXCLUDED.media_type), COALESCE(p.product_type, EXCLUDED.product_type), COALESCE(p.caption, EXCLUDED.caption), COALESCE(p.taken_at, EXCLUDED.taken_at),
          LEAST(p.first_seen_run, EXCLUDED.first_seen_run)) END;

-- name: UpsertPSPostSnapshots
INSERT INTO photosocial.post_snapshots AS s (code, run_id, like_count, comment_count, play_count)
SELECT r.code, @run_id, r.like_count, r.comment_count, r.play_count
FROM unnest(@code::text[], @like_count::bigint[], @comment_count::bigint[], @play_count::bigint[]) AS r(code, like_count, comment_count, play_count)
ON CONFLICT (code, run_id) DO UPDATE SET
    like_count    = COALESCE(EXCLUDED.like_count, s.like_count),
    comment_count = COALESCE(EXCLUDED.comment_count, s.comment_count),
    play_count    = COALESCE(EXCLUDED.play_count, s.play_count)
WHERE (s.like_count, s.comment_count, s.play_count)
  IS DISTINCT FROM (COALESCE(EXCLUDED.like_count, s.like_count), COALESCE(EXCLUDED.comment_count, s.comment_count),
                    COALESCE(EXCLUDED.play_count, s.play_count));

-- name: UpsertPSProfilePosts
INSERT INTO photosocial.profile_posts AS l (username, code, first_seen_run, last_seen_run)
SELECT r.username, r.code, @run_id, @run_id
FROM unnest(@username::text[], @code::text[]) AS r(username, code)
ON CONFLICT (username, code) DO UPDATE SET
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run)
WHERE (l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSProfileReels
INSERT INTO photosocial.profile_reels AS l (username, reel_id, first_seen_run, last_seen_run)
SELECT r.username, r.reel_id, @run_id, @run_id
FROM unnest(@username::text[], @reel_id::text[]) AS r(username, reel_id)
ON CONFLICT (username, reel_id) DO UPDATE SET
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run)
WHERE (l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run));

-- name: UpsertPSProfileHighlights
INSERT INTO photosocial.profile_highlights AS h (username, highlight_id, position, title, cover_url, raw, first_seen_run, last_seen_run)
SELECT r.username, r.highlight_id, r.position, r.title, r.cover_url, r.raw::jsonb, @run_id, @run_id
FROM unnest(@username::text[], @highlight_id::text[], @position::integer[], @title::text[], @cover_url::text[], @raw::text[])
    AS r(username, highlight_id, position, title, cover_url, raw)
ON CONFLICT (username, highlight_id) DO UPDATE SET
    position       = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN EXCLUDED.position ELSE h.position END,
    title          = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN COALESCE(EXCLUDED.title, h.title) ELSE COALESCE(h.title, EXCLUDED.title) END,
    cover_url      = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN COALESCE(EXCLUDED.cover_url, h.cover_url) ELSE COALESCE(h.cover_url, EXCLUDED.cover_url) END,
    raw            = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN EXCLUDED.raw ELSE h.raw END,
    first_seen_run = LEAST(h.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(h.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run
    THEN (h.position, h.title, h.cover_url, h.raw, h.first_seen_run, h.last_seen_run)
      IS DISTINCT FROM
          (EXCLUDED.position, COALESCE(EXCLUDED.title, h.title), COALESCE(EXCLUDED.cover_url, h.cover_url), EXCLUDED.raw,
           LEAST(h.first_seen_run, EXCLUDED.first_seen_run), GREATEST(h.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (h.title, h.cover_url, h.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(h.title, EXCLUDED.title), COALESCE(h.cover_url, EXCLUDED.cover_url),
          LEAST(h.first_seen_run, EXCLUDED.first_seen_run)) END;
