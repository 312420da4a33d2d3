package sandbox

import (
	"maps"
	"time"
)

// Cache is the real preset's answer cache (cache_max_age) kept outside a
// server, so that the servers of successive world days share it, as the
// real service's cache outlives a night: an answer served fresh on day 3
// is one day old on day 4. Its clock is the world's: a server with
// Config.Cache stamps and ages entries at the start of its day
// (WorldEpoch + WorldTime days), so whether an answer is cached depends
// on the days alone, never on the wall clock. Safe for concurrent use.
type Cache struct{ c *answerCache }

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{c: newAnswerCache()} }

// Clone returns a copy that changes independently: a second timeline
// forked from this one (the same night run twice) starts from the same
// cache.
func (c *Cache) Clone() *Cache {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	return &Cache{c: &answerCache{m: maps.Clone(c.c.m)}}
}

func newAnswerCache() *answerCache { return &answerCache{m: map[string]time.Time{}} }

// worldDay is the clock of a shared cache: the start of the server's day.
func worldDay(day int64) func() time.Time {
	t := time.Unix(WorldEpoch+day*86400, 0).UTC()
	return func() time.Time { return t }
}

// cacheOf is the cache a real-preset server uses and its clock: shared
// (Config.Cache) on the world's day, else its own on clock.
func cacheOf(cfg Config, clock func() time.Time) (*answerCache, func() time.Time) {
	if cfg.Cache != nil {
		return cfg.Cache.c, worldDay(cfg.WorldTime)
	}
	return newAnswerCache(), clock
}
