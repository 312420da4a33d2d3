package sandbox

import "testing"

// TestSharedCache: servers of successive world days sharing a Cache serve
// an answer from it while its age in world days is within cache_max_age,
// whatever the wall clock; a clone goes its own way.
func TestSharedCache(t *testing.T) {
	t.Parallel()
	cache := NewCache()
	day := func(d int64, c *Cache) *testBundle { return realSetup(t, Config{WorldTime: d, Cache: c}) }
	const q = "handle=alice&cache_max_age=1d"
	d3 := day(3, cache)
	if m := d3.rgetOK(t, "/v1/tiktok/profile", q); m["cached"] != nil {
		t.Fatalf("day 3, first answer cached: %v", m)
	}
	if m := d3.rgetOK(t, "/v1/tiktok/profile", q); m["cached"] != true || jsonText(m["cached_at"]) != isoTime(WorldEpoch+3*86400) {
		t.Errorf("day 3, second answer: %v", m)
	}
	fork := cache.Clone()
	if m := day(4, cache).rgetOK(t, "/v1/tiktok/profile", q); m["cached"] != true {
		t.Errorf("day 4, one day old, not served from the cache: %v", m)
	}
	d5 := day(5, cache)
	if m := d5.rgetOK(t, "/v1/tiktok/profile", q); m["cached"] != nil {
		t.Errorf("day 5, two days old, served from the cache: %v", m)
	}
	if m := d5.rgetOK(t, "/v1/tiktok/profile", "handle=alice&cache_max_age=3d"); m["cached"] != true {
		t.Errorf("day 5 with 3d: %v", m)
	}
	if u := d5.srv.Usage(testKey); u.Billable != 1 || u.Credits != 1 {
		t.Errorf("day 5 usage %+v", u)
	}
	// The fork still has alice fetched on day 3 only.
	if m := day(5, fork).rgetOK(t, "/v1/tiktok/profile", "handle=alice&cache_max_age=3d"); m["cached"] != true || jsonText(m["cached_at"]) != isoTime(WorldEpoch+3*86400) {
		t.Errorf("fork on day 5: %v", m)
	}
	if m := day(5, fork).rgetOK(t, "/v1/tiktok/profile", q); m["cached"] != nil {
		t.Errorf("fork on day 5 with 1d: %v", m)
	}
}
