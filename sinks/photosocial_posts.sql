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
-- from: NewestRunWins as=p key=code set=post_id,url,owner_username,media_type,product_type,caption,taken_at,raw fill=post_id,url,owner_username,media_type,product_type,caption,taken_at

-- name: UpsertPSPostSnapshots
INSERT INTO photosocial.post_snapshots AS s (code, run_id, like_count, comment_count, play_count)
SELECT r.code, @run_id, r.like_count, r.comment_count, r.play_count
FROM unnest(@code::text[], @like_count::bigint[], @comment_count::bigint[], @play_count::bigint[]) AS r(code, like_count, comment_count, play_count)
-- from: RunSnapshot as=s key=code,run_id set=like_count,comment_count,play_count fill=all

-- name: UpsertPSProfilePosts
-- from: ListEntry table=photosocial.profile_posts owner=username entry=code

-- name: UpsertPSProfileReels
-- from: ListEntry table=photosocial.profile_reels owner=username entry=reel_id

-- name: UpsertPSProfileHighlights
INSERT INTO photosocial.profile_highlights AS h (username, highlight_id, position, title, cover_url, raw, first_seen_run, last_seen_run)
SELECT r.username, r.highlight_id, r.position, r.title, r.cover_url, r.raw::jsonb, @run_id, @run_id
FROM unnest(@username::text[], @highlight_id::text[], @position::integer[], @title::text[], @cover_url::text[], @raw::text[])
    AS r(username, highlight_id, position, title, cover_url, raw)
-- from: NewestRunWins as=h key=username,highlight_id set=position,title,cover_url,raw fill=title,cover_url
