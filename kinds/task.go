package kinds

import "time"

// Task is a unit of work: one object, or one list walked page by page,
// and how far it got.
type Task struct {
	ID       int64
	RunID    int64
	Kind     string
	Key      string
	Params   map[string]string
	Depth    int
	MaxPages int
	Cursor   string
	Pages    int
	Items    int // items of the pages fetched so far (ranks continue from it)
	// RefreshAfter is the task's refresh_after window (0: always fetch).
	RefreshAfter time.Duration
}

// NewTask is a task to add to the frontier; (run, kind, key) dedupes it.
type NewTask struct {
	Kind     string
	Key      string
	Params   map[string]string
	Depth    int
	MaxPages int
	// RefreshAfter: see Task.RefreshAfter; set where the task is created
	// (refreshWindow), from its seed list or edge.
	RefreshAfter time.Duration
	// Credits is, for a content list carrying its counter (ParamCount),
	// the price of a page of it: the frontier leases such lists by the
	// counter's move per credit (crawl.tasks.lease_yield). 0: not one.
	Credits int
}

// Drops are a page's entries that were received but not stored, and why
// the last one was (see crawl.tasks.dropped).
type Drops struct {
	N      int
	Reason string
}
