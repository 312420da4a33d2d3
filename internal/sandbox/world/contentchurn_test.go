package world

import "testing"

// TestArrivedOn: entry -1-k of a list whose arrivals through day d are
// cum[d-1] arrived on the first day whose total passes k; days with no
// arrival are skipped; newTime dates each within its day, in order.
func TestArrivedOn(t *testing.T) {
	t.Parallel()
	cum := []int64{2, 2, 5} // day 1: 2 arrivals, day 2: none, day 3: 3
	for _, c := range []struct{ i, day, rank, of int64 }{
		{-1, 1, 0, 2}, {-2, 1, 1, 2}, {-3, 3, 0, 3}, {-4, 3, 1, 3}, {-5, 3, 2, 3},
	} {
		day, rank, of := arrivedOn(cum, c.i)
		if day != c.day || rank != c.rank || of != c.of {
			t.Errorf("entry %d: day %d, rank %d of %d; want %d, %d of %d", c.i, day, rank, of, c.day, c.rank, c.of)
		}
	}
	// Dated within its day, in order; never before a parent posted
	// during the day (day 3's entries, parent at its start + 100 s).
	for _, parent := range []int64{WorldEpoch - 1000, WorldEpoch + 2*secondsPerDay + 100} {
		prev := int64(0)
		for i := int64(-1); i >= -5; i-- {
			day, _, _ := arrivedOn(cum, i)
			if parent >= WorldEpoch+day*secondsPerDay {
				continue
			}
			at := newTime(cum, i, parent, "comment", itoa(i))
			lo := max(WorldEpoch+(day-1)*secondsPerDay, parent+1)
			if at < lo || at >= WorldEpoch+day*secondsPerDay || at <= prev {
				t.Errorf("entry %d (day %d) dated %d, want in [%d, %d) after %d", i, day, at, lo, WorldEpoch+day*secondsPerDay, prev)
			}
			prev = at
		}
	}
}
