package sandbox

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// churnHandle is the first handle "<prefix><i>" (no tokens) whose rates
// satisfy ok.
func churnHandle(t *testing.T, prefix string, ok func(world.ChurnRates) bool) string {
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

// burstingHandle is the first handle "<prefix><i>" with a burst starting
// on a day in [from, to] (1.5% of days: docs/sandbox.md).
func burstingHandle(t *testing.T, prefix string, from, to int64) (string, int64) {
	t.Helper()
	for i := range 100_000 {
		h := prefix + strconv.Itoa(i)
		for d := from; d <= to; d++ {
			if fnvParts("churn", h, "followers.burst", strconv.FormatInt(d, 10))%1000 < 15 {
				return h, d
			}
		}
	}
	t.Fatalf("no %s... handle bursts in days %d-%d", prefix, from, to)
	return "", 0
}

func TestChurnDeterministic(t *testing.T) {
	t.Parallel()
	h := churnHandle(t, "det", func(r world.ChurnRates) bool {
		return r.Followers.Class == world.RateModerate && r.FollowersLoss.PerDay > 0.2
	})
	a, b := mustTruth(t, h, 40), mustTruth(t, h, 40)
	if !slices.Equal(a.Followers, b.Followers) || !slices.Equal(a.Following, b.Following) || a.HeartCount != b.HeartCount ||
		a.Rates != b.Rates {
		t.Fatal("two ChurnTruth calls differ")
	}
	// Same for the served bytes, two servers apart.
	q := "secUid=" + url.QueryEscape(secUIDFor(h)) + "&cursor=50"
	_, b1 := setup(t, Config{Churn: ChurnHeavyTail, WorldTime: 40}).get(t, "/shortvideo/user/followers", q)
	_, b2 := setup(t, Config{Churn: ChurnHeavyTail, WorldTime: 40}).get(t, "/shortvideo/user/followers", q)
	if !bytes.Equal(b1, b2) {
		t.Fatal("two servers answer differently")
	}
}

// TestChurnServedIsTruth walks the lists of the heavytail world over HTTP,
// in both presets, and checks entries and counters against ChurnTruth.
func TestChurnServedIsTruth(t *testing.T) {
	t.Parallel()
	const day, pageSize = 30, 97
	contract := setup(t, Config{Churn: ChurnHeavyTail, WorldTime: day, PageSize: pageSize})
	real := realSetup(t, Config{Churn: ChurnHeavyTail, WorldTime: day, PageSize: pageSize})
	loser := churnHandle(t, "sv", func(r world.ChurnRates) bool { return r.FollowersLoss.Class == world.RateModerate })
	handles := []string{
		loser,
		churnHandle(t, "sv", func(r world.ChurnRates) bool { return r.Followers.Class == world.RateFast }),
		churnHandle(t, "sv", func(r world.ChurnRates) bool {
			return r.Followers.Class == world.RateStill && r.Hearts.Class == world.RateFast
		}),
		churnHandle(t, "sv", func(r world.ChurnRates) bool {
			return r.Following.Class == world.RateModerate && r.FollowingLoss.PerDay > 0
		}),
		"acct_f120_g30", // day-0 lengths from the tokens, then churn
		"acct_f5_g2_r3", // r<N>: the linear laws
		"private_acct",
	}
	for _, h := range handles {
		tr := mustTruth(t, h, day)
		sec := "secUid=" + url.QueryEscape(secUIDFor(h))
		for _, kind := range []string{"followers", "following"} {
			want, realKey := tr.Followers, "followers"
			if kind == "following" {
				want, realKey = tr.Following, "followings"
			}
			if tr.Private {
				want = nil
			}
			got, _ := contract.walk(t, walkSpec{path: "/shortvideo/user/" + kind, params: sec, list: kind, idOf: "uniqueId"})
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: contract serves %d entries, truth %d", h, kind, len(got), len(want))
			}
			got = realFollowWalk(t, real, "/v1/tiktok/user/"+kind, "handle="+url.QueryEscape(h), realKey)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: real preset serves %d entries, truth %d", h, kind, len(got), len(want))
			}
		}
		m := contract.getOK(t, "/shortvideo/profile", "handle="+url.QueryEscape(h))
		rm := real.rgetOK(t, "/v1/tiktok/profile", "handle="+url.QueryEscape(h))
		for _, p := range []map[string]any{m, rm} {
			got := [5]int64{num(t, field(p, "stats.followerCount")), num(t, field(p, "stats.followingCount")),
				num(t, field(p, "stats.heartCount")), num(t, field(p, "stats.videoCount")), num(t, field(p, "stats.diggCount"))}
			if want := [5]int64{tr.FollowerCount, tr.FollowingCount, tr.HeartCount, tr.VideoCount, tr.DiggCount}; got != want {
				t.Errorf("%s profile: %v, truth %v", h, got, want)
			}
		}
		if tr.Private {
			continue
		}
		ps := contract.getOK(t, "/photosocial/profile", "handle="+url.QueryEscape(h))
		rps := real.rgetOK(t, "/v1/instagram/profile", "handle="+url.QueryEscape(h))
		for _, p := range []map[string]any{ps, rps} {
			got := [3]int64{num(t, field(p, "data.user.edge_followed_by.count")), num(t, field(p, "data.user.edge_follow.count")),
				num(t, field(p, "data.user.edge_owner_to_timeline_media.count"))}
			if want := [3]int64{tr.FollowerCount, tr.FollowingCount, tr.PostCount}; got != want {
				t.Errorf("%s photo profile: %v, truth %v", h, got, want)
			}
		}
	}
	// The real preset's entries carry their own counts: their truth.
	page := real.rgetOK(t, "/v1/tiktok/user/followers", "handle="+url.QueryEscape(handles[1]))
	for _, e := range list(t, page, "followers")[:10] {
		etr := mustTruth(t, jsonText(field(e, "unique_id")), day)
		if num(t, field(e, "follower_count")) != etr.FollowerCount || num(t, field(e, "following_count")) != etr.FollowingCount {
			t.Errorf("entry %s: counts %v/%v, truth %d/%d", etr.Handle, field(e, "follower_count"), field(e, "following_count"),
				etr.FollowerCount, etr.FollowingCount)
		}
	}
	// Unfollowed entries are gone from what is served, and were there at day 0.
	diff, err := ChurnChanges(loser, 0, day)
	if err != nil {
		t.Fatal(err)
	}
	if len(diff.LostFollowers) == 0 {
		t.Fatalf("%s lost no followers by day %d", loser, day)
	}
	served, _ := contract.walk(t, walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + url.QueryEscape(secUIDFor(loser)),
		list: "followers", idOf: "uniqueId"})
	day0, _ := setup(t, Config{Churn: ChurnHeavyTail, PageSize: pageSize}).walk(t, walkSpec{path: "/shortvideo/user/followers",
		params: "secUid=" + url.QueryEscape(secUIDFor(loser)), list: "followers", idOf: "uniqueId"})
	for _, e := range diff.LostFollowers {
		if slices.Contains(served, e) || !slices.Contains(day0, e) {
			t.Errorf("%s: unfollower %s served at day %d: %v, at day 0: %v", loser, e, day, slices.Contains(served, e),
				slices.Contains(day0, e))
		}
	}
}

// TestChurnDayZero: the two worlds are one at WorldTime 0, and the linear
// world is untouched by the option.
func TestChurnDayZero(t *testing.T) {
	t.Parallel()
	linear, heavy := setup(t, Config{}), setup(t, Config{Churn: ChurnHeavyTail})
	later := setup(t, Config{Churn: ChurnLinear, WorldTime: 9})
	laterDefault := setup(t, Config{WorldTime: 9})
	for _, h := range []string{"alice", "acct_f120_g30_r2", "private_x", "zed_live_business"} {
		for _, c := range []struct{ path, q string }{
			{"/shortvideo/profile", "handle=" + h},
			{"/photosocial/profile", "handle=" + h},
			{"/shortvideo/user/followers", "secUid=" + secUIDFor(h) + "&cursor=20"},
			{"/shortvideo/user/following", "secUid=" + secUIDFor(h)},
			{"/shortvideo/creators/popular", ""},
		} {
			_, a := linear.get(t, c.path, c.q)
			_, b := heavy.get(t, c.path, c.q)
			_, l1 := later.get(t, c.path, c.q)
			_, l2 := laterDefault.get(t, c.path, c.q)
			if !bytes.Equal(a, b) || !bytes.Equal(l1, l2) {
				t.Errorf("%s?%s: the worlds differ at day 0 (%v) or linear is not the default (%v)", c.path, c.q,
					!bytes.Equal(a, b), !bytes.Equal(l1, l2))
			}
		}
	}
}

func TestChurnConfig(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{APIKeys: []string{"k"}, Churn: "bursty"}); err == nil {
		t.Error("Churn bursty accepted")
	}
}

// TestChurnPageCost: a deep page of a fast, unfollowed account a year on
// still costs O(days + removals + page), not O(list).
func TestChurnPageCost(t *testing.T) {
	t.Parallel()
	h := churnHandle(t, "cost", func(r world.ChurnRates) bool {
		return r.Followers.Class == world.RateFast && r.Followers.PerDay > 100 && r.FollowersLoss.Class == world.RateModerate
	})
	b := setup(t, Config{Churn: ChurnHeavyTail, WorldTime: 365})
	tr := mustTruth(t, h, 365)
	off := tr.FollowerCount - 10
	m := b.getOK(t, "/shortvideo/user/followers", "secUid="+url.QueryEscape(secUIDFor(h))+"&cursor="+strconv.FormatInt(off, 10))
	entries := list(t, m, "followers")
	if len(entries) != 10 || m["hasMore"] != false {
		t.Fatalf("last page at %d of %d: %d entries, hasMore %v", off, tr.FollowerCount, len(entries), m["hasMore"])
	}
	for i, e := range entries {
		if got := jsonText(field(e, "uniqueId")); got != tr.Followers[off+int64(i)] {
			t.Fatalf("position %d: %s, truth %s", off+int64(i), got, tr.Followers[off+int64(i)])
		}
	}
	// Its removals are bounded: world.TestChurnRemovalsBounded.
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
			got, _ := srv.walk(t, walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + url.QueryEscape(secUIDFor(h)), list: "followers", idOf: "uniqueId"})
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
		for _, q := range []string{"secUid=" + secUIDFor("plain7") + "&cursor=20", "secUid=" + secUIDFor(burst)} {
			_, a := linear.get(t, "/shortvideo/user/followers", q)
			_, b := zero.get(t, "/shortvideo/user/followers", q)
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs from the linear world at day 0: %s", churn, q)
			}
		}
	}
}

// TestChurnDocumentedFormulas recomputes rates and a day's arrivals the way
// docs/sandbox.md says, so the docs cannot drift from the code.
func TestChurnDocumentedFormulas(t *testing.T) {
	t.Parallel()
	// The followers row of the docs' table: cumulative shares and bands.
	bands := []struct {
		upTo   uint64
		class  world.RateClass
		lo, hi float64
	}{{600, world.RateStill, 0, 0}, {850, world.RateSlow, 0.05, 0.5}, {970, world.RateModerate, 1, 10}, {1000, world.RateFast, 20, 200}}
	checked := 0
	for i := range 300 {
		h := fmt.Sprintf("doc%d", i)
		u := fnvParts("churn", h, "followers.class") % 1000
		j := 0
		for u >= bands[j].upTo {
			j++
		}
		want := world.ChurnRate{Class: bands[j].class}
		if want.Class != world.RateStill {
			f := float64(fnvParts("churn", h, "followers.rate")>>11) / (1 << 53)
			want.PerDay = bands[j].lo * math.Pow(bands[j].hi/bands[j].lo, f)
		}
		r, err := ChurnRatesOf(h)
		if err != nil {
			t.Fatal(err)
		}
		if r.Followers.Class != want.Class || math.Abs(r.Followers.PerDay-want.PerDay) > 1e-9*want.PerDay {
			t.Fatalf("%s: followers rate %+v, docs say %+v", h, r.Followers, want)
		}
		if want.PerDay == 0 || want.PerDay >= 10 {
			continue
		}
		// Day 3's arrivals by Knuth's method on the documented stream.
		s := splitmix(fnvParts("churn", h, "followers") + 3)
		uniform := func() float64 {
			s += 0x9e3779b97f4a7c15
			return (float64(splitmix(s)>>11) + 0.5) / (1 << 53)
		}
		n, prod := int64(0), uniform()
		for prod > math.Exp(-want.PerDay) {
			n++
			prod *= uniform()
		}
		d, err := ChurnChanges(h, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if d.FollowersArrived != n {
			t.Fatalf("%s: %d arrivals on day 3, docs say %d", h, d.FollowersArrived, n)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d handles with a rate under 10", checked)
	}
}
