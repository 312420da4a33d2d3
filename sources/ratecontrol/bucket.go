package ratecontrol

import (
	"time"

	"golang.org/x/time/rate"
)

// bucket is our token bucket: a rate.Limiter whose rate and burst, set
// only through it, are kept beside it too, so that reading them takes no
// lock (each turn of Wait reads both: a lock each was a good part of the
// simulations' CPU under -race).
type bucket struct {
	*rate.Limiter
	limit rate.Limit
	burst int
}

func newBucket(r rate.Limit, b int) *bucket {
	return &bucket{Limiter: rate.NewLimiter(r, b), limit: r, burst: b}
}

// Limit is the bucket's rate.
func (b *bucket) Limit() rate.Limit { return b.limit }

// Burst is the bucket's burst.
func (b *bucket) Burst() int { return b.burst }

// SetLimitAt sets the rate from t on.
func (b *bucket) SetLimitAt(t time.Time, r rate.Limit) {
	b.Limiter.SetLimitAt(t, r)
	b.limit = r
}

// SetBurstAt sets the burst from t on.
func (b *bucket) SetBurstAt(t time.Time, n int) {
	b.Limiter.SetBurstAt(t, n)
	b.burst = n
}
