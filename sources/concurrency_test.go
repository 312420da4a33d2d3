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

// creditPool is a budget of credits shared by leases, the pipeline's Hold
// in miniature: Reserve waits while credits are out with requests in
// flight, and is refused once none are left and nothing may come back.
type creditPool struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every settle
	left     int64         // not yet billed
	inFlight int64
	waiting  int
}

var errPoolSpent = errors.New("credits spent")

func newCreditPool(credits int64) *creditPool {
	return &creditPool{left: credits, changed: make(chan struct{})}
}

// poolLease is one task's lease on a creditPool: reserved carries over to
// a retry of a request whose answer never came, as the pipeline's does.
type poolLease struct {
	noLease
	pool     *creditPool
	reserved int64
}

func (l *poolLease) Reserve(ctx context.Context, _ string, credits int) error {
	if l.reserved > 0 {
		return nil
	}
	p := l.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.left-p.inFlight < int64(credits) {
		if p.inFlight == 0 {
			return errPoolSpent
		}
		ch := p.changed
		p.waiting++
		p.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-ch:
		}
		p.mu.Lock()
		p.waiting--
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	p.inFlight += int64(credits)
	l.reserved = int64(credits)
	return nil
}

func (l *poolLease) Settle(_ context.Context, o Outcome) {
	p := l.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight -= l.reserved
	if o.Billed {
		p.left -= l.reserved
	}
	l.reserved = 0
	close(p.changed)
	p.changed = make(chan struct{})
}

// waiters reports how many Reserve calls wait for credits.
func (p *creditPool) waiters() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// A request that timed out keeps its reservation for its retry; a call
// waiting for credits must not hold the slot that retry needs. With one
// slot and one credit left, the call waiting for credits used to take the
// slot the timed-out request gave back and wait in Reserve for its credit,
// while the retry waited for the slot: both until the budget's WaitMax
// (10 minutes in a run; seeds 141 and 366 of the simulator).
func TestRetryHoldingCreditsGetsASlot(t *testing.T) {
	t.Parallel()
	var first atomic.Bool
	inServer := make(chan struct{})
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		if r.URL.Query().Get("handle") == "hangs" && first.CompareAndSwap(false, true) {
			close(inServer)
			<-r.Context().Done() // past the client's timeout
			return
		}
		fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
	})
	c := testClient(t, s.srv.URL, func(cfg *Config) {
		cfg.MaxInFlight = 1
		// Long enough that the retry, answered at once, never times out
		// too on a machine busy with the rest of make test (100 ms did:
		// 6 requests).
		cfg.Timeout = Duration(time.Second)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool := newCreditPool(1)
	var g sync.WaitGroup
	var hungErr, otherErr error
	g.Go(func() {
		_, hungErr = Do(ctx, c, &poolLease{pool: pool}, testProfileCall("hangs"))
	})
	<-inServer
	g.Go(func() {
		_, otherErr = Do(ctx, c, &poolLease{pool: pool}, testProfileCall("other"))
	})
	for !c.slotsWaited(1) && pool.waiters() == 0 {
		// until the second call waits, for the slot or for credits
	}
	g.Wait()
	if hungErr != nil {
		t.Errorf("the call that timed out once: %v, want its retry answered", hungErr)
	}
	if !errors.Is(otherErr, errPoolSpent) {
		t.Errorf("the call with no credit left: %v, want %v", otherErr, errPoolSpent)
	}
	if n := s.calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (the timed-out one and its retry)", n)
	}
}
