-- Bulk upserts of shortvideo_hashtags.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVHashtags
INSERT INTO shortvideo.hashtags AS h (name, raw_partial, raw, first_seen_run, last_seen_run)
SELECT r.name, r.raw_partial, r.raw::jsonb, @run_id, @run_id
FROM unnest(@name::text[], @raw_partial::boolean[], @raw::text[]) AS r(name, raw_partial, raw)
ON CONFLICT (name) DO UPDATE SET
    raw_partial    = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN h.raw_partial AND EXCLUDED.raw_partial ELSE h.raw_partial END,
    raw            = CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run THEN CASE WHEN h.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE h.raw END ELSE h.raw END,
    first_seen_run = LEAST(h.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(h.last_seen_run, EXCLUDED.last_seen_run),
    updated_at     = now()
WHERE CASE WHEN EXCLUDED.last_seen_run >= h.last_seen_run
    THEN (h.raw_partial, h.raw, h.first_seen_run, h.last_seen_run)
         IS DISTINCT FROM
         (h.raw_partial AND EXCLUDED.raw_partial,
          CASE WHEN h.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE h.raw END,
          LEAST(h.first_seen_run, EXCLUDED.first_seen_run), GREATEST(h.last_seen_run, EXCLUDED.last_seen_run))
    -- An older run (a replay) changes only first_seen_run.
    ELSE h.first_seen_run IS DISTINCT FROM LEAST(h.first_seen_run, EXCLUDED.first_seen_run) END;

-- name: UpsertSVHashtagSnapshots
INSERT INTO shortvideo.hashtag_snapshots AS s (name, run_id, view_count, video_count, growth)
SELECT r.name, @run_id, r.view_count, r.video_count, NULLIF(NULLIF(r.growth, ''), 'null')::jsonb
FROM unnest(@name::text[], @view_count::bigint[], @video_count::bigint[], @growth::text[]) AS r(name, view_count, video_count, growth)
ON CONFLICT (name, run_id) DO UPDATE SET
    view_count  = COALESCE(EXCLUDED.view_count, s.view_count),
    video_count = COALESCE(EXCLUDED.video_count, s.video_count),
    growth      = COALESCE(EXCLUDED.growth, s.growth)
WHERE (s.view_count, s.video_count, s.growth)
  IS DISTINCT FROM
      (COALESCE(EXCLUDED.view_count, s.view_count), COALESCE(EXCLUDED.video_count, s.video_count),
       COALESCE(EXCLUDED.growth, s.growth));

-- name: UpsertSVVideoHashtags
INSERT INTO shortvideo.video_hashtags AS l (video_id, name, first_seen_run, last_seen_run)
SELECT r.video_id, r.name, @run_id, @run_id
FROM unnest(@video_id::text[], @name::text[]) AS r(video_id, name)
ON CONFLICT (video_id, name) DO UPDATE SET
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run)
WHERE (l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run));
