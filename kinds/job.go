package kinds

import (
	"time"

	"github.com/socialcrawl/crawler/sources"
)

// Job is what the kinds read of a job file (package jobfile's Job): which
// expansion edges it turns on, the page limit of each list, and the
// refresh_after windows. Kinds know no more of a job.
type Job interface {
	// Edge is the expand section's edge of key, nil when it is off.
	Edge(key string) *Edge
	// ListPages is the page limit of lists along e, or of seed lists when
	// e is off (nil).
	ListPages(e *Edge) int
	// Window is the refresh_after window of the tasks of seed list key
	// ("seeds.shortvideo.profiles") or found along expand key
	// ("expand.follower_profiles"): the one the file sets there, else the
	// job's.
	Window(key string) time.Duration
	// SentAs is the name the upstream's dialect sends the contract's
	// parameter param of kind's endpoint under (param itself when the
	// dialect keeps it): follow lists are addressed by what their secUid
	// parameter becomes (secUid, handle or user_id).
	SentAs(kind, param string) string
	// Route is how the upstream's dialect reaches kind's endpoint: its
	// platform's web address (the URLs built for an answer that carries
	// none), whether it serves the endpoint at all.
	Route(kind string) sources.Route
}
