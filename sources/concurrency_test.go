package sources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/sources/concurrency"
)

// inFlightCounter counts the requests a test server is answering at once,
// and the most it ever was.
type inFlightCounter struct{ now, most atomic.Int64 }

func (f *inFlightCounter) enter() {
	n := f.now.Add(1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
}

func (f *inFlightCounter) leave() { f.now.Add(-1) }

// MaxInFlight (limits.workers) caps the requests the upstream sees at
// once, however many calls are made together.
func TestMaxInFlightCapsTheUpstream(t *testing.T) {
	t.Parallel()
	var f inFlightCounter
	release := make(chan struct{})
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		f.enter()
		defer f.leave()
		<-release
		fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
	})
	c := testClient(t, s.srv.URL, func(cfg *Config) { cfg.MaxInFlight = 3 })
	var g sync.WaitGroup
	for i := range 32 {
		g.Go(func() {
			if _, err := c.SVProfile(context.Background(), fmt.Sprint("a", i)); err != nil {
				t.Error(err)
			}
		})
	}
	for f.now.Load() < 3 {
		// until the first three are in the server
	}
	if n := c.InFlight(); n != 3 || c.Limit() != 3 {
		t.Errorf("in flight %d of %d, want 3 of 3", n, c.Limit())
	}
	close(release)
	g.Wait()
	if m := f.most.Load(); m != 3 {
		t.Errorf("the upstream saw %d requests at once, want 3 (MaxInFlight)", m)
	}
	if s.calls.Load() != 32 {
		t.Errorf("%d calls, want 32", s.calls.Load())
	}
}

// Every attempt gives its slot back, whatever became of it: a 429, a 5xx
// retried, a timeout, a connection refused, a call cancelled while waiting
// for a slot or for its answer.
func TestSlotsComeBackOnEveryPath(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		switch r.URL.Query().Get("handle") {
		case "limited":
			if n%2 == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		case "failing":
			w.WriteHeader(http.StatusBadGateway)
			return
		case "slow":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
	})
	c := testClient(t, s.srv.URL, func(cfg *Config) {
		cfg.MaxRetries = 1
		cfg.Timeout = Duration(50 * time.Millisecond)
		cfg.OutageWindow = Duration(100 * time.Millisecond) // a timeout looks like an outage
		cfg.MaxInFlight = 2
	})
	ctx := context.Background()
	for _, h := range []string{"ok", "limited", "failing", "slow"} {
		_, err := c.SVProfile(ctx, h)
		t.Logf("%s: %v", h, err)
	}
	// Cancelled while its request is out, and while waiting for a slot.
	patient := testClient(t, s.srv.URL, func(cfg *Config) { cfg.MaxInFlight = 2 })
	cctx, cancel := context.WithCancel(ctx)
	var g sync.WaitGroup
	for range 4 {
		g.Go(func() {
			if _, err := patient.SVProfile(cctx, "slow"); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
		})
	}
	for !patient.slotsWaited(2) {
		// until two calls hold a slot and two wait for one
	}
	cancel()
	g.Wait()
	// Refused: nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	refused := testClient(t, "http://"+addr, func(cfg *Config) { cfg.MaxRetries = 1; cfg.OutageWindow = Duration(time.Millisecond) })
	if _, err := refused.SVProfile(ctx, "a"); err == nil {
		t.Error("a call to a closed port succeeded")
	}
	for _, cl := range []*Client{c, patient} {
		if n := cl.InFlight(); n != 0 {
			t.Errorf("%d slots still held after every call ended", n)
		}
	}
	if n := refused.InFlight(); n != 0 {
		t.Errorf("%d slots still held after refused connections", n)
	}
}

// With no settings the limit grows from its start while the answers keep
// their time: 64 callers against an upstream answering in 20 ms get more
// than the initial 8 requests in flight.
func TestLimitGrowsWithNoSettings(t *testing.T) {
	t.Parallel()
	var f inFlightCounter
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		f.enter()
		defer f.leave()
		time.Sleep(20 * time.Millisecond) // the upstream's answer time, not a synchronisation
		fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
	})
	c := testClient(t, s.srv.URL, nil)
	var g sync.WaitGroup
	for i := range 64 {
		g.Go(func() {
			for j := range 25 {
				if _, err := c.SVProfile(context.Background(), fmt.Sprint("a", i, "-", j)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	g.Wait()
	st := c.Concurrency()
	t.Logf("the upstream saw up to %d at once; limit %d, moves %v", f.most.Load(), st.Limit, st.Moves)
	if m := f.most.Load(); m <= concurrency.InitialDefault {
		t.Errorf("the upstream saw at most %d requests at once, want more than the initial %d", m, concurrency.InitialDefault)
	}
	if st.Moves[concurrency.Move{Reason: concurrency.ReasonStart, Up: true}] == 0 {
		t.Error("no doubling recorded")
	}
}
