package world

import (
	"math"
	"sort"
	"strconv"
	"testing"
)

// burstingHandle is the first handle "<prefix><i>" with a burst starting
// on a day in [from, to].
func burstingHandle(t *testing.T, prefix string, from, to int64) (string, int64) {
	t.Helper()
	for i := range 100_000 {
		h := prefix + strconv.Itoa(i)
		for d := from; d <= to; d++ {
			if hashOf("churn", h, "followers.burst", itoa(d))%1000 < burstPerMille {
				return h, d
			}
		}
	}
	t.Fatalf("no %s... handle bursts in days %d-%d", prefix, from, to)
	return "", 0
}

// The worlds' laws: log-normal base rates (about 40% still, median 0.5 a
// day); a burst adds at least burstLo followers a day on its first day;
// drift moves a rate day by day.
func TestChurnWorldsLaws(t *testing.T) {
	t.Parallel()
	const n = 2000
	still := 0
	var rates []float64
	for i := range n {
		r, err := ChurnRatesIn(ChurnDrift, "h"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if r.Followers.Class == RateStill {
			still++
			continue
		}
		rates = append(rates, r.Followers.PerDay)
	}
	sort.Float64s(rates)
	if share := float64(still) / n; math.Abs(share-0.4) > 0.04 {
		t.Errorf("still share %.3f, want about 0.4", share)
	}
	if med := rates[len(rates)/2]; med < 0.4 || med > 0.6 {
		t.Errorf("median rate %.3f, want about 0.5", med)
	}
	if top := rates[len(rates)-1]; top < 50 || top > rateMax {
		t.Errorf("largest rate %.1f, want a heavy tail up to %v", top, rateMax)
	}
	h, d := burstingHandle(t, "b", 1, 30)
	ch, err := ChurnChangesIn(ChurnBursts, h, d-1, d)
	if err != nil {
		t.Fatal(err)
	}
	if ch.FollowersArrived < burstLo/2 {
		t.Errorf("%s bursts on day %d with %d arrivals", h, d, ch.FollowersArrived)
	}
	var fl, gl followLaw
	for i := 0; fl.arrive.PerDay == 0; i++ {
		wildLaws(ChurnDrift, "drifter"+strconv.Itoa(i), &fl, &gl)
	}
	if fl.rateAt(1) == fl.rateAt(2) || fl.rateAt(10) == fl.arrive.PerDay {
		t.Errorf("drift: rates %v, %v, %v of base %v", fl.rateAt(1), fl.rateAt(2), fl.rateAt(10), fl.arrive.PerDay)
	}
	if _, err := ChurnTruthIn(ChurnLinear, "x", 1); err == nil {
		t.Error("ChurnTruthIn accepts the linear world")
	}
}
