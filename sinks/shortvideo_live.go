package sinks

import "github.com/jackc/pgx/v5"

// SVLiveStatus is the live status of a handle as one run asked for it. Asking
// again in the same run replaces the run's row: the latest answer wins.
type SVLiveStatus struct {
	UniqueID    string // the handle asked for
	IsLive      *bool
	Title       *string
	ViewerCount *int64
	StartTime   *int64 // unix seconds; 0 (not live) is stored as NULL
	Raw         []byte
}

const upsertSVLiveStatuses = `
INSERT INTO shortvideo.live_status AS l (unique_id, run_id, is_live, title, viewer_count, start_time, raw)
SELECT r.unique_id, $1, r.is_live, r.title, r.viewer_count, to_timestamp(NULLIF(r.start_time, 0)), r.raw::jsonb
FROM unnest($2::text[], $3::boolean[], $4::text[], $5::bigint[], $6::bigint[], $7::text[])
    AS r(unique_id, is_live, title, viewer_count, start_time, raw)
ON CONFLICT (unique_id, run_id) DO UPDATE SET
    is_live      = EXCLUDED.is_live,
    title        = EXCLUDED.title,
    viewer_count = EXCLUDED.viewer_count,
    start_time   = EXCLUDED.start_time,
    raw          = EXCLUDED.raw
WHERE (l.is_live, l.title, l.viewer_count, l.start_time, l.raw)
  IS DISTINCT FROM (EXCLUDED.is_live, EXCLUDED.title, EXCLUDED.viewer_count, EXCLUDED.start_time, EXCLUDED.raw)`

func writeSVLiveStatuses(batch *pgx.Batch, runID int64, rows []SVLiveStatus) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVLiveStatus) string { return r.UniqueID }, nil)
	n := len(rows)
	ids, live, titles, viewers, starts, raws := make([]string, n), make([]*bool, n), make([]*string, n), make([]*int64, n), make([]*int64, n), make([]string, n)
	for i, r := range rows {
		ids[i], live[i], titles[i], viewers[i], starts[i], raws[i] = r.UniqueID, r.IsLive, r.Title, r.ViewerCount, r.StartTime, string(r.Raw)
	}
	batch.Queue(upsertSVLiveStatuses, runID, ids, live, titles, viewers, starts, raws)
}
