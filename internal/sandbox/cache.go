package sandbox

import (
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox/real"
)

// Cache is the real preset's answer cache (cache_max_age) kept outside a
// server, so that the servers of successive world days share it, as the
// real service's cache outlives a night: an answer served fresh on day 3
// is one day old on day 4. Its clock is the world's: a server with
// Config.Cache stamps and ages entries at the start of its day
// (WorldEpoch + WorldTime days), so whether an answer is cached depends
// on the days alone, never on the wall clock. Safe for concurrent use;
// Clone returns a copy that changes independently (a second timeline
// forked from this one, the same night run twice, starts from the same
// cache).
type Cache = real.Cache

// NewCache returns an empty cache.
func NewCache() *Cache { return real.NewCache() }

// cacheClock is the clock of the real preset's cache: the start of the
// world's day when the cache is shared (Config.Cache), else the server's.
func cacheClock(cfg Config) func() time.Time {
	if cfg.Cache == nil {
		return cfg.now
	}
	t := time.Unix(WorldEpoch+cfg.WorldTime*86400, 0).UTC()
	return func() time.Time { return t }
}
