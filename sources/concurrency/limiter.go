package concurrency

import (
	"context"
	"sync"
	"time"
)

// Outcome is what became of a request, as the controller reads it.
type Outcome int8

const (
	// OK is an answer that is neither a 429 nor a 5xx: its answer time is
	// the signal.
	OK Outcome = iota
	// Throttled is a 429: the rate control's signal, not this one's (its
	// answer comes at once and says nothing of the upstream's queue).
	Throttled
	// Failed is a 5xx, or no answer within the client's timeout, or a
	// connection lost after the request was written.
	Failed
	// Dropped is a request never sent or abandoned (the run stopping, a
	// connection refused): it frees its slot and says nothing.
	Dropped
)

// Sample is what the holder of a slot tells when it gives the slot back.
type Sample struct {
	// Endpoint keys the answer time's normalization: endpoints answer in
	// different times (a profile in 2-4 s, a transcript in 5-30 s), and a
	// change of the mix must not read as a queue.
	Endpoint string
	Outcome  Outcome
	// Latency is the answer time: from the request written to the first
	// byte of the answer. It leaves out the time waiting for a rate token
	// or a 429's pause: a request waiting to be sent is not in the
	// upstream's queue.
	Latency time.Duration
	// Queued is the time from Acquire to the request written: rate tokens,
	// 429 pauses, an outage's gate, a credit reservation. While a good
	// share of the slots' time is spent there, the rate control binds and
	// more requests in flight would buy nothing.
	Queued time.Duration
}

// ConcurrencyLimiter is what a client asks before each request: a slot,
// given back with the request's Sample. The runner reads Limit to keep
// enough work in progress, InFlight to show it.
type ConcurrencyLimiter interface {
	Acquire(ctx context.Context) (release func(Sample), err error)
	Limit() int
	InFlight() int
}

// Limiter is the adaptive limit of one API key's requests in flight in
// this process (see the package doc). It is safe for concurrent use.
type Limiter struct {
	mu      sync.Mutex
	now     func() time.Time // time.Now; a test's clock
	waiters []*waiter        // FIFO
	held    int              // slots held
	ctl     controller
}

var _ ConcurrencyLimiter = (*Limiter)(nil)

// waiter is an Acquire waiting for a slot; ready is closed when one is
// handed to it.
type waiter struct {
	ready  chan struct{}
	ticket *ticket
}

// ticket is one slot held: the round it was taken in, for its sample.
type ticket struct {
	round *round
	done  bool
}

// New returns the limiter of a key with cfg.
func New(cfg Config) *Limiter {
	l := &Limiter{now: time.Now}
	l.ctl.init(cfg.withDefaults(), l.now())
	return l
}

// Acquire waits for a slot, or for ctx to end (its error then). The
// returned release gives the slot back with the request's sample; it must
// be called exactly once (later calls do nothing).
func (l *Limiter) Acquire(ctx context.Context) (func(Sample), error) { return l.acquire(ctx, false) }

// AcquireFirst is Acquire ahead of every waiter: for the retry of a
// request the upstream refused with a 429, which has waited out its pause
// already and should not wait again behind the requests queued meanwhile.
func (l *Limiter) AcquireFirst(ctx context.Context) (func(Sample), error) {
	return l.acquire(ctx, true)
}

func (l *Limiter) acquire(ctx context.Context, first bool) (func(Sample), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	now := l.advanceLocked()
	if len(l.waiters) == 0 && l.held < l.ctl.slots() {
		t := l.grantLocked(now)
		l.mu.Unlock()
		return l.releaser(t), nil
	}
	w := &waiter{ready: make(chan struct{})}
	if first {
		l.waiters = append([]*waiter{w}, l.waiters...)
	} else {
		l.waiters = append(l.waiters, w)
	}
	pace := l.ctl.untilPaced(now, l.held)
	l.mu.Unlock()
	for {
		// Slots freed by a release come with it; slots a doubling hands
		// out over time come with this timer (nothing else may happen).
		timer := time.NewTimer(pace)
		if pace == 0 {
			timer.Stop()
		}
		select {
		case <-w.ready:
			timer.Stop()
			return l.releaser(w.ticket), nil
		case <-timer.C:
			l.mu.Lock()
			pace = l.ctl.untilPaced(l.advanceLocked(), l.held)
			l.mu.Unlock()
		case <-ctx.Done():
			timer.Stop()
			l.mu.Lock()
			defer l.mu.Unlock()
			select {
			case <-w.ready:
				// Handed a slot as ctx ended: give it back unused.
				l.putLocked(l.now(), w.ticket, Sample{Outcome: Dropped})
			default:
				for i, o := range l.waiters {
					if o == w {
						l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
						break
					}
				}
			}
			return nil, ctx.Err()
		}
	}
}

func (l *Limiter) releaser(t *ticket) func(Sample) {
	return func(s Sample) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.putLocked(l.now(), t, s)
	}
}

// grantLocked takes a slot at now.
func (l *Limiter) grantLocked(now time.Time) *ticket {
	l.ctl.holding(now, l.held)
	l.held++
	return &ticket{round: l.ctl.acquired(now, l.held)}
}

// putLocked gives t's slot back with s at now, and hands the free slots
// to the waiters.
func (l *Limiter) putLocked(now time.Time, t *ticket, s Sample) {
	if t.done {
		return
	}
	t.done = true
	l.ctl.holding(now, l.held)
	l.held--
	l.ctl.sample(now, t.round, s)
	l.ctl.tick(now, l.held)
	l.wakeLocked(now)
}

// wakeLocked hands free slots to the waiters, first come first served.
func (l *Limiter) wakeLocked(now time.Time) {
	for len(l.waiters) > 0 && l.held < l.ctl.slots() {
		w := l.waiters[0]
		l.waiters = l.waiters[1:]
		w.ticket = l.grantLocked(now)
		close(w.ready)
	}
}

// advanceLocked brings the controller up to now and hands out the slots
// it frees; l.mu is held.
func (l *Limiter) advanceLocked() time.Time {
	now := l.now()
	l.ctl.tick(now, l.held)
	l.wakeLocked(now)
	return now
}

// Limit is the number of requests that may be in flight now.
func (l *Limiter) Limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked()
	return l.ctl.limit
}

// InFlight is the number of slots held now.
func (l *Limiter) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Waiting is the number of Acquires waiting for a slot now.
func (l *Limiter) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiters)
}

// Status is the limiter's state for watching.
func (l *Limiter) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.advanceLocked()
	l.ctl.holding(now, l.held)
	s := l.ctl.status(l.held)
	s.At = now
	return s
}
