package runs

import (
	"reflect"
	"testing"
)

// Two processes sampling every second, the second joining at 1s: their
// increases add up per interval, pages spread over the span they cover,
// 429s counted in the interval where they were recorded.
func TestReportTimelineAddsProcesses(t *testing.T) {
	t.Parallel()
	s := []reportSample{
		{owner: "a", at: 1, procStart: 0, pages: 10},
		{owner: "a", at: 2, procStart: 0, pages: 30, r429: 1},
		{owner: "b", at: 2, procStart: 1, pages: 5},
		{owner: "a", at: 3, procStart: 0, pages: 30, r429: 1},
		{owner: "b", at: 3, procStart: 1, pages: 25, r429: 3},
	}
	want := []TimelinePoint{{At: 1, PagesPerSec: 10}, {At: 2, PagesPerSec: 25, RateLimited: 1}, {At: 3, PagesPerSec: 20, RateLimited: 3}}
	if got := reportTimeline(s); !reflect.DeepEqual(got, want) {
		t.Errorf("timeline = %+v, want %+v", got, want)
	}
	// Requests in flight add up as pages do; the limits of the processes
	// add up; the moves of the limits count in the interval they were
	// recorded, as their increase over the process's previous sample.
	f := func(v float64) *float64 { return &v }
	l := func(v int64) *int64 { return &v }
	s[0].inFlight, s[0].limit, s[0].moves = f(8), l(16), map[string]int64{"start up": 1}
	s[1].inFlight, s[1].limit, s[1].moves = f(16), l(32), map[string]int64{"start up": 2}
	s[2].inFlight, s[2].limit = f(4), l(8)
	s[3].inFlight, s[3].limit, s[3].moves = f(12), l(24), map[string]int64{"start up": 2, "latency down": 1}
	s[4].inFlight, s[4].limit, s[4].moves = f(6), l(8), map[string]int64{"errors down": 1}
	want = []TimelinePoint{
		{At: 1, PagesPerSec: 10, InFlight: 8, ConcurrencyLimit: 16, Moves: map[string]int64{"start up": 1}},
		{At: 2, PagesPerSec: 25, RateLimited: 1, InFlight: 20, ConcurrencyLimit: 40, Moves: map[string]int64{"start up": 1}},
		{At: 3, PagesPerSec: 20, RateLimited: 3, InFlight: 18, ConcurrencyLimit: 32, Moves: map[string]int64{"latency down": 1, "errors down": 1}},
	}
	if got := reportTimeline(s); !reflect.DeepEqual(got, want) {
		t.Errorf("timeline with the limits = %+v, want %+v", got, want)
	}
	if got := reportTimeline(nil); len(got) != 0 || got == nil {
		t.Errorf("no samples: %#v, want an empty list", got)
	}
}
