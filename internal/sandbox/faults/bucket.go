package faults

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	xrate "golang.org/x/time/rate"
)

// Retry-After modes: how a 429 announces its delay.
const (
	// RetryAfterSeconds sends the whole seconds until the key's bucket has a
	// token again, rounded up, at least 1 (e.g. "Retry-After: 1").
	RetryAfterSeconds = "seconds"
	// RetryAfterDate sends an HTTP date (RFC 9110 IMF-fixdate) at or after
	// the moment the bucket has a token again.
	RetryAfterDate = "date"
	// RetryAfterNone sends no Retry-After header, like the real service.
	RetryAfterNone = "none"
	// RetryAfterGarbage sends a value that is neither seconds nor a date.
	RetryAfterGarbage = "garbage"
)

// BurstOrDefault is the bucket size for rate: burst, or ceil(rate) (at
// least 1) when burst is 0.
func BurstOrDefault(rate float64, burst int) int {
	if burst != 0 || rate <= 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return burst
	}
	return int(max(1, math.Ceil(min(rate, math.MaxInt32))))
}

// ValidateRate checks a rate and burst named rateName and burstName.
func ValidateRate(rateName, burstName string, rate float64, burst int) error {
	if !(rate >= 0) || math.IsInf(rate, 0) {
		return fmt.Errorf("sandbox: %s must be a finite number >= 0 (0: no limit), got %v", rateName, rate)
	}
	if burst < 0 {
		return fmt.Errorf("sandbox: %s must not be negative, got %d", burstName, burst)
	}
	return nil
}

// bucketBook is the token bucket of every key: rate tokens a second, at
// most burst (>= 1 whenever rate > 0: see BurstOrDefault), full at a key's
// first request. rate 0 turns it off. Each bucket is an x/time/rate
// Limiter driven with the sandbox's own clock (the *At methods), so tests
// with a fake clock stay deterministic.
type bucketBook struct {
	mu    sync.Mutex
	rate  float64
	burst int
	byKey map[string]*xrate.Limiter
}

func newBucketBook(r float64, burst int) *bucketBook {
	return &bucketBook{rate: r, burst: burst, byKey: map[string]*xrate.Limiter{}}
}

// bucketOf returns key's bucket, full when new; b.mu is held.
func (b *bucketBook) bucketOf(key string) *xrate.Limiter {
	l := b.byKey[key]
	if l == nil {
		l = xrate.NewLimiter(xrate.Limit(b.rate), b.burst)
		b.byKey[key] = l
	}
	return l
}

// take spends one of key's tokens. Without one it spends nothing and
// returns how long until one is there.
func (b *bucketBook) take(key string, now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rate <= 0 {
		return true, 0
	}
	l := b.bucketOf(key)
	if l.AllowN(now, 1) {
		return true, 0
	}
	return false, waitFor(l, now)
}

// wait is how long until key has a token, spending nothing; 0 when the
// bucket is off.
func (b *bucketBook) wait(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rate <= 0 {
		return 0
	}
	return waitFor(b.bucketOf(key), now)
}

// maxWait caps a bucket's delay (about 146 years) so a tiny rate cannot
// overflow a time.Duration.
const maxWait = time.Duration(1 << 62)

// waitFor is the time until l holds one token, spending nothing: the delay
// of a reservation that is cancelled at once.
func waitFor(l *xrate.Limiter, now time.Time) time.Duration {
	if math.Floor(l.TokensAt(now)) >= 1 {
		return 0
	}
	r := l.ReserveN(now, 1)
	if !r.OK() {
		return maxWait
	}
	d := r.DelayFrom(now)
	r.CancelAt(now)
	if d == xrate.InfDuration || d < 0 || d > maxWait {
		return maxWait
	}
	return d
}

// set changes the rate and burst: every bucket keeps its tokens earned at
// the old rate (at most the new burst). rate 0 turns the limit off and
// forgets the buckets; turning it back on starts them full.
func (b *bucketBook) set(r float64, burst int, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r <= 0 {
		b.rate, b.burst, b.byKey = 0, burst, map[string]*xrate.Limiter{}
		return
	}
	if b.rate > 0 {
		for _, l := range b.byKey {
			l.SetLimitAt(now, xrate.Limit(r))
			l.SetBurstAt(now, burst)
		}
	}
	b.rate, b.burst = r, burst
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
