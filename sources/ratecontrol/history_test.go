package ratecontrol

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Successes recorded at their send times, out of order (answers come back
// in any order), leave the ring in time order, keeping the latest.
func TestSuccessRingInsertKeepsOrder(t *testing.T) {
	t.Parallel()
	var r successRing
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Unix(1_000, 0)
	var all []int64
	var slow successRing // the same successes, inserted a slot at a time
	for i := range 5000 {
		// Mostly a few ms late, now and then tens of seconds: the ring's
		// end wraps around under the shift.
		late := time.Duration(rng.IntN(40)) * time.Millisecond
		if rng.IntN(50) == 0 {
			late = time.Duration(rng.IntN(3000)) * time.Millisecond
		}
		at := t0.Add(time.Duration(i)*time.Millisecond - late)
		r.insert(at)
		slow.insertSlotwise(at)
		all = append(all, at.UnixNano())
		if r != slow {
			t.Fatalf("insert %d: the ring differs from inserting a slot at a time", i)
		}
	}
	slices.Sort(all)
	kept := len(r.t)
	got := make([]int64, kept)
	for i := range kept {
		got[i] = r.t[(r.n-kept+i)%len(r.t)]
	}
	if !slices.IsSorted(got) {
		t.Fatal("ring out of order")
	}
	// The latest kept are the latest of all, but for those older than the
	// oldest kept when they came.
	if got[kept-1] != all[len(all)-1] || got[kept-100] != all[len(all)-100] {
		t.Errorf("latest kept %v, want %v", got[kept-3:], all[len(all)-3:])
	}
}

// insertSlotwise is insert moving one slot at a time: what insert must
// match.
func (r *successRing) insertSlotwise(t time.Time) {
	ns := t.UnixNano()
	lo := r.n - min(r.n, len(r.t))
	if r.n >= len(r.t) {
		lo++
	}
	i := r.n
	for ; i > lo && r.t[(i-1)%len(r.t)] > ns; i-- {
		r.t[i%len(r.t)] = r.t[(i-1)%len(r.t)]
	}
	r.t[i%len(r.t)] = ns
	r.n++
}
