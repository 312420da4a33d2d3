package pipeline

import (
	"testing"

	"github.com/socialcrawl/crawler/kinds"
)

// Review finding: a page's commit goes through on the server but its
// answer is lost; by the time it is read, the next page's answer is billed.
// The retry must carry exactly what the first attempt did, so that when it
// finds the page already applied, the next page's answer is still counted
// (it was dropped with the retry's settle before).
func TestRetriedCommitCarriesOnlyItsOwnSettle(t *testing.T) {
	t.Parallel()
	lc := &leaseCredits{task: &Task{Task: kinds.Task{ID: 1}, Token: 2}, held: 16}
	lc.billed, lc.usage = 1, usageDelta{endpoint: "/e", requests: 1}
	first := lc.settleFor(7, false)
	if first.Billed != 1 || first.Requests != 1 || lc.billed != 0 || lc.spare() != 15 {
		t.Fatalf("first settle %+v, billed %d, spare %d", first, lc.billed, lc.spare())
	}
	// The next page's request, answered and billed while the commit is unread.
	lc.billed, lc.usage = 1, usageDelta{endpoint: "/e", requests: 1}
	if lc.spare() != 14 {
		t.Fatalf("spare %d with one carried and one new billed answer, want 14", lc.spare())
	}
	lc.received(0, commitFailed) // the connection dropped: unknown
	retry := lc.settleFor(7, false)
	if retry != first {
		t.Fatalf("retry settles %+v, want exactly the first attempt's %+v", retry, first)
	}
	lc.received(0, commitApplied) // the first attempt had gone through
	if lc.carry != nil || lc.billed != 1 || lc.usage.requests != 1 {
		t.Fatalf("after the applied retry: carry %v, billed %d, usage %+v; want the next page's answer pending", lc.carry, lc.billed, lc.usage)
	}
	// A commit that fails for good gives its carry back for the lease's end.
	lc.settleFor(7, false)
	lc.billed = 1
	lc.giveBack()
	if lc.carry != nil || lc.billed != 2 || lc.usage.requests != 1 {
		t.Fatalf("after giveBack: carry %v, billed %d, usage %+v", lc.carry, lc.billed, lc.usage)
	}
}
