package sandbox

import (
	"bytes"
	"math"
	"net/url"
	"slices"
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

// In the bursts and drift worlds the lists served are the truth, day after
// day, and at day 0 they are the linear world's.
func TestChurnWorldsServedIsTruth(t *testing.T) {
	t.Parallel()
	const day, pageSize = 20, 97
	burst, _ := burstingHandle(t, "sv", 5, 15)
	for _, churn := range []string{ChurnBursts, ChurnDrift} {
		srv := setup(t, Config{Churn: churn, WorldTime: day, PageSize: pageSize})
		for _, h := range []string{burst, "acct_f120_g30", "plain7", "acct_f5_g2_r3"} {
			tr, err := ChurnTruthIn(churn, h, day)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := srv.walk(t, walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + url.QueryEscape(secUIDOf(h)), list: "followers", idOf: "uniqueId"})
			if !slices.Equal(got, tr.Followers) || tr.FollowerCount != int64(len(tr.Followers)) {
				t.Errorf("%s %s: served %d followers, truth %d (count %d)", churn, h, len(got), len(tr.Followers), tr.FollowerCount)
			}
			m := srv.getOK(t, "/shortvideo/profile", "handle="+url.QueryEscape(h))
			if n := num(t, field(m, "stats.followerCount")); n != tr.FollowerCount {
				t.Errorf("%s %s: followerCount %d, truth %d", churn, h, n, tr.FollowerCount)
			}
			// Day by day, the arrivals add up to the list.
			var arrived int64
			for d := int64(1); d <= day; d++ {
				ch, err := ChurnChangesIn(churn, h, d-1, d)
				if err != nil {
					t.Fatal(err)
				}
				arrived += ch.FollowersArrived
			}
			whole, _ := ChurnChangesIn(churn, h, 0, day)
			if arrived != whole.FollowersArrived {
				t.Errorf("%s %s: %d arrivals day by day, %d at once", churn, h, arrived, whole.FollowersArrived)
			}
		}
		linear, zero := setup(t, Config{}), setup(t, Config{Churn: churn})
		for _, q := range []string{"secUid=" + secUIDOf("plain7") + "&cursor=20", "secUid=" + secUIDOf(burst)} {
			_, a := linear.get(t, "/shortvideo/user/followers", q)
			_, b := zero.get(t, "/shortvideo/user/followers", q)
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs from the linear world at day 0: %s", churn, q)
			}
		}
	}
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
