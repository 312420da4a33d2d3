package sinks

import (
	"github.com/jackc/pgx/v5"
)

// SVLiveStatus is the live status of a handle as one run asked for it. Asking
// again in the same run replaces the run's row: the latest answer wins.
type SVLiveStatus struct {
	UniqueID    string  `db:"unique_id"` // the handle asked for
	IsLive      *bool   `db:"is_live"`
	Title       *string `db:"title"`
	ViewerCount *int64  `db:"viewer_count"`
	StartTime   *int64  `db:"start_time"` // unix seconds; 0 (not live) is stored as NULL
	Raw         []byte  `db:"raw"`
}

var upsertSVLiveStatuses = prepare[SVLiveStatus]("UpsertSVLiveStatuses")

var _ = register("shortvideo.live_status", 120, writeSVLiveStatuses)

func writeSVLiveStatuses(batch *pgx.Batch, runID int64, rows []SVLiveStatus) {
	rows = dedupe(rows, func(r SVLiveStatus) string { return r.UniqueID }, nil)
	queue(batch, upsertSVLiveStatuses, runID, rows)
}
