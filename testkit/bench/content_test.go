package bench

import (
	"fmt"
	"testing"
)

// TestContentOracle: the oracle buys each creator's profile and video
// list, then only the lists that changed since it last walked them: down
// to the first known entry when entries were only added (pages of
// contentPageSize), whole when some were deleted; nothing on an unchanged
// night; and within a budget the most changes per credit first.
func TestContentOracle(t *testing.T) {
	ids := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return out
	}
	day0 := map[string][]string{"c/v1": ids("a", 25), "c/v2": ids("b", 30)}
	// Day 1: 12 new comments on v1 (at its head), one deleted from v2.
	day1 := map[string][]string{"c/v1": append(ids("n", 12), ids("a", 25)...), "c/v2": ids("b", 29)}
	tr := &contentTruth{handles: []string{"h"}, nights: 1, lists: []map[string][]string{day0, day1},
		videos: []map[string][]string{{"h": {"v1", "v2"}}, {"h": {"v1", "v2"}}}, kind: map[string]string{}}
	for _, id := range ids("n", 12) {
		tr.kind[id] = "comment"
	}
	tr.newComments = 12
	s := contentOracle(tr, 0)
	// Night 1: profile 1 + video page 1; v1: 12 new -> pages 1 and 2; v2:
	// a deletion -> its 29 entries whole, 3 pages. Night 2 (unchanged): 2.
	if s.credits != 2+2+3 || s.quiet != 2 || s.comments != 12 || s.deleted != 1 {
		t.Fatalf("oracle: %+v", s)
	}
	// A budget of 5: the overhead (2), then v1 (12 changes for 2 pages)
	// before v2 (1 for 3), which no longer fits; the next night catches
	// up with v2.
	s = contentOracle(tr, 5)
	if s.credits != 4 || s.quiet != 5 || s.comments != 12 || s.deleted != 1 {
		t.Fatalf("oracle at budget 5: %+v", s)
	}
}
