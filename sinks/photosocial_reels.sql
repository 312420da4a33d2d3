-- Bulk upserts of photosocial_reels.go (schema photosocial). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertPSReels
-- The code is set once (a stored NULL takes the first code sent). It is not
-- unique (migration 00008): a reel without a code, or one code under two
-- ids, must not fail the page.
INSERT INTO photosocial.reels AS l (reel_id, code, owner_username, caption, taken_at, raw, first_seen_run, last_seen_run)
SELECT r.reel_id, NULLIF(r.code, ''), r.owner_username, r.caption, to_timestamp(NULLIF(r.taken_at, 0)), r.raw::jsonb, @run_id, @run_id
FROM unnest(@reel_id::text[], @code::text[], @owner_username::text[], @caption::text[], @taken_at::bigint[], @raw::text[])
    AS r(reel_id, code, owner_username, caption, taken_at, raw)
ON CONFLICT (reel_id) DO UPDATE SET
    code           = CASE WHEN EXCLUDED.last_seen_run >= l.last_seen_run THEN COALESCE(l.code, EXCLUDED.code) ELSE l.code END,
    owner_username = CASE WHEN EXCLUDED.last_seen_run >= l.last_seen_run THEN COALESCE(EXCLUDED.owner_username, l.owner_username) ELSE COALESCE(l.owner_username, EXCLUDED.owner_username) END,
    caption        = CASE WHEN EXCLUDED.last_seen_run >= l.last_seen_run THEN COALESCE(EXCLUDED.caption, l.caption) ELSE COALESCE(l.caption, EXCLUDED.caption) END,
    taken_at       = CASE WHEN EXCLUDED.last_seen_run >= l.last_seen_run THEN COALESCE(EXCLUDED.taken_at, l.taken_at) ELSE COALESCE(l.taken_at, EXCLUDED.taken_at) END,
    raw            = CASE WHEN EXCLUDED.last_seen_run >= l.last_seen_run THEN EXCLUDED.raw ELSE l.raw END,
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= l.last_seen_run
    THEN (l.code, l.owner_username, l.caption, l.taken_at, l.raw, l.first_seen_run, l.last_seen_run)
         IS DISTINCT FROM
         (COALESCE(l.code, EXCLUDED.code), COALESCE(EXCLUDED.owner_username, l.owner_username), COALESCE(EXCLUDED.caption, l.caption),
          COALESCE(EXCLUDED.taken_at, l.taken_at), EXCLUDED.raw,
          LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only the NULLs it fills, and first_seen_run.
    ELSE (l.owner_username, l.caption, l.taken_at, l.first_seen_run)
         IS DISTINCT FROM
         (COALESCE(l.owner_username, EXCLUDED.owner_username), COALESCE(l.caption, EXCLUDED.caption),
          COALESCE(l.taken_at, EXCLUDED.taken_at), LEAST(l.first_seen_run, EXCLUDED.first_seen_run)) END;

-- name: UpsertPSReelSnapshots
INSERT INTO photosocial.reel_snapshots AS s (reel_id, run_id, play_count, like_count)
SELECT r.reel_id, @run_id, r.play_count, r.like_count
FROM unnest(@reel_id::text[], @play_count::bigint[], @like_count::bigint[]) AS r(reel_id, play_count, like_count)
-- from: RunSnapshot as=s key=reel_id,run_id set=play_count,like_count fill=all

-- name: UpsertPSReelSearchResults
INSERT INTO photosocial.reel_search_results AS s (run_id, query_key, rank, reel_id)
SELECT @run_id, r.query_key, r.rank, r.reel_id
FROM unnest(@query_key::text[], @rank::integer[], @reel_id::text[]) AS r(query_key, rank, reel_id)
-- from: RunSnapshot as=s key=run_id,query_key,rank set=reel_id
