package sources

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// outageGate pauses every worker of a Client while the upstream as a whole
// is unreachable, so that an outage costs waiting, not per-request retries
// (which are for faults of one request) and not failed tasks.
//
// A connection-level failure is an attempt that got no HTTP answer at all:
// connection refused, reset before any response, DNS or TLS handshake
// failure, a timeout with nothing read. One such failure alone proves
// little, so it puts the gate in doubt; a second one with no HTTP answer in
// between, from any worker, closes the gate. While it is closed no worker
// sends, except one probe at a time: the real request of one of the
// waiting workers, on exponential back-off (RetryInitial doubling up to
// RetryMax). The first HTTP answer of any status, from the probe or a
// request that was already in flight, opens the gate again. An outage that
// lasts longer than the window fails the calls with ClassUnreachable, which
// stops the run resumable.
//
// Failures that close the gate or happen while it is closed are free: they
// do not count against MaxRetries. A failure that only put the gate in
// doubt counts once an HTTP answer shows the upstream was up (it was this
// request's fault); until then it is undecided (see streak).
type outageGate struct {
	window time.Duration
	log    *slog.Logger

	mu      sync.Mutex
	streak  *streak // failures since the last HTTP answer; nil: none
	closed  bool
	since   time.Time // the first failure of the outage
	cause   string
	probing bool      // a probe is in flight
	epoch   uint64    // counts the closings: a probe is valid in its own
	next    time.Time // no probe leaves before this
	probes  int
	bo      *backoff.ExponentialBackOff
	changed chan struct{} // closed (and replaced) when waiters should look again
	down    time.Duration // the outages that ended, for Client.Pauses
}

// streak is a run of connection-level failures with no HTTP answer in
// between. It ends either as an outage (it closed the gate) or with an
// answer (the upstream was up): the fate of every failure in it.
type streak struct {
	failures int
	first    time.Time
	outage   bool
	answered bool
}

func newOutageGate(window, initial, maxWait time.Duration, log *slog.Logger) *outageGate {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = initial
	bo.MaxInterval = maxWait
	bo.MaxElapsedTime = 0
	bo.Reset()
	return &outageGate{window: window, log: log, bo: bo, changed: make(chan struct{})}
}

// broadcast wakes the waiters; g.mu is held.
func (g *outageGate) broadcast() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// isClosed reports whether the gate is closed.
func (g *outageGate) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// wait returns at once while the gate is open. While it is closed it blocks
// until the gate opens, or until this caller may send the probe (probe
// non-zero: the caller must report the attempt with answered or failure,
// or give the probe up with abandon), or until the outage outlasts the
// window (an *Error of ClassUnreachable), or ctx ends.
func (g *outageGate) wait(ctx context.Context, endpoint string) (probe uint64, err error) {
	for {
		g.mu.Lock()
		if !g.closed {
			g.mu.Unlock()
			return 0, nil
		}
		now := time.Now()
		due := !g.probing && !now.Before(g.next)
		if due {
			// Past the window too: the probe the back-off allows still
			// goes, so a Client can find the upstream again later.
			g.probing = true
			g.mu.Unlock()
			return g.epoch, nil
		}
		left := g.since.Add(g.window).Sub(now)
		if left <= 0 {
			err := g.unreachable(endpoint, now)
			g.mu.Unlock()
			return 0, err
		}
		d := left
		if !g.probing {
			d = min(d, g.next.Sub(now))
		}
		ch := g.changed
		g.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// unreachable is the error of a call that met an outage older than the
// window; g.mu is held.
func (g *outageGate) unreachable(endpoint string, now time.Time) *Error {
	return &Error{Endpoint: endpoint, Class: ClassUnreachable,
		Message: fmt.Sprintf("upstream unreachable for %s, longer than the outage window of %s: %s",
			now.Sub(g.since).Round(time.Second), g.window, g.cause)}
}

// answered records an HTTP answer (any status): the upstream is up.
func (g *outageGate) answered() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.streak != nil {
		g.streak.answered = true
		g.streak = nil
	}
	if !g.closed {
		return
	}
	g.closed, g.probing = false, false
	g.down += time.Since(g.since)
	g.log.LogAttrs(context.Background(), slog.LevelInfo, "upstream reachable again; resuming",
		slog.Duration("outage", time.Since(g.since).Round(time.Millisecond)), slog.Int("probes", g.probes))
	g.broadcast()
}

// downtime is how long the gate has been closed in all, up to now, and
// whether it is closed.
func (g *outageGate) downtime(now time.Time) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return g.down + now.Sub(g.since), true
	}
	return g.down, false
}

// failure records a connection-level failure of an attempt (probe: the
// probe it was, or 0) and returns its streak; free is true when the failure
// is part of an outage (it closed the gate, or the gate was closed).
func (g *outageGate) failure(probe uint64, endpoint string, cause error) (s *streak, free bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if g.streak == nil {
		g.streak = &streak{first: now}
	}
	s = g.streak
	s.failures++
	if g.closed {
		if probe == g.epoch && g.probing {
			g.probing = false
			g.probes++
			wait := g.bo.NextBackOff()
			g.next = now.Add(wait)
			g.log.LogAttrs(context.Background(), slog.LevelInfo, "upstream still unreachable",
				slog.Int("probe", g.probes), slog.Duration("outage", now.Sub(g.since).Round(time.Millisecond)),
				slog.Duration("next_probe_in", wait.Round(time.Millisecond)), slog.String("err", cause.Error()))
			g.broadcast()
		}
		return s, true
	}
	if s.failures < 2 {
		return s, false
	}
	s.outage = true
	g.closed, g.probing, g.probes = true, false, 0
	g.epoch++
	g.since, g.cause = s.first, cause.Error()
	g.bo.Reset()
	g.next = now.Add(g.bo.NextBackOff())
	g.log.LogAttrs(context.Background(), slog.LevelWarn, "upstream unreachable; all requests paused, probing",
		slog.String("endpoint", endpoint), slog.String("err", g.cause), slog.Duration("window", g.window))
	return s, true
}

// abandon gives up a probe that was not sent (the caller's context ended,
// or its lease refused to reserve), so another waiter can probe.
func (g *outageGate) abandon(probe uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed && g.probing && probe == g.epoch {
		g.probing = false
		g.broadcast()
	}
}

// ownFault tells the fate of a failure that put the gate in doubt: decided
// once its streak ended, own when it ended with an HTTP answer (the
// upstream was up, so the failure was the request's own and costs a retry).
func (g *outageGate) ownFault(s *streak) (decided, own bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return s.outage || s.answered, s.answered && !s.outage
}
