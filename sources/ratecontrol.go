package sources

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateControl is the per-key gate every attempt passes: a pause shared by all
// workers after a 429, then a token bucket whose rate adapts (AIMD): halved on
// a 429, raised by a small step on each success, never above the ceiling.
type rateControl struct {
	mu      sync.Mutex
	until   time.Time // no request leaves before this instant
	ceiling float64   // 0: no bucket
	limiter *rate.Limiter
}

const (
	aimdDecrease = 0.5
	aimdFloor    = 0.5 // requests per second
)

func newRateControl(ceiling float64, burst int) *rateControl {
	rc := &rateControl{ceiling: ceiling}
	if ceiling > 0 {
		rc.limiter = rate.NewLimiter(rate.Limit(ceiling), burst)
	}
	return rc
}

func (rc *rateControl) current() float64 {
	if rc.limiter == nil {
		return 0
	}
	return float64(rc.limiter.Limit())
}

// wait blocks until the shared pause is over and a token is available.
func (rc *rateControl) wait(ctx context.Context) error {
	for {
		rc.mu.Lock()
		d := time.Until(rc.until)
		rc.mu.Unlock()
		if d <= 0 {
			break
		}
		if err := sleepCtx(ctx, d); err != nil {
			return err
		}
	}
	if rc.limiter != nil {
		return rc.limiter.Wait(ctx)
	}
	return nil
}

// throttled records a 429: every worker pauses for d and the rate is cut.
func (rc *rateControl) throttled(d time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if until := time.Now().Add(d); until.After(rc.until) {
		rc.until = until
	}
	if rc.limiter != nil {
		next := max(float64(rc.limiter.Limit())*aimdDecrease, aimdFloor)
		rc.limiter.SetLimit(rate.Limit(next))
	}
}

// success probes the rate back up by a step of ceiling/50 per success, so a
// full recovery from a halving takes ~25 successful requests.
func (rc *rateControl) success() {
	if rc.limiter == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	cur := float64(rc.limiter.Limit())
	if cur < rc.ceiling {
		rc.limiter.SetLimit(rate.Limit(min(cur+rc.ceiling/50, rc.ceiling)))
	}
}
