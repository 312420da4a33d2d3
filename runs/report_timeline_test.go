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
	if got := reportTimeline(nil); len(got) != 0 || got == nil {
		t.Errorf("no samples: %#v, want an empty list", got)
	}
}
