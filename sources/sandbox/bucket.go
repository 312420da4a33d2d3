package sandbox

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// bucketBook is the token bucket of every key: rate tokens a second, at
// most burst (>= 1 whenever rate > 0: see burstOrDefault), full at a key's
// first request. rate 0 turns it off.
type bucketBook struct {
	mu    sync.Mutex
	rate  float64
	burst float64
	byKey map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newBucketBook(rate float64, burst int) *bucketBook {
	return &bucketBook{rate: rate, burst: float64(burst), byKey: map[string]*bucket{}}
}

// refill brings bk up to now at the current rate; b.mu is held.
func (b *bucketBook) refill(bk *bucket, now time.Time) {
	if dt := now.Sub(bk.last).Seconds(); dt > 0 {
		bk.tokens = min(b.burst, bk.tokens+dt*b.rate)
	}
	bk.last = now
}

// bucketOf returns key's bucket, full when new; b.mu is held.
func (b *bucketBook) bucketOf(key string, now time.Time) *bucket {
	bk := b.byKey[key]
	if bk == nil {
		bk = &bucket{tokens: b.burst, last: now}
		b.byKey[key] = bk
	}
	b.refill(bk, now)
	return bk
}

// take spends one of key's tokens. Without one it spends nothing and
// returns how long until one is there.
func (b *bucketBook) take(key string, now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rate <= 0 {
		return true, 0
	}
	bk := b.bucketOf(key, now)
	if bk.tokens >= 1 {
		bk.tokens--
		return true, 0
	}
	return false, b.waitFor(bk)
}

// wait is how long until key has a token, spending nothing; 0 when the
// bucket is off.
func (b *bucketBook) wait(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rate <= 0 {
		return 0
	}
	return b.waitFor(b.bucketOf(key, now))
}

// maxWait caps a bucket's delay (about 146 years) so a tiny rate cannot
// overflow a time.Duration.
const maxWait = time.Duration(1 << 62)

// waitFor is the time until bk holds one token, rounded up to the
// nanosecond; b.mu is held.
func (b *bucketBook) waitFor(bk *bucket) time.Duration {
	if bk.tokens >= 1 {
		return 0
	}
	ns := math.Ceil((1 - bk.tokens) / b.rate * 1e9)
	if ns >= float64(maxWait) {
		return maxWait
	}
	return time.Duration(ns)
}

// set changes the rate and burst: every bucket is first refilled at the old
// rate, then keeps its tokens (at most the new burst). rate 0 turns the
// limit off and forgets the buckets; turning it back on starts them full.
func (b *bucketBook) set(rate float64, burst int, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rate <= 0 {
		b.rate, b.burst, b.byKey = 0, float64(burst), map[string]*bucket{}
		return
	}
	if b.rate > 0 {
		for _, bk := range b.byKey {
			b.refill(bk, now)
			bk.tokens = min(bk.tokens, float64(burst))
		}
	}
	b.rate, b.burst = rate, float64(burst)
}

// retryAfterGarbage is the RetryAfterGarbage header value: neither
// delay-seconds nor an HTTP date.
const retryAfterGarbage = "soon, maybe"

// setRetryAfter writes the Retry-After header announcing wait in mode.
// Seconds are rounded up (at least 1) and dates to the next whole second,
// so a client that honours the header never comes back early.
func setRetryAfter(h http.Header, mode string, now time.Time, wait time.Duration) {
	secs := max(1, int64(math.Ceil(wait.Seconds())))
	switch mode {
	case RetryAfterSeconds:
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	case RetryAfterDate:
		at := now.Add(wait)
		if t := at.Truncate(time.Second); !t.Equal(at) || wait <= 0 {
			at = t.Add(time.Second)
		}
		h.Set("Retry-After", at.UTC().Format(http.TimeFormat))
	case RetryAfterGarbage:
		h.Set("Retry-After", retryAfterGarbage)
	}
}
