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
	for i := range 5000 {
		at := t0.Add(time.Duration(i)*time.Millisecond - time.Duration(rng.IntN(40))*time.Millisecond)
		r.insert(at)
		all = append(all, at.UnixNano())
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
