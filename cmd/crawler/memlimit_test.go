package main

import (
	"testing"

	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
)

// The soft memory limit follows the documented bound, 20 MB + 9 × the body
// budget + 34 KB a request in flight, never under 100 MiB: with thousands
// of requests in flight a fixed 100 MiB kept the collector running back
// to back (workload 21). GOMEMLIMIT wins.
func TestMemoryLimitFollowsRequestsInFlight(t *testing.T) {
	budget := sources.Config{}.BodyBudget()
	if budget != sources.MaxInflightBytesDefault {
		t.Fatalf("default body budget %d, want %d", budget, sources.MaxInflightBytesDefault)
	}
	for _, c := range []struct {
		inFlight int
		want     int64
	}{
		{0, 100 << 20},
		{16, 100 << 20},
		{2000, 20<<20 + 72<<20 + 2000*34<<10}, // about 166 MB
		{concurrency.HardCeiling, 20<<20 + 72<<20 + 4096*34<<10}, // 228 MiB: the most at the defaults
	} {
		if got := memoryLimit(budget, c.inFlight); got != c.want {
			t.Errorf("memoryLimit(%d, %d) = %d, want %d", budget, c.inFlight, got, c.want)
		}
	}
	// A larger body cap raises the budget, and the limit with it.
	if got, want := memoryLimit(sources.Config{MaxBodyBytes: 64 << 20}.BodyBudget(), 0), int64(20<<20+9*64<<20); got != want {
		t.Errorf("with a 64 MiB body cap: %d, want %d", got, want)
	}

	var set []int64
	env := &cliEnv{getenv: func(string) string { return "" }, setMemoryLimit: func(n int64) int64 { set = append(set, n); return 0 }}
	ml := newMemoryLimiter(env, sources.Config{})
	for _, st := range []concurrency.Status{
		{Limit: 16, InFlight: 3},
		{Limit: 16, InFlight: 16},     // unchanged: not set again
		{Limit: 2000, InFlight: 1500}, // the limit moved up: tasks wait for its slots
		{Limit: 1000, InFlight: 1800}, // cut: the slots still held count
		{Limit: 1000, InFlight: 900},  // drained
	} {
		ml.Progress(pipeline.Progress{Concurrency: st})
	}
	want := []int64{100 << 20, memoryLimit(budget, 2000), memoryLimit(budget, 1800), memoryLimit(budget, 1000)}
	if len(set) != len(want) {
		t.Fatalf("limits set %v, want %v", set, want)
	}
	for i := range want {
		if set[i] != want[i] {
			t.Errorf("limit %d set to %d, want %d", i, set[i], want[i])
		}
	}

	env.getenv = func(k string) string { return map[string]string{"GOMEMLIMIT": "300MiB"}[k] }
	if ml := newMemoryLimiter(env, sources.Config{}); ml != nil {
		t.Error("GOMEMLIMIT set, yet the run would move the limit")
	}
	if ml := newMemoryLimiter(&cliEnv{getenv: func(string) string { return "" }}, sources.Config{}); ml != nil {
		t.Error("no setMemoryLimit (a test's process), yet the run would move the limit")
	}
}
