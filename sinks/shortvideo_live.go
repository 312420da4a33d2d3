package sinks

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

var _ = upsert("shortvideo.live_status", 120, "UpsertSVLiveStatuses", func(r SVLiveStatus) string { return r.UniqueID }, nil)
