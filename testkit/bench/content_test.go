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

// TestContentRealizableOracle: the realizable reference knows which lists
// changed too, but reads a comment's reply count only on the comments page
// showing it: a new reply under v1's 22nd comment costs the oracle its
// replies page alone, the realizable one also v1's comments pages 1-3
// (down to that comment, not the 4th); a comments list with a deletion
// is read whole by both.
func TestContentRealizableOracle(t *testing.T) {
	ids := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return out
	}
	day0 := map[string][]string{"c/v1": ids("a", 35), "r/v1/a21": {"x0"}, "c/v2": ids("b", 30)}
	day1 := map[string][]string{"c/v1": ids("a", 35), "r/v1/a21": {"x1", "x0"}, "c/v2": ids("b", 29)}
	tr := &contentTruth{handles: []string{"h"}, nights: 1, lists: []map[string][]string{day0, day1},
		videos: []map[string][]string{{"h": {"v1", "v2"}}, {"h": {"v1", "v2"}}}, kind: map[string]string{"x1": "reply"}, newReplies: 1}
	// Night 1: profile 1 + video page 1; v2 whole (3 pages); the replies
	// list 1 page; the realizable one v1's pages 1-3 too. Night 2: 2.
	o, r := contentOracle(tr, 0), contentOracle(tr, 0, true)
	if o.credits != 2+3+1 || o.quiet != 2 || o.replies != 1 || o.deleted != 1 {
		t.Errorf("oracle: %+v", o)
	}
	if r.credits != 2+3+1+3 || r.quiet != 2 || r.replies != 1 || r.deleted != 1 || r.name != "realizable oracle" {
		t.Errorf("realizable oracle: %+v", r)
	}
}
