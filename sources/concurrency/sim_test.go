package concurrency

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/socialcrawl/crawler/sources/ratecontrol"
)

// The simulation runs a client against an upstream in virtual time, with no
// sleeps: each event (a request leaving, an answer coming back) happens at
// its instant, and the limiter reads the simulation's clock.

// tryAcquire takes a slot at now if one is free and nobody waits: the
// simulation's Acquire, on its own clock.
// When none is, pace is how long until the doubling's pacing hands out
// another (0: only a release frees one), as Acquire's timer waits.
// The simulation runs on one goroutine: it takes no lock (a lock per
// event costs under -race, and guards nothing here).
func (l *Limiter) tryAcquire(now time.Time) (t *ticket, pace time.Duration, ok bool) {
	l.ctl.tick(now, l.held)
	if len(l.waiters) > 0 || l.held >= l.ctl.slots() {
		return nil, l.ctl.untilPaced(now, l.held), false
	}
	return l.grantLocked(now), 0, true
}

// put gives t's slot back with s at now: the simulation's release,
// without the lock as tryAcquire.
func (l *Limiter) put(now time.Time, t *ticket, s Sample) { l.putLocked(now, t, s) }

// simUpstream is an upstream in virtual time: servers (0: as many as there
// are requests) taking requests first come first served, each for a
// service time drawn from service; a quota (a token bucket answering 429
// at once) and a share of failures (5xx after the service time), each of
// which at(t) may change.
type simUpstream struct {
	servers int
	service func(r *rand.Rand) time.Duration
	quota   *rate.Limiter // nil: none
	errRate float64       // the share of answers that fail after their service
	burst   float64       // the share of requests answered 503 at once
	busy    int
	queue   []*simReq
	// stallEvery and stallFor: on their way, the requests stall now and
	// then (a late goroutine, a new connection, the upstream's accept
	// loop), about every stallEvery (exponential) for stallFor, and the
	// ones sent meanwhile arrive together when it ends: a bunch the
	// upstream's bucket counts at once. stallEvery 0: none.
	stallEvery, stallFor time.Duration
	stall                time.Time // the current or next stall's start
}

// simReq is one request of the simulation.
type simReq struct {
	t        *ticket
	acquired time.Time
	sent     time.Time
}

// simRate is the real rate control (package ratecontrol) on the
// simulation's clock, and the pause a 429 of the upstream's quota asks
// for (a second: its Retry-After in whole seconds, at least 1).
type simRate struct {
	rc    *ratecontrol.Controller
	pause time.Duration
}

// simConfig is one simulated run.
type simConfig struct {
	up    *simUpstream
	limit Config
	rate  *simRate // nil: no rate control in the way
	d     time.Duration
	// tasks bounds the requests the runner keeps going (0: as many as the
	// limit lets through); think is a task's time between an answer and
	// its next request.
	tasks int
	think time.Duration
	seed  uint64
	// at is called once per virtual second, for scripted changes.
	at    func(t time.Duration, l *Limiter)
	debug bool
	// pacing wakes the requests waiting for a slot when the doubling's
	// pacing hands one out, as Acquire's timer does; without it they
	// wait for the next answer or virtual second, and the start's slots
	// leave in bunches of up to a second's worth. The sims written
	// before it keep their bunches: TestSimQuotaAtShortAnswers reads
	// 0.913 at 200 ms, seed 4, with it (0.95 without; issue 34's 0.938
	// of BENCHMARKS.md row 71 is the measured one).
	pacing bool
}

// simRun is what a simulated run saw.
type simRun struct {
	answers []simAnswer
	trace   []simPoint // once per virtual second
	l       *Limiter
}

type simAnswer struct {
	at      time.Duration // since the start
	latency time.Duration
	outcome Outcome
}

type simPoint struct {
	at              time.Duration
	limit, inFlight int
	centre          float64
	status          Status
	// steady is the rate control's Steady rate then (0: none).
	steady float64
}

// event is a scheduled instant of the simulation: what happens then
// (kind, on r), not a closure, and its instant as UnixNano, not a
// time.Time: the heap moves events around, and under -race every byte
// moved and every closure allocated costs.
type event struct {
	ns   int64 // the instant: the order, then seq
	seq  int32
	kind eventKind
	r    *simReq // evServed's request
}

type eventKind uint8

const (
	evSecond eventKind = iota // once per virtual second
	evServed                  // the upstream has served r
	evThink                   // a task is back from its think time
	evWake                    // the rate control's wake-up
	evPace                    // the doubling's pacing hands out a slot
	evArrive                  // r arrives at the upstream after a stall
)

// events is a min-heap of events, by instant then by order of scheduling.
// Typed, on integers, not container/heap on time.Time: a heap operation
// per event, hundreds of thousands a run, cost most of the simulations'
// CPU under -race.
type events []event

func (e events) less(i, j int) bool {
	return e[i].ns < e[j].ns || e[i].ns == e[j].ns && e[i].seq < e[j].seq
}

func (e *events) push(x event) {
	*e = append(*e, x)
	h := *e
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (e *events) pop() event {
	h := *e
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = event{}
	h = h[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*e = h
	return top
}

// simulate runs cfg and returns what it saw.
func simulate(t *testing.T, cfg simConfig) *simRun {
	t.Helper()
	t0 := time.Unix(1_000_000, 0)
	rng := rand.New(rand.NewPCG(cfg.seed, 1))
	lc := cfg.limit
	if cfg.rate != nil {
		lc.Rate, lc.Loose = cfg.rate.rc.Steady, cfg.rate.rc.Loose // as sources.New wires them
	}
	l := &Limiter{now: func() time.Time { panic("the simulation passes its own clock") }}
	l.ctl.init(lc.withDefaults(), t0)
	run := &simRun{l: l}
	clock := t0
	if cfg.rate != nil {
		cfg.rate.rc.SetClock(func() time.Time { return clock })
	}
	if cfg.debug {
		l.ctl.debug = func(f string, a ...any) { t.Logf("%6.1fs "+f, append([]any{clock.Sub(t0).Seconds()}, a...)...) }
	}
	var q events
	var seq int32
	schedule := func(at time.Time, kind eventKind, r *simReq) {
		seq++
		q.push(event{ns: at.UnixNano(), seq: seq, kind: kind, r: r})
	}
	up := cfg.up
	active, ready := 0, 0 // tasks with a request out; tasks waiting for a slot
	if cfg.tasks > 0 {
		ready = cfg.tasks
	}
	var fill func(now time.Time)
	var send func(now time.Time, r *simReq)
	answer := func(now time.Time, r *simReq, o Outcome) {
		lat := now.Sub(r.sent)
		if o == OK && cfg.rate != nil {
			cfg.rate.rc.SuccessAt(r.sent) // as the client does: at its send time
		}
		l.put(now, r.t, Sample{Endpoint: "/e", Outcome: o, Latency: lat, Queued: r.sent.Sub(r.acquired)})
		run.answers = append(run.answers, simAnswer{at: now.Sub(t0), latency: lat, outcome: o})
		active--
		if o == Throttled {
			// The same request again, as the client does after a 429.
			if cfg.tasks > 0 {
				ready++
			}
			fill(now)
			return
		}
		if cfg.tasks > 0 {
			schedule(now.Add(cfg.think), evThink, nil)
		}
		fill(now)
	}
	serve := func(now time.Time, r *simReq) {
		up.busy++
		schedule(now.Add(up.service(rng)), evServed, r)
	}
	served := func(now time.Time, r *simReq) {
		up.busy--
		o := OK
		if rng.Float64() < up.errRate {
			o = Failed
		}
		for len(up.queue) > 0 && (up.servers == 0 || up.busy < up.servers) {
			next := up.queue[0]
			up.queue = up.queue[1:]
			serve(now, next)
		}
		answer(now, r, o)
	}
	// Requests waiting for a rate token, first come first served, and one
	// wake-up for them all at the instant the controller names. The
	// client's workers each sleep until the next token is due and the
	// first awake takes it; one wake-up taking tokens for the queue's head
	// in turn does the same, without every waiter asking at every token
	// (hundreds of events a token at 20 s answers and 100/s).
	var waiting []*simReq
	var wakeAt time.Time // the pending wake-up (zero: none)
	var transmit func(now time.Time, r *simReq)
	sleep := func(now time.Time, wait time.Duration) {
		if at := now.Add(wait); wakeAt.IsZero() || at.Before(wakeAt) {
			wakeAt = at
			schedule(at, evWake, nil)
		}
	}
	wake := func(now time.Time) {
		if !now.Equal(wakeAt) {
			return // superseded by an earlier wake-up
		}
		wakeAt = time.Time{}
		for len(waiting) > 0 {
			if wait := cfg.rate.rc.Take(); wait > 0 {
				sleep(now, wait)
				return
			}
			r := waiting[0]
			waiting = waiting[1:]
			transmit(now, r)
		}
	}
	send = func(now time.Time, r *simReq) {
		if sr := cfg.rate; sr != nil {
			if wait := sr.rc.Take(); wait > 0 {
				waiting = append(waiting, r)
				sleep(now, wait)
				return
			}
		}
		transmit(now, r)
	}
	var arrive func(now time.Time, r *simReq)
	transmit = func(now time.Time, r *simReq) {
		r.sent = now
		if up.stallEvery > 0 {
			if up.stall.IsZero() {
				up.stall = now.Add(time.Duration(rng.ExpFloat64() * float64(up.stallEvery)))
			}
			for !now.Before(up.stall.Add(up.stallFor)) {
				up.stall = up.stall.Add(up.stallFor + time.Duration(rng.ExpFloat64()*float64(up.stallEvery)))
			}
			if !now.Before(up.stall) {
				schedule(up.stall.Add(up.stallFor), evArrive, r)
				return
			}
		}
		arrive(now, r)
	}
	arrive = func(now time.Time, r *simReq) {
		if up.burst > 0 && rng.Float64() < up.burst {
			answer(now, r, Failed)
			return
		}
		if up.quota != nil && !up.quota.AllowN(now, 1) {
			if cfg.debug {
				t.Logf("%6.1fs 429", now.Sub(t0).Seconds())
			}
			if sr := cfg.rate; sr != nil {
				sr.rc.Throttled(r.sent, sr.pause) // as the client does: at its send time
			}
			answer(now, r, Throttled)
			return
		}
		if len(up.queue) == 0 && (up.servers == 0 || up.busy < up.servers) {
			serve(now, r)
		} else {
			up.queue = append(up.queue, r)
		}
	}
	var paceAt time.Time // the pending wake-up of the pacing (zero: none)
	fill = func(now time.Time) {
		for cfg.tasks == 0 || ready > 0 {
			tk, pace, ok := l.tryAcquire(now)
			if !ok {
				// The requests waiting for a slot wake when the pacing
				// hands out the next, as Acquire's timer wakes them.
				if at := now.Add(pace); cfg.pacing && pace > 0 && (paceAt.IsZero() || at.Before(paceAt) || !paceAt.After(now)) {
					paceAt = at
					schedule(at, evPace, nil)
				}
				return
			}
			if cfg.tasks > 0 {
				ready--
			}
			active++
			send(now, &simReq{t: tk, acquired: now})
		}
	}
	second := func(now time.Time) {
		el := now.Sub(t0)
		if cfg.at != nil {
			cfg.at(el, l)
		}
		l.ctl.tick(now, l.held)
		st := l.ctl.status(l.held)
		centre := l.ctl.centre
		if cfg.debug && cfg.rate != nil && el < 120*time.Second {
			t.Logf("%6.1fs rate %.2f steady %.2f limit %d held %d", el.Seconds(), cfg.rate.rc.Current(), cfg.rate.rc.Steady(), st.Limit, st.InFlight)
		}
		p := simPoint{at: el, limit: st.Limit, inFlight: st.InFlight, centre: centre, status: st}
		if cfg.rate != nil {
			p.steady = cfg.rate.rc.Steady()
		}
		run.trace = append(run.trace, p)
		fill(now)
		schedule(now.Add(time.Second), evSecond, nil)
	}
	schedule(t0, evSecond, nil)
	start, end := t0.UnixNano(), t0.Add(cfg.d).UnixNano()
	for len(q) > 0 {
		e := q.pop()
		if e.ns >= end {
			break
		}
		now := t0.Add(time.Duration(e.ns - start))
		clock = now
		switch e.kind {
		case evSecond:
			second(now)
		case evServed:
			served(now, e.r)
		case evThink:
			ready++
			fill(now)
		case evWake:
			wake(now)
		case evArrive:
			arrive(now, e.r)
		case evPace:
			if now.Equal(paceAt) {
				paceAt = time.Time{}
				fill(now)
			}
		}
	}
	if os.Getenv("SIMFINGERPRINT") != "" {
		t.Logf("fingerprint %s", run.fingerprint())
	}
	return run
}

// fingerprint hashes everything a run saw (SIMFINGERPRINT=1 logs it): a
// change that only makes the simulation cheaper must leave it as it was.
func (r *simRun) fingerprint() string {
	h := fnv.New64a()
	for _, a := range r.answers {
		fmt.Fprint(h, a.at, a.latency, a.outcome)
	}
	for _, p := range r.trace {
		fmt.Fprint(h, p.at, p.limit, p.inFlight, math.Float64bits(p.centre), math.Float64bits(p.steady), p.status)
	}
	ms := slices.SortedFunc(maps.Keys(r.l.ctl.moves), func(a, b Move) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, m := range ms {
		fmt.Fprint(h, m, r.l.ctl.moves[m])
	}
	return fmt.Sprintf("%d answers %d points %x", len(r.answers), len(r.trace), h.Sum64())
}

// throughput is the OK answers per second in [from, to).
func (r *simRun) throughput(from, to time.Duration) float64 {
	n := 0
	for _, a := range r.answers {
		if a.outcome == OK && a.at >= from && a.at < to {
			n++
		}
	}
	return float64(n) / (to - from).Seconds()
}

// medianLatency is the median answer time of the OK answers in [from, to).
func (r *simRun) medianLatency(from, to time.Duration) time.Duration {
	var ls []time.Duration
	for _, a := range r.answers {
		if a.outcome == OK && a.at >= from && a.at < to {
			ls = append(ls, a.latency)
		}
	}
	if len(ls) == 0 {
		return 0
	}
	slices.Sort(ls)
	return ls[len(ls)/2]
}

// meanLatency is the mean answer time of the OK answers in [from, to).
func (r *simRun) meanLatency(from, to time.Duration) time.Duration {
	var sum time.Duration
	n := 0
	for _, a := range r.answers {
		if a.outcome == OK && a.at >= from && a.at < to {
			sum += a.latency
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// limits is the least and most limit in [from, to).
func (r *simRun) limits(from, to time.Duration) (lo, hi int) {
	lo = math.MaxInt
	for _, p := range r.trace {
		if p.at >= from && p.at < to {
			lo, hi = min(lo, p.limit), max(hi, p.limit)
		}
	}
	return lo, hi
}

// logTrace logs the limit every step seconds.
func (r *simRun) logTrace(t *testing.T, step int) {
	t.Helper()
	for i, p := range r.trace {
		if i%step == 0 {
			t.Logf("t=%4.0fs limit %4d (centre %6.1f) in flight %4d %s (last: %s) latency %v", p.at.Seconds(), p.limit, p.centre, p.inFlight, p.status.Phase, p.status.Last, p.status.Latency.Round(time.Millisecond))
		}
	}
}

func uniform(lo, hi time.Duration) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration { return lo + time.Duration(r.Int64N(int64(hi-lo))) }
}

func exponential(mean time.Duration) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * float64(mean)) }
}

// realLike is the real service's answer times: 2-4 s, and a tenth of the
// requests (transcripts, comments with replies) 5-30 s.
func realLike(r *rand.Rand) time.Duration {
	if r.Float64() < 0.1 {
		return uniform(5*time.Second, 30*time.Second)(r)
	}
	return uniform(2*time.Second, 4*time.Second)(r)
}

// A quota of R requests/s (burst 10) and answers in 3 s (2-4 s) or 20 s
// (13.3-26.7 s), with no settings, as workload 17 runs them (its answer
// times, lengths and start): once the start is over (the doubling from
// InitialDefault to what the rate needs, an answer time each, and two
// more), the run gets 0.9 of the quota or more (issue 34's aim); the limit
// holds near what the rate needs (rate x answer time, with a margin)
// without running away, and does not collapse. The requests waiting for a
// slot wake when the doubling's pacing hands one out, as in the client:
// the first 429 then comes as the doubling's sends cross the quota, from
// requests that left under it on average, and the first estimate is a
// loose lower bound (46/s for 100/s at 20 s answers, seed 1). Before, its
// hold lasted four answer times (a minute at 20 s), the probe's 429 went
// back to it for another answer time, and the burst it read (17 for 10)
// held every later estimate 7% under R: 0.75 and 0.74 of 100/s after the
// start at 20 s answers (seeds 1 and 2; workload 17 measured 0.728), 0.89
// of 20/s at 3 s answers (seed 5; measured 0.891). What moves the figure
// from seed to seed is the 429s after the start (the first estimate's
// probe, then a probe a minute or so): each costs a pause (Retry-After,
// 1 s, for a bucket that has a token again in 10 ms) and an answer time
// held at 0.85 of the rate, some 1% of the window at 3 s and 100/s (0.98
// with one, 0.94 with six); the log says how many. Seeds 15, 16, 19 and
// 27 at 3 s and 100/s read 0.85-0.86 while the limit stayed sized for a
// loose first read during its probe (see followRate); 30 seeds of each
// case at 100/s now read 0.915-0.986.
func TestSimRateLimitedLatency(t *testing.T) {
	t.Parallel()
	first5 := []uint64{1, 2, 3, 4, 5}
	for _, c := range []struct {
		name    string
		r       float64
		service func(*rand.Rand) time.Duration
		mean    time.Duration
		d       time.Duration
		seeds   []uint64
		stall   time.Duration // requests stall on their way for this long, every 10 s or so
	}{
		{"3s at 20/s", 20, uniform(2*time.Second, 4*time.Second), 3 * time.Second, 150 * time.Second, first5, 0},
		{"3s at 100/s", 100, uniform(2*time.Second, 4*time.Second), 3 * time.Second, 150 * time.Second, append(first5, 15, 16, 19, 27), 0},
		{"20s at 20/s", 20, uniform(13333*time.Millisecond, 26667*time.Millisecond), 20 * time.Second, 480 * time.Second, first5, 0},
		{"20s at 100/s", 100, uniform(13333*time.Millisecond, 26667*time.Millisecond), 20 * time.Second, 480 * time.Second, first5, 0},
		// Bunches of 8 at the upstream, of its burst of 10 (a bunch over
		// it is refused whatever the rate: 150 ms stalls read 0.69-0.82).
		{"3s at 100/s, 80 ms stalls", 100, uniform(2*time.Second, 4*time.Second), 3 * time.Second, 150 * time.Second, first5[:3], 80 * time.Millisecond},
		{"20s at 100/s, 80 ms stalls", 100, uniform(13333*time.Millisecond, 26667*time.Millisecond), 20 * time.Second, 480 * time.Second, first5[:3], 80 * time.Millisecond},
	} {
		for _, seed := range c.seeds {
			t.Run(fmt.Sprintf("%s seed %d", c.name, seed), func(t *testing.T) {
				t.Parallel()
				up := &simUpstream{service: c.service, quota: rate.NewLimiter(rate.Limit(c.r), 10)}
				if c.stall > 0 {
					up.stallEvery, up.stallFor = 10*time.Second, c.stall
				}
				run := simulate(t, simConfig{up: up, rate: &simRate{rc: ratecontrol.New(0, 0), pause: time.Second}, d: c.d, seed: seed, pacing: true, debug: os.Getenv("SIMDEBUG") == fmt.Sprint(seed)})
				need := c.r * c.mean.Seconds()
				warm := time.Duration((max(math.Log2(need/InitialDefault), 0) + 2) * float64(c.mean))
				got := run.throughput(warm, c.d)
				half := c.d / 2
				lo, hi := run.limits(half, c.d)
				throttled := 0 // after the start: each costs a pause and a hold under the rate
				for _, a := range run.answers {
					if a.outcome == Throttled && a.at >= warm {
						throttled++
					}
				}
				t.Logf("%.1f answers/s after %v (%.3f of %v, %d 429s), %.3f of R·T + B over the run; limit %d-%d in the second half, need %.0f; moves %v",
					got, warm.Round(time.Second), got/c.r, c.r, throttled, run.throughput(0, c.d)*c.d.Seconds()/(c.r*c.d.Seconds()+10), lo, hi, need, run.l.ctl.moves)
				if got < 0.9*c.r {
					run.logTrace(t, 20)
					t.Errorf("%.1f answers/s after the start, want >= 0.9 of %v", got, c.r)
				}
				if float64(hi) > 1.5*need+rateSlack+2 {
					t.Errorf("limit up to %d, want <= 1.5 x %.0f: it runs away", hi, need)
				}
				// Under what the rate in force needs: while the rate control
				// holds a first estimate below the quota the limit follows
				// it, and comes back up once the probe has measured.
				for _, p := range run.trace {
					if need := min(c.r, p.steady) * c.mean.Seconds(); p.at >= half && p.at < c.d && float64(p.limit) < 0.9*need {
						t.Errorf("limit down to %d at %v, want >= 0.9 x %.0f (%.1f/s x %v): it collapsed", p.limit, p.at, need, min(c.r, p.steady), c.mean)
						break
					}
				}
			})
		}
	}
}

// An upstream of c servers taking requests first come first served (an
// M/M/c queue, and ones whose service takes 2-4 s, or the real service's
// answer times): beyond c requests in flight the answers only wait longer.
// The limit settles near the knee: throughput within 10% of c / mean
// service time, the median answer time within 1.5 times its floor, over
// a few seeds. Exponential service times are the noisiest (a spread of
// log answer times of 1.3, against 0.2 for 2-4 s): the rounds read the
// elasticity through 40 times the noise, and the centre wanders more;
// its throughput floor is 0.85.
func TestSimSaturatingUpstream(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		servers int
		service func(*rand.Rand) time.Duration
		floor   time.Duration // median service time
		mean    time.Duration
		aim     float64 // of the knee's throughput
		seeds   uint64
	}{
		{"M/M/40, 1 s", 40, exponential(time.Second), 693 * time.Millisecond, time.Second, 0.85, 3},
		{"M/G/60, 2-4 s", 60, uniform(2*time.Second, 4*time.Second), 3 * time.Second, 3 * time.Second, 0.9, 3},
		{"M/G/500, 2-4 s", 500, uniform(2*time.Second, 4*time.Second), 3 * time.Second, 3 * time.Second, 0.9, 1},
		{"M/G/20, 0.1-0.3 s", 20, uniform(100*time.Millisecond, 300*time.Millisecond), 200 * time.Millisecond, 200 * time.Millisecond, 0.9, 1},
		{"M/G/60, real-like", 60, realLike, 3110 * time.Millisecond, 4450 * time.Millisecond, 0.9, 3},
	} {
		for seed := uint64(1); seed <= c.seeds; seed++ {
			t.Run(fmt.Sprintf("%s seed %d", c.name, seed), func(t *testing.T) {
				t.Parallel()
				d, warm := 420*time.Second, 120*time.Second
				up := &simUpstream{servers: c.servers, service: c.service}
				run := simulate(t, simConfig{up: up, d: d, seed: seed})
				knee := float64(c.servers) / c.mean.Seconds()
				got := run.throughput(warm, d)
				med := run.medianLatency(warm, d)
				mean := run.meanLatency(warm, d)
				t.Logf("mean answer time %v: %.2f x the mean service time %v", mean.Round(time.Millisecond), mean.Seconds()/c.mean.Seconds(), c.mean)
				lo, hi := run.limits(warm, d)
				t.Logf("%.1f answers/s (%.3f of the knee's %.1f); median answer time %v (%.2f x its floor %v); limit %d-%d for %d servers; moves %v",
					got, got/knee, knee, med.Round(time.Millisecond), med.Seconds()/c.floor.Seconds(), c.floor, lo, hi, c.servers, run.l.ctl.moves)
				if got < c.aim*knee {
					run.logTrace(t, 30)
					t.Errorf("throughput %.3f of the knee's, want >= %v", got/knee, c.aim)
				}
				if med.Seconds() > 1.5*c.floor.Seconds() {
					t.Errorf("median answer time %.2f x its floor, want <= 1.5", med.Seconds()/c.floor.Seconds())
				}
				// Issue 34's aim: the mean answer time within 1.5 x its
				// floor (the mean service time, no queue) at the throughput
				// above.
				if mean.Seconds() > 1.5*c.mean.Seconds() {
					t.Errorf("mean answer time %.2f x the mean service time, want <= 1.5", mean.Seconds()/c.mean.Seconds())
				}
			})
		}
	}
}

// The upstream's knee halves for a minute, then recovers: the limit
// follows it down (its centre within 1.5 x the new knee) within 30 s and
// back up (throughput within 10% of the knee's again) within 45 s, at
// answer times of 2-4 s: a move needs three fresh rounds of about half an
// answer time and their answers; downward, one move to the knee the
// answer times show; upward, steps that grow, then doubling.
func TestSimDegradeAndRecover(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			const servers = 60
			down, up, end := 240*time.Second, 300*time.Second, 420*time.Second
			u := &simUpstream{servers: servers, service: uniform(2*time.Second, 4*time.Second)}
			run := simulate(t, simConfig{up: u, d: end, seed: seed, at: func(el time.Duration, _ *Limiter) {
				switch el {
				case down:
					u.servers = servers / 2
				case up:
					u.servers = servers
				}
			}})
			// Down: the first second from which the limit's centre stays
			// within 1.5 x the new knee until the recovery.
			followDown := time.Duration(-1)
			for _, p := range run.trace {
				if p.at < down || p.at >= up {
					continue
				}
				if p.centre > 1.5*servers/2 {
					followDown = -1
				} else if followDown < 0 {
					followDown = p.at - down
				}
			}
			// Up: the first 5 s window after the recovery at >= 0.9 of the
			// knee's throughput.
			knee := servers / 3.0
			followUp := time.Duration(-1)
			for w := up; w+5*time.Second <= end; w += time.Second {
				if run.throughput(w, w+5*time.Second) >= 0.9*knee {
					followUp = w - up
					break
				}
			}
			during := run.throughput(down+30*time.Second, up)
			t.Logf("followed down in %v, up in %v; %.1f answers/s during the degradation (knee %.1f); moves %v", followDown, followUp, during, knee/2, run.l.ctl.moves)
			if followDown < 0 || followDown > 30*time.Second {
				run.logTrace(t, 5)
				t.Errorf("followed the degradation down in %v, want <= 30 s", followDown)
			}
			if followUp < 0 || followUp > 45*time.Second {
				run.logTrace(t, 5)
				t.Errorf("followed the recovery up in %v, want <= 45 s", followUp)
			}
			if during < 0.85*knee/2 {
				t.Errorf("%.1f answers/s during the degradation, want >= 0.85 x %.1f", during, knee/2)
			}
		})
	}
}

// The real service's answer times (2-4 s, a tenth 5-30 s) and no knee: the
// noise never reads as a queue. With 500 lists to walk the limit grows to
// keep them all going (and not far beyond: a round whose slots are not
// used is no reason to grow), and the answers come at the rate 500 lists
// allow.
func TestSimNoisyLatencyNoKnee(t *testing.T) {
	t.Parallel()
	const tasks = 500
	d, warm := 300*time.Second, 60*time.Second
	up := &simUpstream{service: realLike}
	run := simulate(t, simConfig{up: up, d: d, seed: 4, tasks: tasks, think: 5 * time.Millisecond})
	got, want := run.throughput(warm, d), tasks/4.45
	lo, hi := run.limits(warm, d)
	t.Logf("%.1f answers/s (%.3f of %.1f); limit %d-%d; moves %v", got, got/want, want, lo, hi, run.l.ctl.moves)
	if got < 0.9*want {
		run.logTrace(t, 10)
		t.Errorf("%.1f answers/s, want >= 0.9 x %.1f", got, want)
	}
	if lo < tasks {
		t.Errorf("limit down to %d with %d lists and no queue", lo, tasks)
	}
	if hi > 4*tasks {
		t.Errorf("limit up to %d with %d lists: it ran away", hi, tasks)
	}
	if n := run.l.ctl.moves[Move{Reason: ReasonLatency}]; n > 0 {
		t.Errorf("%d moves down on latency with no queue", n)
	}
}

// Failures: a background 2% of 5xx moves nothing; a burst of 503s (half of
// the answers for 30 s, at once) cuts the limit, and it comes back after.
func TestSimErrorBursts(t *testing.T) {
	t.Parallel()
	const servers = 60
	burst, calm, end := 200*time.Second, 230*time.Second, 400*time.Second
	up := &simUpstream{servers: servers, service: uniform(2*time.Second, 4*time.Second), errRate: 0.02}
	var before map[Move]int64
	run := simulate(t, simConfig{up: up, d: end, seed: 5, at: func(el time.Duration, l *Limiter) {
		switch el {
		case burst:
			before = maps.Clone(l.ctl.moves)
			up.burst = 0.5
		case calm:
			up.burst = 0
		}
	}})
	cuts := run.l.ctl.moves[Move{Reason: ReasonErrors}] - before[Move{Reason: ReasonErrors}]
	knee := servers / 3.0
	after := run.throughput(calm+60*time.Second, end)
	t.Logf("%d cuts for errors before the burst, %d in it; %.1f answers/s from 60 s after it (knee %.1f)", before[Move{Reason: ReasonErrors}], cuts, after, knee)
	if n := before[Move{Reason: ReasonErrors}]; n != 0 {
		t.Errorf("%d cuts for a background 2%% of failures", n)
	}
	if cuts == 0 {
		run.logTrace(t, 5)
		t.Error("no cut for a burst of 503s")
	}
	if lo, _ := run.limits(burst+10*time.Second, calm); lo > servers {
		t.Errorf("limit %d or more during the burst, want cut below %d", lo, servers)
	}
	if after < 0.9*knee {
		run.logTrace(t, 5)
		t.Errorf("%.1f answers/s after the burst, want >= 0.9 x %.1f", after, knee)
	}
}

// A job file's limits.workers is a ceiling the limit never passes, and a
// few lists leave it where they need it.
func TestSimCeilingAndFewLists(t *testing.T) {
	t.Parallel()
	up := &simUpstream{service: uniform(2*time.Second, 4*time.Second)}
	run := simulate(t, simConfig{up: up, d: 120 * time.Second, seed: 6, limit: Config{Ceiling: 10}})
	if _, hi := run.limits(0, 120*time.Second); hi > 10 {
		t.Errorf("limit up to %d with the ceiling 10", hi)
	}
	if got := run.throughput(30*time.Second, 120*time.Second); got < 0.95*10/3.0 {
		t.Errorf("%.2f answers/s at the ceiling 10, want %.2f", got, 10/3.0)
	}
	run = simulate(t, simConfig{up: up, d: 120 * time.Second, seed: 6, tasks: 20, think: 5 * time.Millisecond})
	if _, hi := run.limits(0, 120*time.Second); hi > 4*20 {
		t.Errorf("limit up to %d with 20 lists", hi)
	}
}

// At the ceiling (limits.workers: 16 lists, 16 workers) with short, noisy
// answer times (50 ms ± 5, a fifth of them later by 20 ms on average, as
// on a loaded machine), the limit stays at the ceiling: rounds at one
// limit differ in load only by what the runner happens to keep going,
// which is no doubling to read a knee from. Before, seeds 1 and 7 read
// one there and spent the run at 12-16 (0.92 of what 16 make).
func TestSimCeilingAtShortNoisyAnswers(t *testing.T) {
	t.Parallel()
	noisy := func(r *rand.Rand) time.Duration {
		d := uniform(45*time.Millisecond, 55*time.Millisecond)(r)
		if r.Float64() < 0.2 {
			d += exponential(20 * time.Millisecond)(r)
		}
		return d
	}
	d := 60 * time.Second
	for _, seed := range []uint64{1, 7} {
		up := &simUpstream{service: noisy}
		run := simulate(t, simConfig{up: up, d: d, seed: seed, tasks: 16, think: 4 * time.Millisecond, limit: Config{Ceiling: 16}})
		if lo, _ := run.limits(5*time.Second, d); lo < 16 {
			run.logTrace(t, 5)
			t.Errorf("seed %d: limit down to %d at the ceiling 16 with 16 lists and no knee; moves %v", seed, lo, run.l.ctl.moves)
		}
	}
}

// A quota of 40/s (burst 10) with no settings and answers in 200 ms or
// 500 ms ± a fifth, 100 lists: the start's slow start sends in bunches
// under the rate, and its first 429 is a bunch's. Over two minutes, start
// included, the run gets 0.95 of R·T + B at 200 ms (issue 34's aim), and
// at 500 ms, where the start takes longer, 0.9, 0.94 and 0.9 with seeds
// 2-4. Before, the rate control read a rate from those bunches by growing
// the burst until nothing was left to measure (12/s), or read a loose
// lower bound (22.7/s), and held it a minute: 0.58 at 200 ms, 0.86 and
// 0.73 at 500 ms; or read 43.75/s, and every probe after the drop that
// followed took 90% of it for the quota come back: 0.82.
func TestSimQuotaAtShortAnswers(t *testing.T) {
	t.Parallel()
	const r, b = 40.0, 10
	d := 120 * time.Second
	for _, c := range []struct {
		answer time.Duration
		seed   uint64
		aim    float64
	}{{200 * time.Millisecond, 1, 0.95}, {200 * time.Millisecond, 4, 0.95}, {500 * time.Millisecond, 2, 0.9}, {500 * time.Millisecond, 3, 0.94}, {500 * time.Millisecond, 4, 0.9}} {
		up := &simUpstream{service: uniform(c.answer*4/5, c.answer*6/5), quota: rate.NewLimiter(r, b)}
		run := simulate(t, simConfig{up: up, rate: &simRate{rc: ratecontrol.New(0, 0), pause: time.Second}, d: d, seed: c.seed, tasks: 100, think: 3 * time.Millisecond})
		got := run.throughput(0, d) * d.Seconds() / (r*d.Seconds() + b)
		t.Logf("%v seed %d: %.3f of R·T + B; %.1f/s in the first 10 s; moves %v", c.answer, c.seed, got, run.throughput(0, 10*time.Second), run.l.ctl.moves)
		if got < c.aim {
			run.logTrace(t, 10)
			t.Errorf("%v seed %d: %.3f of R·T + B, want >= %v", c.answer, c.seed, got, c.aim)
		}
	}
}
