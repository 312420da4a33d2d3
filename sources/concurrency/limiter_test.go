package concurrency

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Slots are handed first come first served: at the limit an Acquire waits
// for a release; a waiter whose context ends gets its error and takes no
// slot; a release given twice frees one slot.
func TestAcquireWaitsForASlot(t *testing.T) {
	t.Parallel()
	l := New(Config{Ceiling: 2})
	ctx := context.Background()
	r1, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := l.InFlight(); n != 2 || l.Limit() != 2 {
		t.Fatalf("in flight %d of %d, want 2 of 2", n, l.Limit())
	}
	// A waiter whose context ends leaves empty-handed.
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error)
	go func() {
		_, err := l.Acquire(cctx)
		gaveUp <- err
	}()
	// A second waiter gets the slot a release frees.
	got := make(chan func(Sample))
	go func() {
		for !l.waiting(1) {
			runtime.Gosched() // until the first waiter is queued
		}
		r, err := l.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	for !l.waiting(2) {
		runtime.Gosched()
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	r1(Sample{Outcome: OK, Latency: time.Millisecond})
	r1(Sample{Outcome: OK, Latency: time.Millisecond}) // twice: nothing more
	r3 := <-got
	if n := l.InFlight(); n != 2 {
		t.Fatalf("in flight %d after a release handed on, want 2", n)
	}
	r2(Sample{Outcome: Dropped})
	r3(Sample{Outcome: Failed})
	if n := l.InFlight(); n != 0 {
		t.Fatalf("in flight %d after every release, want 0", n)
	}
}

// waiting reports whether n Acquires wait.
func (l *Limiter) waiting(n int) bool { return l.Waiting() >= n }

// Many goroutines taking and giving back slots never hold more than the
// ceiling, and leave none held.
func TestAcquireUnderContention(t *testing.T) {
	t.Parallel()
	const ceiling = 16
	l := New(Config{Ceiling: ceiling, Initial: ceiling})
	var held, most atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for i := range 200 {
				release, err := l.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				n := held.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				held.Add(-1)
				release(Sample{Endpoint: "/e", Outcome: Outcome(i % 3), Latency: time.Duration(i%7+1) * time.Millisecond})
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m > ceiling {
		t.Errorf("%d slots held at once, ceiling %d", m, ceiling)
	}
	if n := l.InFlight(); n != 0 {
		t.Errorf("%d slots still held", n)
	}
	if s := l.Status(); s.Limit > ceiling || s.Limit < 1 {
		t.Errorf("limit %d outside [1, %d]", s.Limit, ceiling)
	}
}
