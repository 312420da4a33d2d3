-- Bulk upserts of shortvideo_live.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVLiveStatuses
INSERT INTO shortvideo.live_status AS l (unique_id, run_id, is_live, title, viewer_count, start_time, raw)
SELECT r.unique_id, @run_id, r.is_live, r.title, r.viewer_count, to_timestamp(NULLIF(r.start_time, 0)), r.raw::jsonb
FROM unnest(@unique_id::text[], @is_live::boolean[], @title::text[], @viewer_count::bigint[], @start_time::bigint[], @raw::text[])
    AS r(unique_id, is_live, title, viewer_count, start_time, raw)
ON CONFLICT (unique_id, run_id) DO UPDATE SET
    is_live      = EXCLUDED.is_live,
    title        = EXCLUDED.title,
    viewer_count = EXCLUDED.viewer_count,
    start_time   = EXCLUDED.start_time,
    raw          = EXCLUDED.raw
WHERE (l.is_live, l.title, l.viewer_count, l.start_time, l.raw)
  IS DISTINCT FROM (EXCLUDED.is_live, EXCLUDED.title, EXCLUDED.viewer_count, EXCLUDED.start_time, EXCLUDED.raw);
