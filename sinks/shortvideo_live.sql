-- Bulk upserts of shortvideo_live.go (schema shortvideo). @run_id is the run
-- writing; every other parameter is a column of the row type, one array each.

-- name: UpsertSVLiveStatuses
INSERT INTO shortvideo.live_status AS l (unique_id, run_id, is_live, title, viewer_count, start_time, raw)
SELECT r.unique_id, @run_id, r.is_live, r.title, r.viewer_count, to_timestamp(NULLIF(r.start_time, 0)), r.raw::jsonb
FROM unnest(@unique_id::text[], @is_live::boolean[], @title::text[], @viewer_count::bigint[], @start_time::bigint[], @raw::text[])
    AS r(unique_id, is_live, title, viewer_count, start_time, raw)
-- from: RunSnapshot as=l key=unique_id,run_id set=is_live,title,viewer_count,start_time,raw
