package loop

import (
	"context"
	"time"
)

// Every calls f each period, and at once on each kick (nil: never),
// until ctx ends.
func Every(ctx context.Context, period time.Duration, kick <-chan struct{}, f func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		f()
	}
}

// Kick asks the loop waiting on kick (a channel of capacity 1) to run now;
// a kick already waiting stands for both.
func Kick(kick chan<- struct{}) {
	select {
	case kick <- struct{}{}:
	default:
	}
}
