package loop

import (
	"context"
	"testing"
	"time"
)

// A kick runs f at once, whatever the period; a kick while one already
// waits does not block; Every returns when ctx ends.
func TestEveryRunsOnKickAndStops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	kick := make(chan struct{}, 1)
	ran := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Hour, kick, func() {
			select {
			case ran <- struct{}{}:
			case <-ctx.Done():
			}
		})
	}()
	Kick(kick)
	<-ran
	Kick(kick)
	Kick(kick) // one waits already, or f is under way: this one does not block
	<-ran
	cancel()
	<-done
}
