package world

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
)

// churnHandle is the first handle "<prefix><i>" (no tokens) whose rates
// satisfy ok.
func churnHandle(t *testing.T, prefix string, ok func(ChurnRates) bool) string {
	t.Helper()
	for i := range 100_000 {
		h := prefix + strconv.Itoa(i)
		r, err := ChurnRatesOf(h)
		if err != nil {
			t.Fatal(err)
		}
		if ok(r) {
			return h
		}
	}
	t.Fatalf("no %s... handle found", prefix)
	return ""
}

func mustTruth(t *testing.T, h string, day int64) AccountTruth {
	t.Helper()
	tr, err := ChurnTruth(h, day)
	if err != nil {
		t.Fatalf("ChurnTruth(%q, %d): %v", h, day, err)
	}
	if tr.FollowerCount != int64(len(tr.Followers)) || tr.FollowingCount != int64(len(tr.Following)) {
		t.Fatalf("%s day %d: counts %d/%d, lists %d/%d", h, day, tr.FollowerCount, tr.FollowingCount,
			len(tr.Followers), len(tr.Following))
	}
	return tr
}

func TestChurnPoisson(t *testing.T) {
	t.Parallel()
	const n = 20_000
	for _, lambda := range []float64{0.05, 0.7, 4, 9.9, 10, 35, 200, 50_000} {
		p, r := newPoisson(lambda), rng{hashOf("test", "poisson", fmt.Sprint(lambda))}
		var sum, sq float64
		for range n {
			k := float64(p.draw(&r))
			if k < 0 {
				t.Fatalf("lambda %v: draw %v", lambda, k)
			}
			sum += k
			sq += k * k
		}
		mean := sum / n
		variance := sq/n - mean*mean
		// Both within about 5 standard errors of lambda.
		if d := math.Abs(mean - lambda); d > 5*math.Sqrt(lambda/n) {
			t.Errorf("lambda %v: mean %v", lambda, mean)
		}
		if d := math.Abs(variance - lambda); d > 5*lambda*math.Sqrt(2.0/n)+5*math.Sqrt(lambda/n) {
			t.Errorf("lambda %v: variance %v", lambda, variance)
		}
	}
}

// TestChurnMix checks that 2000 handles fall in the mixes' bands in about
// their shares, with rates inside the bands.
func TestChurnMix(t *testing.T) {
	t.Parallel()
	const n = 2000
	mixes := []struct {
		name string
		mix  rateMix
		of   func(ChurnRates) ChurnRate
	}{
		{"followers", followersMix, func(r ChurnRates) ChurnRate { return r.Followers }},
		{"following", followingMix, func(r ChurnRates) ChurnRate { return r.Following }},
		{"followers loss", lossMix, func(r ChurnRates) ChurnRate { return r.FollowersLoss }},
		{"following loss", lossMix, func(r ChurnRates) ChurnRate { return r.FollowingLoss }},
		{"hearts", heartMix, func(r ChurnRates) ChurnRate { return r.Hearts }},
		{"videos", videoMix, func(r ChurnRates) ChurnRate { return r.Videos }},
		{"diggs", diggMix, func(r ChurnRates) ChurnRate { return r.Diggs }},
		{"posts", videoMix, func(r ChurnRates) ChurnRate { return r.Posts }},
	}
	rates := make([]ChurnRates, n)
	for i := range rates {
		var err error
		if rates[i], err = ChurnRatesOf(fmt.Sprintf("mix%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range mixes {
		count := map[RateClass]int{}
		for _, r := range rates {
			c := m.of(r)
			count[c.Class]++
			var band rateBand
			for _, b := range m.mix {
				if b.class == c.Class {
					band = b
				}
			}
			if band.class == "" || c.PerDay < band.lo || c.PerDay > band.hi*(1+1e-12) {
				t.Fatalf("%s: rate %+v outside its band %+v", m.name, c, band)
			}
		}
		for _, b := range m.mix {
			p := float64(b.perMille) / 1000
			got := float64(count[b.class]) / n
			// 4 binomial standard deviations, at least half a point.
			if tol := max(0.005, 4*math.Sqrt(p*(1-p)/n)); math.Abs(got-p) > tol {
				t.Errorf("%s: %s %.3f, want %.3f ± %.3f", m.name, b.class, got, p, tol)
			}
		}
	}
	// Unfollows: a minority of accounts, 12% per list.
	lose := 0
	for _, r := range rates {
		if r.FollowersLoss.PerDay > 0 {
			lose++
		}
	}
	if share := float64(lose) / n; share < 0.09 || share > 0.15 {
		t.Errorf("%.3f of the accounts lose followers", share)
	}
}

// TestChurnDayByDay checks the model day after day: the list at d is the
// day's arrivals, newest first, then the list at d-1 without the day's
// unfollows; arrivals are irregular; counters never go down.
func TestChurnDayByDay(t *testing.T) {
	t.Parallel()
	for _, h := range []string{
		churnHandle(t, "dd", func(r ChurnRates) bool { return r.Followers.Class == RateModerate && r.FollowersLoss.PerDay > 0.3 }),
		churnHandle(t, "dd", func(r ChurnRates) bool { return r.Followers.Class == RateSlow && r.FollowingLoss.PerDay > 0.1 }),
		churnHandle(t, "dd", func(r ChurnRates) bool { return r.Followers.Class == RateFast && r.Hearts.Class == RateModerate }),
		churnHandle(t, "dd", func(r ChurnRates) bool { return r.Followers.Class == RateStill && r.FollowersLoss.PerDay == 0 }),
	} {
		prev := mustTruth(t, h, 0)
		arrivals := map[int64]bool{}
		for d := int64(1); d <= 30; d++ {
			cur := mustTruth(t, h, d)
			diff, err := ChurnChanges(h, d-1, d)
			if err != nil {
				t.Fatal(err)
			}
			if diff.FollowersArrived != int64(len(diff.NewFollowers)) {
				t.Fatalf("%s day %d: %d arrived, %d new", h, d, diff.FollowersArrived, len(diff.NewFollowers))
			}
			arrivals[diff.FollowersArrived] = true
			for _, c := range []struct {
				name            string
				prev, cur       []string
				added, lost     []string
				prevCnt, curCnt int64
			}{
				{"followers", prev.Followers, cur.Followers, diff.NewFollowers, diff.LostFollowers, prev.FollowerCount, cur.FollowerCount},
				{"following", prev.Following, cur.Following, diff.NewFollowing, diff.LostFollowing, prev.FollowingCount, cur.FollowingCount},
			} {
				gone := map[string]bool{}
				for _, e := range c.lost {
					gone[e] = true
				}
				want := slices.Clone(c.added)
				for _, e := range c.prev {
					if !gone[e] {
						want = append(want, e)
					}
				}
				if !slices.Equal(c.cur, want) {
					t.Fatalf("%s %s day %d: %d entries, want %d (+%d -%d)", h, c.name, d, len(c.cur), len(want), len(c.added), len(c.lost))
				}
				if int64(len(want)) != c.prevCnt+int64(len(c.added))-int64(len(c.lost)) || c.curCnt != int64(len(c.cur)) {
					t.Fatalf("%s %s day %d: count %d", h, c.name, d, c.curCnt)
				}
			}
			if cur.HeartCount < prev.HeartCount || cur.VideoCount < prev.VideoCount || cur.DiggCount < prev.DiggCount ||
				cur.PostCount < prev.PostCount {
				t.Fatalf("%s day %d: a counter went down", h, d)
			}
			prev = cur
		}
		if r, _ := ChurnRatesOf(h); r.Followers.Class == RateModerate || r.Followers.Class == RateFast {
			if len(arrivals) < 3 {
				t.Errorf("%s (%+v): arrivals a day take only %d values: linear, not Poisson", h, r.Followers, len(arrivals))
			}
		}
	}
	// Over several days, one diff is the sum of the days.
	h := churnHandle(t, "dd", func(r ChurnRates) bool { return r.Followers.Class == RateModerate && r.FollowersLoss.PerDay > 0.3 })
	d, err := ChurnChanges(h, 3, 17)
	if err != nil {
		t.Fatal(err)
	}
	from, to := mustTruth(t, h, 3), mustTruth(t, h, 17)
	if int64(len(to.Followers)) != int64(len(from.Followers))+int64(len(d.NewFollowers))-int64(len(d.LostFollowers)) ||
		!slices.Equal(to.Followers[:len(d.NewFollowers)], d.NewFollowers) || len(d.LostFollowers) == 0 {
		t.Errorf("%s 3..17: %d -> %d, +%d -%d", h, len(from.Followers), len(to.Followers), len(d.NewFollowers), len(d.LostFollowers))
	}
}

func TestChurnTruthErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		h        string
		from, to int64
	}{{"missing_x", 1, 2}, {"@alice", 1, 2}, {"", 1, 2}, {"alice", -1, 2}, {"alice", 3, 2}} {
		if _, err := ChurnChanges(c.h, c.from, c.to); err == nil {
			t.Errorf("ChurnChanges(%q, %d, %d) accepted", c.h, c.from, c.to)
		}
		if _, err := ChurnTruth(c.h, c.from); err == nil && c.from <= c.to {
			t.Errorf("ChurnTruth(%q, %d) accepted", c.h, c.from)
		}
	}
	if _, err := ChurnRatesOf("missing"); err == nil {
		t.Error("ChurnRatesOf(missing) accepted")
	}
}

// TestChurnReferenceModel replays the documented model day by day on a
// plain slice (remove the day's picks among the entries of the day before,
// then put the day's arrivals in front) and compares it with ChurnTruth,
// which maps positions to indexes without building the list.
func TestChurnReferenceModel(t *testing.T) {
	t.Parallel()
	const days = 60
	for _, h := range []string{
		churnHandle(t, "ref", func(r ChurnRates) bool {
			return r.Followers.Class == RateModerate && r.FollowersLoss.Class == RateModerate
		}),
		churnHandle(t, "ref", func(r ChurnRates) bool {
			return r.Followers.Class == RateStill && r.FollowersLoss.Class == RateModerate
		}),
		churnHandle(t, "ref", func(r ChurnRates) bool { return r.Followers.Class == RateSlow && r.FollowersLoss.Class == RateSlow }),
	} {
		r, _ := ChurnRatesOf(h)
		day0 := pick("account", h, "followers", 300)
		var list []int64 // indexes, newest first
		for i := range day0 {
			list = append(list, i)
		}
		arrived := int64(0)
		arrive, lose := newPoisson(r.Followers.PerDay), newPoisson(r.FollowersLoss.PerDay)
		for k := int64(1); k <= days; k++ {
			lr := dayRNG(hashOf("churn", h, "followers.loss"), k)
			size := uint64(day0 + arrived)
			for n := lose.draw(&lr); n > 0 && size > 0; n-- {
				i := int64(lr.next()%size) - arrived
				if at := slices.Index(list, i); at >= 0 {
					list = slices.Delete(list, at, at+1)
				}
			}
			ar := dayRNG(hashOf("churn", h, "followers"), k)
			n := arrive.draw(&ar)
			var fresh []int64
			for j := arrived + n; j > arrived; j-- {
				fresh = append(fresh, -j)
			}
			list = append(fresh, list...)
			arrived += n
			if k%15 != 0 {
				continue
			}
			want := make([]string, len(list))
			for i, idx := range list {
				want[i] = handleAt(hashOf("followers", h), idx)
			}
			if tr := mustTruth(t, h, k); !slices.Equal(tr.Followers, want) {
				t.Fatalf("%s day %d: truth has %d followers, the reference %d", h, k, len(tr.Followers), len(want))
			}
		}
	}
}

// TestChurnRemovalsBounded: a fast, unfollowed account a year on has
// removals, and no more than three a day (a page costs O(days + removals
// + page); the sandbox's TestChurnPageCost serves it).
func TestChurnRemovalsBounded(t *testing.T) {
	t.Parallel()
	h := churnHandle(t, "cost", func(r ChurnRates) bool {
		return r.Followers.Class == RateFast && r.Followers.PerDay > 100 && r.FollowersLoss.Class == RateModerate
	})
	a, _ := (&World{day: 365, churn: true}).Account(h)
	if n := len(a.followersList.removed); n == 0 || n > 3*365 {
		t.Errorf("%d removals in a year", n)
	}
}
