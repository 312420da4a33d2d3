package world

import (
	"math"
	"slices"
)

// Churn worlds whose follow lists change the way real ones are seen to,
// and the heavytail world never does: rates spread log-normally (no
// bands), and either bursts (an account goes viral for a few days) or
// drift (an account's pace wanders and trends over weeks). Removals
// (unfollows) and the counters are the heavytail world's; an r<N> handle
// keeps the linear laws; at WorldTime 0 every world serves the same bytes.
const (
	// ChurnBursts: log-normal follower rates, and bursts: on a day an
	// account starts one (1.5% of days, H("churn", handle, "followers.burst",
	// day)), it gains 20 to 400 followers a day more, halving every 1 to
	// 3 days, for 10 days at most; a still account can burst too.
	ChurnBursts = "bursts"
	// ChurnDrift: log-normal follower rates that drift: day k's rate is
	// the base rate times exp(trend*k + a random walk of daily steps of
	// 0.2), the trend drawn per account (a standard deviation of 0.05 a
	// day: about x2 or /2 in two weeks).
	ChurnDrift = "drift"
)

// churnWorlds are the Config.Churn values whose accounts follow churn laws
// (every one but ChurnLinear).
var churnWorlds = []string{ChurnHeavyTail, ChurnBursts, ChurnDrift, ChurnContent}

// IsChurnWorld reports whether churn is one of the churn worlds.
func IsChurnWorld(churn string) bool { return slices.Contains(churnWorlds, churn) }

// Log-normal rates of the bursts and drift worlds: followersStill accounts
// in 1000 gain no follower of their own; the others exp(N(mu, sigma))
// a day, at most rateMax. Following lists are slower.
const (
	followersStill, followersMedian, followersSigma = 400, 0.5, 1.8
	followingStill, followingMedian, followingSigma = 600, 0.1, 1.2
	rateMax                                         = 500.0
)

// Bursts and drift, as the consts above say.
const (
	burstPerMille            = 15
	burstLo, burstHi         = 20.0, 400.0
	burstHalfLo, burstHalfHi = 1.0, 3.0
	burstDays                = 10
	driftStep, driftTrend    = 0.2, 0.05
)

// lognormalRate is the base rate of stream field of handle in a
// log-normal world: still (0) for still accounts in 1000 by
// H("churn", handle, field+".class") % 1000, else median*exp(sigma*z), z
// a standard normal from H("churn", handle, field+".rate") and
// H("churn", handle, field+".rate2") (Box-Muller), capped at rateMax.
func lognormalRate(handle, field string, still uint64, median, sigma float64) ChurnRate {
	if hashOf("churn", handle, field+".class")%1000 < still {
		return ChurnRate{Class: RateStill}
	}
	z := normalOf(hashOf("churn", handle, field+".rate"), hashOf("churn", handle, field+".rate2"))
	r := min(median*math.Exp(sigma*z), rateMax)
	return ChurnRate{Class: classOf(r), PerDay: r}
}

// normalOf is a standard normal from two hashes (Box-Muller).
func normalOf(a, b uint64) float64 {
	u := (float64(a>>11) + 0.5) / (1 << 53)
	v := float64(b>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}

// classOf names the band a log-normal rate falls in, by the heavytail
// world's bounds.
func classOf(r float64) RateClass {
	switch {
	case r < 1:
		return RateSlow
	case r < 20:
		return RateModerate
	}
	return RateFast
}

// wildLaws gives the follow laws of a bursts or drift account: log-normal
// base rates, and the day's rate (rateAt) of its followers list. The
// following list keeps its base rate.
func wildLaws(churn, handle string, fl, gl *followLaw) {
	fl.arrive = lognormalRate(handle, "followers", followersStill, followersMedian, followersSigma)
	gl.arrive = lognormalRate(handle, "following", followingStill, followingMedian, followingSigma)
	base := fl.arrive.PerDay
	switch churn {
	case ChurnBursts:
		fl.rateAt = func(k int64) float64 { return base + burstRate(handle, k) }
	case ChurnDrift:
		trend := driftTrend * normalOf(hashOf("churn", handle, "followers.trend"), hashOf("churn", handle, "followers.trend2"))
		fl.rateAt = func(k int64) float64 {
			walk := trend * float64(k)
			for j := int64(1); j <= k; j++ {
				walk += driftStep * normalOf(hashOf("churn", handle, "followers.drift", itoa(j)), hashOf("churn", handle, "followers.drift2", itoa(j)))
			}
			return min(base*math.Exp(walk), rateMax)
		}
	}
}

// burstRate is what the bursts under way add to handle's followers rate
// on day k: each burst started on a day s in (k-burstDays, k] adds its
// size halved every half-life since.
func burstRate(handle string, k int64) float64 {
	extra := 0.0
	for s := max(1, k-burstDays+1); s <= k; s++ {
		day := itoa(s)
		if hashOf("churn", handle, "followers.burst", day)%1000 >= burstPerMille {
			continue
		}
		size := burstLo * math.Exp(unitOf(hashOf("churn", handle, "followers.burst.size", day))*math.Log(burstHi/burstLo))
		half := burstHalfLo + (burstHalfHi-burstHalfLo)*unitOf(hashOf("churn", handle, "followers.burst.half", day))
		extra += size * math.Exp2(-float64(k-s)/half)
	}
	return extra
}

// unitOf is a hash's top 53 bits over 2^53: uniform in [0, 1).
func unitOf(h uint64) float64 { return float64(h>>11) / (1 << 53) }
