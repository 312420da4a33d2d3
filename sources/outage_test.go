package sources

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/testkit/netfault"
)

// gateLog is a transport that records, for every round trip that starts
// while the client's outage gate is closed, how many such round trips were
// in flight at once.
type gateLog struct {
	next     http.RoundTripper
	gate     func() *outageGate
	inFlight atomic.Int64
	maxIn    atomic.Int64
	closed   atomic.Int64 // round trips started while closed
	failed   atomic.Int64 // round trips that got no answer
}

func (g *gateLog) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.gate().isClosed() {
		g.closed.Add(1)
		n := g.inFlight.Add(1)
		defer g.inFlight.Add(-1)
		for m := g.maxIn.Load(); n > m && !g.maxIn.CompareAndSwap(m, n); m = g.maxIn.Load() {
		}
	}
	resp, err := g.next.RoundTrip(r)
	if err != nil {
		g.failed.Add(1)
	}
	return resp, err
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func profileServer(t *testing.T, calls *atomic.Int64, answer func(w http.ResponseWriter)) *netfault.Server {
	t.Helper()
	srv, err := netfault.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		answer(w)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func okProfile(w http.ResponseWriter) {
	fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
}

// Connections refused while 4 workers call: the gate closes, exactly one
// probe is in flight at a time while it is closed, and once the upstream
// listens again every call succeeds, each bought once, with max_retries 0:
// the outage spent no retry. The probes are the workers' own requests.
func TestOutageGateOneProbeRetriesUntouched(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := profileServer(t, &calls, okProfile)
	srv.Down()
	var logs syncBuffer
	var c *Client
	rec := &gateLog{next: http.DefaultTransport, gate: func() *outageGate { return c.gate }}
	var reserved, notSent atomic.Int64
	c = testClient(t, srv.URL, func(cfg *Config) {
		cfg.MaxRetries = 0 // none: a spent retry fails the call
		cfg.RetryInitial, cfg.RetryMax = Duration(5*time.Millisecond), Duration(20*time.Millisecond)
		cfg.HTTPClient = &http.Client{Transport: rec}
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		cfg.AfterResponse = func(_ context.Context, o Outcome) {
			if o.NotSent {
				notSent.Add(1)
			}
		}
	})
	lease := &testLease{reserve: func() error { reserved.Add(1); return nil }}
	ctx := context.Background()
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			_, err := Do(ctx, c, lease, testProfileCall(fmt.Sprintf("user%d", i)))
			errs <- err
		}()
	}
	waitFor(t, 10*time.Second, "5 probes", func() bool { return rec.closed.Load() >= 5 })
	if err := srv.Up(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("call: %v", err)
		}
	}
	if got := calls.Load(); got != 4 {
		t.Errorf("upstream answered %d requests, want 4 (one per call)", got)
	}
	if m := rec.maxIn.Load(); m != 1 {
		t.Errorf("%d requests in flight at once while the gate was closed, want 1", m)
	}
	// Every request that got no answer was reported unsent (reservation
	// given back); nothing else was reserved.
	if reserved.Load() != 4+notSent.Load() || notSent.Load() != rec.failed.Load() {
		t.Errorf("reserved %d, unsent %d, failed round trips %d", reserved.Load(), notSent.Load(), rec.failed.Load())
	}
	out := logs.String()
	if strings.Count(out, "upstream unreachable; all requests paused") != 1 || strings.Count(out, "upstream reachable again") != 1 {
		t.Errorf("want one close and one reopen line:\n%s", out)
	}
	if strings.Contains(out, testKey) || strings.Contains(out, "user0") {
		t.Errorf("log names the key or a query:\n%s", out)
	}
}

// Any HTTP answer opens the gate, whatever its status.
func TestOutageGateAnyAnswerReopens(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := profileServer(t, &calls, func(w http.ResponseWriter) { http.NotFound(w, nil) })
	srv.Down()
	c := testClient(t, srv.URL, func(cfg *Config) {
		cfg.RetryInitial, cfg.RetryMax = Duration(5*time.Millisecond), Duration(20*time.Millisecond)
	})
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := c.SVProfile(context.Background(), "a"); errs <- err }()
	}
	waitFor(t, 10*time.Second, "the gate to close", c.gate.isClosed)
	if err := srv.Up(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; ClassOf(err) != ClassNotFound {
			t.Errorf("err = %v, want not_found", err)
		}
	}
	if c.gate.isClosed() {
		t.Error("gate still closed after a 404")
	}
}

// An outage longer than the window fails the call with ClassUnreachable,
// which stops the run; the message names the cause, never the key.
func TestOutageWindowExceeded(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := profileServer(t, &calls, okProfile)
	srv.Down()
	window := 300 * time.Millisecond
	c := testClient(t, srv.URL, func(cfg *Config) {
		cfg.OutageWindow = Duration(window)
		cfg.RetryInitial, cfg.RetryMax = Duration(10*time.Millisecond), Duration(50*time.Millisecond)
	})
	start := time.Now()
	_, err := c.SVProfile(context.Background(), "a")
	took := time.Since(start)
	if ClassOf(err) != ClassUnreachable || !ClassUnreachable.StopsRun() {
		t.Fatalf("err = %v, want unreachable", err)
	}
	if took < window || took > window+5*time.Second {
		t.Errorf("gave up after %s, want just past %s", took, window)
	}
	if msg := err.Error(); !strings.Contains(msg, "connection refused") || strings.Contains(msg, testKey) || strings.Contains(msg, "?") {
		t.Errorf("message %q", msg)
	}
}

// A cancelled context ends a call waiting at the closed gate at once (a
// SIGTERM during an outage exits within --grace).
func TestOutageWaitHonoursContext(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := profileServer(t, &calls, okProfile)
	srv.Down()
	// Long probe back-off: the waiters sit in the gate, not in a request.
	c := testClient(t, srv.URL, func(cfg *Config) { cfg.RetryInitial, cfg.RetryMax = Duration(time.Minute), Duration(time.Minute) })
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 3)
	for range 3 {
		go func() { _, err := c.SVProfile(ctx, "a"); errs <- err }()
	}
	waitFor(t, 10*time.Second, "the gate to close", c.gate.isClosed)
	cancel()
	deadline := time.After(2 * time.Second)
	for range 3 {
		select {
		case err := <-errs:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		case <-deadline:
			t.Fatal("a call did not return within 2s of the cancel")
		}
	}
}

// A request whose connection breaks while the upstream answers others is a
// fault of that request: it spends retries and fails the call like a 5xx.
func TestConnectionFaultOfOneRequestCostsRetries(t *testing.T) {
	t.Parallel()
	var poisoned atomic.Int64
	srv, err := netfault.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, "poison") {
			poisoned.Add(1)
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close() // no answer at all
			return
		}
		okProfile(w)
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c := testClient(t, srv.URL, func(cfg *Config) {
		cfg.MaxRetries = 2
		cfg.RetryInitial, cfg.RetryMax = Duration(50*time.Millisecond), Duration(50*time.Millisecond)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var g sync.WaitGroup
	g.Go(func() { // the other workers: the upstream keeps answering
		for ctx.Err() == nil {
			_, _ = c.SVProfile(ctx, "fine")
		}
	})
	_, err = c.SVProfile(ctx, "poison")
	cancel()
	g.Wait()
	if ClassOf(err) != ClassRetry {
		t.Fatalf("err = %v, want retryable after the retries", err)
	}
	if n := poisoned.Load(); n < 3 {
		t.Errorf("poisoned request sent %d times, want at least 1 + max_retries", n)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
