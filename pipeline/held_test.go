package pipeline

import (
	"context"
	"testing"

	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
)

// A task this process set aside (its request dearer than the budget has
// left) goes back to pending and may be leased again by this process
// before the worker that set it aside has ended: that worker's end forgets
// its own lease, never the new one. Found by the simulator (seed 126,
// profile full, two processes): the first worker's end cancelled the
// second lease's requests, and the run failed on "context canceled".
func TestDoneForgetsOnlyItsOwnLease(t *testing.T) {
	t.Parallel()
	c := &crawl{held: map[int64]heldTask{}, wake: make(chan struct{}, 1)}
	first := &frontier.Task{Task: kinds.Task{ID: 7}, Token: 1}
	_, cancelFirst := context.WithCancelCause(context.Background())
	c.held[first.ID] = heldTask{task: first, cancel: cancelFirst}
	again := &frontier.Task{Task: kinds.Task{ID: 7}, Token: 2}
	ctx, cancel := context.WithCancelCause(context.Background())
	c.held[again.ID] = heldTask{task: again, cancel: cancel}
	c.done(first)
	if err := context.Cause(ctx); err != nil {
		t.Errorf("the first lease's end cancelled the second: %v", err)
	}
	if n := c.inProgress(); n != 1 {
		t.Errorf("%d tasks in progress after the first lease's end, want the second", n)
	}
	c.done(again)
	if ctx.Err() == nil || c.inProgress() != 0 {
		t.Errorf("the second lease's end: cancelled %v, %d in progress; want cancelled and none", ctx.Err() != nil, c.inProgress())
	}
}
