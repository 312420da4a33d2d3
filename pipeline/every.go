package pipeline

import (
	"context"
	"time"
)

// every calls f each period, and at once on each kick (nil: never),
// until ctx ends: the loop of the process's background statements.
func every(ctx context.Context, period time.Duration, kick <-chan struct{}, f func()) {
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
