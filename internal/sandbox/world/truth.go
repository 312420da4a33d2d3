package world

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Ground truth of the heavytail world (Config.Churn = ChurnHeavyTail), for
// benchmarks that run simulated nights against a sandbox and score what a
// revisit policy saw against what really happened. Every function here is
// pure: a function of the handle and the day(s), computed by the same code
// the handlers use, so the truth and the served pages cannot disagree. No
// server or HTTP is needed.

// ChurnRates are an account's true rates in the heavytail world, each with
// the band of its mix. An account with an r<N> token keeps the linear laws:
// its lists' rates are RateFixed N, its losses RateStill and its counters
// RateFixed at their linear rate.
type ChurnRates struct {
	// Followers and Following are the mean arrivals a day on each list.
	Followers, Following ChurnRate
	// FollowersLoss and FollowingLoss are the mean removal draws a day on
	// each list (a draw that hits an entry already removed removes nothing).
	FollowersLoss, FollowingLoss ChurnRate
	// Hearts, Videos and Diggs are the short-video profile's heartCount,
	// videoCount and diggCount increments a day; Posts the photo-sharing
	// profile's edge_owner_to_timeline_media.
	Hearts, Videos, Diggs, Posts ChurnRate
}

// AccountTruth is an account of the heavytail world at a day, as both
// presets serve it.
type AccountTruth struct {
	Handle string
	Day    int64
	// Private accounts' lists are served empty (their counts are not), but
	// Followers and Following still hold their true entries.
	Private bool
	// Followers and Following are the handles the follow lists serve,
	// newest first (uniqueId in the contract, unique_id in the real preset).
	Followers, Following []string
	// FollowerCount and FollowingCount are the profiles' counts: always
	// len(Followers) and len(Following).
	FollowerCount, FollowingCount int64
	// HeartCount, VideoCount and DiggCount are the short-video profile's
	// stats; PostCount the photo-sharing profile's
	// edge_owner_to_timeline_media.count.
	HeartCount, VideoCount, DiggCount, PostCount int64
	Rates                                        ChurnRates
}

// ChurnDiff is what changed on an account's lists between two days: the
// edges a crawler that saw the lists whole at From should find new and
// gone at To. An entry that arrived and was removed in between is in
// neither.
type ChurnDiff struct {
	Handle   string
	From, To int64
	// NewFollowers and NewFollowing are the entries present at To and not
	// at From, newest first (the order they head the list in at To).
	NewFollowers, NewFollowing []string
	// LostFollowers and LostFollowing are the entries present at From and
	// not at To, in their order at From.
	LostFollowers, LostFollowing []string
	// FollowersArrived and FollowingArrived count the arrivals on days
	// From+1..To, removed since or not: the sum of the days' Poisson draws.
	FollowersArrived, FollowingArrived int64
}

// ChurnTruth is the account behind handle in the heavytail world at day:
// its lists in full, its counters and its rates. It costs O(day + length
// of its lists). Handles starting with "missing" (and "" or "@...")
// are an error, as the API answers 404 (400).
func ChurnTruth(handle string, day int64) (AccountTruth, error) {
	return ChurnTruthIn(ChurnHeavyTail, handle, day)
}

// ChurnTruthIn is ChurnTruth in churn world churn (ChurnHeavyTail,
// ChurnBursts or ChurnDrift).
func ChurnTruthIn(churn, handle string, day int64) (AccountTruth, error) {
	a, err := churnAccount(churn, handle, day)
	if err != nil {
		return AccountTruth{}, err
	}
	w := &World{day: day, churn: true, laws: churn, content: churn == ChurnContent}
	return AccountTruth{
		Handle:         handle,
		Day:            day,
		Private:        a.Private,
		Followers:      entriesAt(hashOf("followers", handle), a.followersList.indexes(0, a.Followers)),
		Following:      entriesAt(hashOf("following", handle), a.followingList.indexes(0, a.Following)),
		FollowerCount:  a.Followers,
		FollowingCount: a.Following,
		HeartCount:     w.counter(a, heartCounter),
		VideoCount:     w.videoList(a).total(),
		DiggCount:      w.counter(a, diggCounter),
		PostCount:      w.postList(a).total(),
		Rates:          ratesOf(a),
	}, nil
}

// ChurnChanges is what changed on handle's lists from day from to day to
// (from <= to) in the heavytail world. ChurnChanges(h, d-1, d) is day d's
// arrivals (NewFollowers; every arrival of a day is still there at its
// end) and unfollows. O(to + changes).
func ChurnChanges(handle string, from, to int64) (ChurnDiff, error) {
	return ChurnChangesIn(ChurnHeavyTail, handle, from, to)
}

// ChurnChangesIn is ChurnChanges in churn world churn.
func ChurnChangesIn(churn, handle string, from, to int64) (ChurnDiff, error) {
	if from < 0 || from > to {
		return ChurnDiff{}, fmt.Errorf("sandbox: ChurnChanges: need 0 <= from <= to, got %d, %d", from, to)
	}
	a, err := churnAccount(churn, handle, to)
	if err != nil {
		return ChurnDiff{}, err
	}
	d := ChurnDiff{Handle: handle, From: from, To: to}
	var fromArrived int64
	d.NewFollowers, d.LostFollowers, fromArrived = diffLists(hashOf("followers", handle), a.followersLaw, a.followersList, from)
	d.FollowersArrived = a.followersList.arrived - fromArrived
	d.NewFollowing, d.LostFollowing, fromArrived = diffLists(hashOf("following", handle), a.followingLaw, a.followingList, from)
	d.FollowingArrived = a.followingList.arrived - fromArrived
	return d, nil
}

// ChurnRatesOf is handle's true rates in the heavytail world, in O(1).
func ChurnRatesOf(handle string) (ChurnRates, error) {
	return ChurnRatesIn(ChurnHeavyTail, handle)
}

// ChurnRatesIn is ChurnRatesOf in churn world churn: the base rates (a
// burst or a drift changes the followers rate of a day, not these).
func ChurnRatesIn(churn, handle string) (ChurnRates, error) {
	a, err := churnAccount(churn, handle, 0)
	if err != nil {
		return ChurnRates{}, err
	}
	return ratesOf(a), nil
}

// churnAccount is the account as the handlers of churn world churn see it.
func churnAccount(churn, handle string, day int64) (Account, error) {
	switch {
	case !slices.Contains(churnWorlds, churn):
		return Account{}, fmt.Errorf("sandbox: %q is not a churn world (%s)", churn, strings.Join(churnWorlds, ", "))
	case day < 0:
		return Account{}, fmt.Errorf("sandbox: day must not be negative, got %d", day)
	case handle == "" || handle[0] == '@':
		return Account{}, fmt.Errorf("sandbox: %q is not a handle (non-empty, without the leading @)", handle)
	case strings.HasPrefix(handle, "missing"):
		return Account{}, errors.New("sandbox: no account " + handle + ": handles starting with missing do not exist")
	}
	return (&World{day: day, churn: true, laws: churn, content: churn == ChurnContent}).Account(handle)
}

func ratesOf(a Account) ChurnRates {
	var r ChurnRates
	r.Followers, r.FollowersLoss = a.followersLaw.rates()
	r.Following, r.FollowingLoss = a.followingLaw.rates()
	r.Hearts, r.Videos = counterRate(a, heartCounter), counterRate(a, videoCounter)
	r.Diggs, r.Posts = counterRate(a, diggCounter), counterRate(a, postsCounter)
	return r
}

// entriesAt are the handles of a list's entries.
func entriesAt(seed uint64, indexes []int64) []string {
	out := make([]string, len(indexes))
	for i, idx := range indexes {
		out[i] = handleAt(seed, idx)
	}
	return out
}

// diffLists compares list at (its state at the later day) with its state
// at day from: new = indexes below -A(from) still there; lost = removals
// after from of entries that existed at from (index >= -A(from)).
func diffLists(seed uint64, law followLaw, at followState, from int64) (added, lost []string, fromArrived int64) {
	fromArrived = law.at(from).arrived
	var newIdx, lostIdx []int64
	j := 0
	for i := -at.arrived; i < -fromArrived; i++ {
		for j < len(at.removed) && at.removed[j].index < i {
			j++
		}
		if j < len(at.removed) && at.removed[j].index == i {
			continue
		}
		newIdx = append(newIdx, i)
	}
	for _, r := range at.removed {
		if r.day > from && r.index >= -fromArrived {
			lostIdx = append(lostIdx, r.index)
		}
	}
	return entriesAt(seed, newIdx), entriesAt(seed, lostIdx), fromArrived
}
