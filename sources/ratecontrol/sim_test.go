package ratecontrol

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// simUpstream is an upstream quota in virtual time: a token bucket of rate
// R and burst B per key that answers 429 with a Retry-After in whole
// seconds (at least 1), or a fixed pause for the header's other forms (a
// date, none or garbage, which the client turns into a back-off).
type simUpstream struct {
	lim   *rate.Limiter
	pause time.Duration // 0: Retry-After in whole seconds
	// jitter adds a uniform [0, jitter) to every answer time, drawn from
	// rng.
	jitter time.Duration
	rng    *rand.Rand
	// connect delays each worker's first request on its way by a uniform
	// [0, connect), drawn from rng: a new connection's setup, which spreads
	// the arrivals of the start's requests, all sent at once.
	connect time.Duration
	// stagger starts worker i at t0 + i x stagger: the start's requests
	// leave together, each at its own instant.
	stagger time.Duration
}

func (u *simUpstream) arrive(t time.Time) (ok bool, retry time.Duration) {
	if u.lim.TokensAt(t) >= 1 {
		u.lim.AllowN(t, 1)
		return true, 0
	}
	if u.pause > 0 {
		return false, u.pause
	}
	wait := (1 - u.lim.TokensAt(t)) / float64(u.lim.Limit())
	return false, time.Duration(max(1, math.Ceil(wait))) * time.Second
}

// simRun is what a simulated crawl saw at the upstream.
type simRun struct {
	oks, limited []time.Time
}

func (r *simRun) count(ts []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// simWorker is one worker of the simulation: asking the control for
// leave, or waiting for an answer.
type simWorker struct {
	at       time.Time
	sent     time.Time
	inflight bool
	ok       bool
	retry    time.Duration
	// connecting: its first request is on its way (simUpstream.connect);
	// connected: it was sent.
	connecting, connected bool
}

// simulate runs workers against up through rc from t0 for d, in virtual
// time, with no sleeps: each request reaches the upstream 1 ms after it
// leaves and is answered latency after it leaves; a worker spends 2 ms on
// an answer before asking again. at(t) is called before each event, for
// scripted changes.
func simulate(t *testing.T, rc *Controller, up *simUpstream, t0 time.Time, workers int, latency, d time.Duration, at func(t time.Time)) *simRun {
	return simulateMany(t, []*Controller{rc}, up, t0, workers, latency, d, at)[0]
}

// simulateMany is simulate with one process per rate control, each with
// its workers, all on one upstream key; it returns what each process saw.
// A process whose control is nil is not running (it may be started by at).
func simulateMany(t *testing.T, rcs []*Controller, up *simUpstream, t0 time.Time, workers int, latency, d time.Duration, at func(t time.Time)) []*simRun {
	t.Helper()
	for _, rc := range rcs {
		if rc != nil {
			rc.now = func() time.Time { panic("the simulation passes its own clock") }
		}
	}
	ws := make([]simWorker, workers*len(rcs))
	for i := range ws {
		ws[i].at = t0.Add(time.Duration(i%workers) * up.stagger)
	}
	runs := make([]*simRun, len(rcs))
	for i := range runs {
		runs[i] = &simRun{}
	}
	end := t0.Add(d)
	q := make(workerQueue, len(ws))
	for i := range ws {
		q[i] = workerEvent{ns: ws[i].at.UnixNano(), i: i}
	}
	q.init()
	// Workers waiting for a token wake together when it is due, and all
	// but the first find it taken: each asks the control, in the same
	// state at the same instant, and is told the same wait. One asks; the
	// others of its process at that instant, with nothing else between,
	// take its answer (a failed step changes nothing a second would see).
	// Asked each, they were most of the simulations' CPU under -race.
	var herd struct {
		p  int
		ns int64
		at time.Time // zero: no failed step just before
	}
	for ; ; q.fixFirst(ws[q[0].i].at) {
		wi := q[0].i
		w, p := &ws[wi], wi/workers
		now := w.at
		if !now.Before(end) {
			if os.Getenv("SIMFINGERPRINT") != "" {
				t.Logf("fingerprint %s", fingerprint(runs, rcs, end))
			}
			return runs
		}
		if at != nil {
			at(now)
		}
		rc := rcs[p]
		waiting := rc != nil && !w.connecting && !w.inflight
		if waiting && !herd.at.IsZero() && herd.p == p && herd.ns == q[0].ns {
			w.at = herd.at
			continue
		}
		herd.at = time.Time{}
		switch {
		case rc == nil && !w.inflight:
			w.at = now.Add(10 * time.Millisecond)
		case rc == nil:
			w.inflight = false // its process died with the request out
		case w.connecting:
			w.connecting = false
			w.arrive(up, runs[p], w.sent, now, latency)
		case w.inflight:
			w.answered(rc, now)
		default:
			if !w.send(rc, up, runs[p], now, latency) {
				herd.p, herd.ns, herd.at = p, q[0].ns, w.at
			}
		}
	}
}

// fingerprint hashes what the runs saw and where each control ended
// (SIMFINGERPRINT=1 logs it): a change that only makes the simulation
// cheaper must leave it as it was.
func fingerprint(runs []*simRun, rcs []*Controller, end time.Time) string {
	h := fnv.New64a()
	n := 0
	for _, r := range runs {
		for _, ts := range [][]time.Time{r.oks, r.limited} {
			n += len(ts)
			fmt.Fprint(h, len(ts))
			for _, t := range ts {
				fmt.Fprint(h, t.UnixNano())
			}
		}
	}
	for _, rc := range rcs {
		if rc == nil {
			continue
		}
		fmt.Fprintf(h, "%+v %+v %+v %v %v", rc.quota, rc.hold, rc.marks, rc.until.UnixNano(), rc.interim)
		if rc.limiter != nil {
			fmt.Fprint(h, float64(rc.limiter.Limit()), rc.limiter.Burst(), rc.limiter.TokensAt(end))
		}
	}
	return fmt.Sprintf("%d answers %x", n, h.Sum64())
}

// workerQueue orders the workers by their next event, the first index
// first among equals: a min-heap on their instants' UnixNano. Typed, not
// container/heap on time.Time: a heap operation per event cost a third of
// the simulations' CPU under -race.
type workerQueue []workerEvent

// workerEvent is worker i's next event, at ns.
type workerEvent struct {
	ns int64
	i  int
}

func (q workerQueue) less(a, b int) bool {
	return q[a].ns < q[b].ns || q[a].ns == q[b].ns && q[a].i < q[b].i
}

func (q workerQueue) init() {
	for i := len(q)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

// fixFirst moves the first worker to its place after its event, which
// moved its next one to at.
func (q workerQueue) fixFirst(at time.Time) {
	q[0].ns = at.UnixNano()
	q.down(0)
}

func (q workerQueue) down(i int) {
	for {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q.less(l, m) {
			m = l
		}
		if r < len(q) && q.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
}

// answered hands the answer to w's request to rc at now: a success, or a
// 429 announced to the other processes when it starts a pause.
func (w *simWorker) answered(rc *Controller, now time.Time) {
	w.inflight = false
	rc.mu.Lock()
	if w.ok {
		rc.successAt(now, w.sent) // as the client does: at the send time
	} else if rc.throttledSent(now, w.sent, w.retry) && rc.share.sharer != nil {
		rc.share.sharer.Paused(w.retry)
	}
	rc.mu.Unlock()
	w.at = now.Add(2 * time.Millisecond)
}

// send asks rc for leave at now and, given it, sends w's request to up,
// recording its fate in run; otherwise w waits as long as rc says. It
// reports whether rc gave leave.
func (w *simWorker) send(rc *Controller, up *simUpstream, run *simRun, now time.Time, latency time.Duration) bool {
	if wait := rc.step(now); wait > 0 {
		w.at = now.Add(wait)
		return false
	}
	if up.connect > 0 && !w.connected {
		w.connected, w.connecting = true, true
		w.sent, w.at = now, now.Add(time.Millisecond+time.Duration(up.rng.Int64N(int64(up.connect))))
		return true
	}
	w.arrive(up, run, now, now.Add(time.Millisecond), latency)
	return true
}

// arrive is w's request, sent at sent, arriving at up at arrival (a
// millisecond after it was sent, or when its connection is set up) and
// answered latency after it was sent on a connection up.
func (w *simWorker) arrive(up *simUpstream, run *simRun, sent, arrival time.Time, latency time.Duration) {
	w.ok, w.retry = up.arrive(arrival)
	if w.ok {
		run.oks = append(run.oks, arrival)
	} else {
		run.limited = append(run.limited, arrival)
	}
	w.inflight, w.sent = true, sent
	w.at = arrival.Add(latency - time.Millisecond)
	if up.jitter > 0 {
		w.at = w.at.Add(time.Duration(up.rng.Int64N(int64(up.jitter))))
	}
	if !w.ok && up.jitter > 0 {
		w.at = arrival // a 429 is answered at once, whatever the answer times
	}
}

// Without a ceiling the first 429s install a bucket just under the quota,
// with the upstream's burst estimated, and the run then spends the whole
// quota with few 429s, whatever form the pause takes.
func TestRateControlFindsTheQuotaWithoutCeiling(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		pause time.Duration
		// connect spreads the arrivals of the start's requests (new
		// connections): read at their send times, they showed a burst
		// of 13 for 10, and every later read of the rate was (B - 10)/w
		// low, 47.5/s for 50 (workload 12 at 0.89-0.92, held at 47/s).
		// Read from the first 429's answer time alone, seed 1 still read
		// 11 (0.948) and seed 2 13 (0.925: its first 429 was to a
		// request sent again on a connection already up); each success's
		// own answer time reads 10 (0.969, 0.969).
		connect time.Duration
		seed    uint64
		floor   float64
	}{{"retry-after seconds", 0, 0, 1, 0.95}, {"back-off 500ms", 500 * time.Millisecond, 0, 1, 0.95}, {"back-off 250ms", 250 * time.Millisecond, 0, 1, 0.95},
		{"retry-after seconds, connections up within 100ms", 0, 100 * time.Millisecond, 1, 0.95},
		{"retry-after seconds, connections up within 100ms, seed 2", 0, 100 * time.Millisecond, 2, 0.95}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			const R, B, T = 50.0, 10, 180 * time.Second
			t0 := time.Unix(1_000_000, 0)
			up := &simUpstream{lim: rate.NewLimiter(R, B), pause: c.pause, connect: c.connect, stagger: 50 * time.Microsecond, rng: rand.New(rand.NewPCG(c.seed, 1))}
			up.lim.AllowN(t0, 0)
			rc := New(0, 1)
			var installed time.Time
			run := simulate(t, rc, up, t0, 16, 5*time.Millisecond, T, func(now time.Time) {
				if installed.IsZero() && rc.limiter != nil {
					installed = now
					if len(run0(rc)) == 0 {
						t.Error("bucket installed before any 429")
					}
				}
			})
			if installed.IsZero() {
				t.Fatal("no bucket installed")
			}
			if len(run.limited) == 0 || installed.Before(run.limited[0]) {
				t.Errorf("bucket installed at %v, first 429 at %v", installed.Sub(t0), run.limited[0].Sub(t0))
			}
			frac := float64(len(run.oks)) / (R*T.Seconds() + B)
			late := run.count(run.limited, t0.Add(10*time.Second), t0.Add(T))
			per1000 := 1000 * float64(late) / float64(run.count(run.oks, t0.Add(10*time.Second), t0.Add(T))+late)
			t.Logf("achieved %.3f of the quota; bucket after %v; estimate %.2f/s, burst %.0f; 429s %d (%d after 10 s, %.2f per 1000)",
				frac, installed.Sub(t0), rc.quota.rate, rc.quota.burst, len(run.limited), late, per1000)
			if frac < c.floor {
				t.Errorf("achieved %.3f of the allowed rate, want >= %v", frac, c.floor)
			}
			if per1000 > 5 {
				t.Errorf("%.2f 429s per 1000 after the first 10 s, want <= 5", per1000)
			}
			// The first read came as our bucket held the requests back,
			// from the pause before it: it is tight, and held as any other
			// (probed again 5 s later, it found the same for a pause).
			if n := run.count(run.limited, t0.Add(5*time.Second), t0.Add(30*time.Second)); n > 0 {
				t.Errorf("%d 429s from 5 s to 30 s: the first read was probed again", n)
			}
			if math.Abs(rc.quota.rate-R)/R > 0.03 {
				t.Errorf("estimate %.2f, want within 3%% of %v", rc.quota.rate, R)
			}
			if rc.quota.burst < B-2 || rc.quota.burst > B+2 {
				t.Errorf("burst estimate %v, want %d +- 2", rc.quota.burst, B)
			}
		})
	}
}

// run0 is a hook for the installed check: the 429 events seen (lastPause
// set, or pending).
func run0(rc *Controller) []time.Time {
	if rc.marks.lastPause.IsZero() {
		return nil
	}
	return []time.Time{rc.marks.lastPause}
}

// The quota drops mid-run, then rises again, with no ceiling: the drop is
// followed within a few 429s and the rise is found by the next probe.
//
// With the start's requests arriving spread out (new connections up
// within 100 ms), the burst read 13 for 10 and each phase's estimate was
// (B - 10)/w low: 47.4 for 50, held there (workload 12). Over the whole
// run (workload 12's figure), connections up within 30 ms: 0.927 -> 0.953
// of R·T+B (the burst read 11 from the first 429's answer time).
func TestRateControlFollowsAQuotaThatMoves(t *testing.T) {
	t.Parallel()
	for _, connect := range []time.Duration{0, 30 * time.Millisecond, 100 * time.Millisecond} {
		t.Run(fmt.Sprintf("connections up within %v", connect), func(t *testing.T) {
			t.Parallel()
			followsAQuotaThatMoves(t, connect)
		})
	}
}

func followsAQuotaThatMoves(t *testing.T, connect time.Duration) {
	const B = 10
	t0 := time.Unix(2_000_000, 0)
	up := &simUpstream{lim: rate.NewLimiter(50, B), connect: connect, stagger: 50 * time.Microsecond, rng: rand.New(rand.NewPCG(1, 1))}
	up.lim.AllowN(t0, 0)
	rc := New(0, 1)
	phase := 60 * time.Second
	var known [3]float64 // the estimate at the end of each phase
	run := simulate(t, rc, up, t0, 16, 5*time.Millisecond, 3*phase, func(now time.Time) {
		switch i := int(now.Sub(t0) / phase); {
		case i == 1 && up.lim.Limit() == 50:
			known[0] = rc.quota.rate
			up.lim.SetLimitAt(now, 20)
		case i == 2 && up.lim.Limit() == 20:
			known[1] = rc.quota.rate
			up.lim.SetLimitAt(now, 50)
		}
	})
	known[2] = rc.quota.rate
	frac := float64(len(run.oks)) / ((50+20+50)*phase.Seconds() + B)
	t.Logf("whole run: %.3f of the quota", frac)
	if frac < 0.945 {
		t.Errorf("whole run: %.3f of the quota, want >= 0.945", frac)
	}
	for i, want := range []float64{50, 20, 50} {
		from, to := t0.Add(time.Duration(i)*phase), t0.Add(time.Duration(i+1)*phase)
		got := float64(run.count(run.oks, from.Add(20*time.Second), to)) / 40
		t.Logf("phase %d (R = %v): estimate %.2f, %.2f/s in its last 40 s, %d 429s", i, want, known[i], got, run.count(run.limited, from, to))
		if math.Abs(known[i]-want)/want > 0.04 {
			t.Errorf("phase %d: estimate %.2f, want within 4%% of %v", i, known[i], want)
		}
		// After a drop the probes come every few seconds, straight to the
		// rate before it: the rise is found within about 5 s.
		if i == 2 {
			soon := float64(run.count(run.oks, from.Add(5*time.Second), from.Add(15*time.Second))) / 10
			t.Logf("phase 2: %.2f/s from 5 s to 15 s after the rise", soon)
			if soon < 0.9*want {
				t.Errorf("phase 2: %.2f/s from 5 s to 15 s after the rise, want >= 90%% of %v", soon, want)
			}
			// The quota came back to where it was: the probe at the
			// old estimate shows it without a 429 to measure it.
			if n := run.count(run.limited, from, to); n != 0 {
				t.Errorf("phase 2: %d 429s after the quota came back, want 0", n)
			}
		}
		// For a minute after a drop, a probe to the rate before it every
		// few seconds costs a pause at the low rate each (about R - B).
		floor := 0.92
		if i == 1 {
			floor = 0.87
		}
		if got < floor*want {
			t.Errorf("phase %d: %.2f/s in its last 40 s, want >= %.0f%% of %v", i, got, 100*floor, want)
		}
		if n := run.count(run.limited, from.Add(20*time.Second), to); n > 3*16 {
			t.Errorf("phase %d: %d 429s in its last 40 s", i, n)
		}
	}
}

// With a ceiling under the quota the rate stays at the ceiling and no 429
// comes; with one above it, the quota is found and the ceiling is never
// exceeded.
func TestRateControlRespectsTheCeiling(t *testing.T) {
	t.Parallel()
	for _, ceiling := range []float64{30, 75} {
		t0 := time.Unix(3_000_000, 0)
		up := &simUpstream{lim: rate.NewLimiter(50, 10)}
		up.lim.AllowN(t0, 0)
		rc := New(ceiling, 10)
		above := 0.0
		run := simulate(t, rc, up, t0, 16, 5*time.Millisecond, 120*time.Second, func(time.Time) {
			above = max(above, rc.currentLocked()-ceiling)
		})
		if above > 0 {
			t.Errorf("ceiling %v: the bucket's rate went %v above it", ceiling, above)
		}
		sent := float64(len(run.oks)+len(run.limited)) / 120
		t.Logf("ceiling %v: %.2f requests/s, %d 429s, estimate %.2f", ceiling, sent, len(run.limited), rc.quota.rate)
		if sent > ceiling*1.01+0.1 {
			t.Errorf("ceiling %v: sent %.2f/s", ceiling, sent)
		}
		if ceiling < 50 && len(run.limited) > 0 {
			t.Errorf("ceiling %v under the quota: %d 429s", ceiling, len(run.limited))
		}
		if ceiling > 50 && math.Abs(rc.quota.rate-50)/50 > 0.03 {
			t.Errorf("ceiling %v: estimate %.2f, want within 3%% of 50", ceiling, rc.quota.rate)
		}
	}
}

// simHub is the database of a shared quota in the simulation: the shared
// row, read by each process once a second (its heartbeat), and the pauses
// announced, delivered to the other processes 3 ms later.
type simHub struct {
	row     SharedQuota
	members []*simMember
	pauses  []simPause
	now     time.Time
	syncs   []simPause // reads of the row due
	// announce is how late the others learn of a joiner (at least 3 ms).
	announce time.Duration
}

type simPause struct {
	at time.Time
	to *simMember
	d  time.Duration
}

type simMember struct {
	hub      *simHub
	rc       *Controller
	view     SharedQuota
	lastSync time.Time
	left     bool
}

func (h *simHub) join(now time.Time, rc *Controller) *simMember {
	m := &simMember{hub: h, rc: rc}
	rc.share.sharer = m
	h.members = append(h.members, m)
	m.sync(now)
	// The others read the new share at once (pipeline/quota announces a
	// share that changes much), not at their next beat: 3 ms later, or
	// h.announce (the joiner's shares moves at its heartbeat and the
	// others' at the notification, a database round trip later).
	for _, o := range h.members {
		if o != m && !o.left {
			h.syncs = append(h.syncs, simPause{at: now.Add(max(3*time.Millisecond, h.announce)), to: o})
		}
	}
	return m
}

// live counts the processes whose heartbeat is less than 3 s old.
func (h *simHub) live(now time.Time) int {
	n := 0
	for _, m := range h.members {
		if !m.left && now.Sub(m.lastSync) < 3*time.Second {
			n++
		}
	}
	return n
}

func (m *simMember) sync(now time.Time) {
	m.lastSync = now
	m.view = m.hub.row
	m.view.Processes = max(1, m.hub.live(now))
	m.view.Share = 1 / float64(m.view.Processes)
	// The leader is the oldest live member.
	for _, o := range m.hub.members {
		if !o.left && now.Sub(o.lastSync) < 3*time.Second {
			m.view.Leader = o == m
			break
		}
	}
}

// tick delivers the pauses due and runs the heartbeats due at now; a dead
// member (dead(m)) no longer beats.
func (h *simHub) tick(now time.Time, dead func(*simMember) bool) {
	h.now = now
	keep := h.pauses[:0]
	for _, p := range h.pauses {
		if now.Before(p.at) {
			keep = append(keep, p)
			continue
		}
		p.to.rc.mu.Lock()
		p.to.rc.throttledAt(p.at, p.d)
		p.to.rc.mu.Unlock()
	}
	h.pauses = keep
	keep = h.syncs[:0]
	for _, p := range h.syncs {
		if now.Before(p.at) {
			keep = append(keep, p)
			continue
		}
		if !dead(p.to) { // a dead process reads no notification
			p.to.sync(now)
		}
	}
	h.syncs = keep
	for _, m := range h.members {
		if !m.left && !dead(m) && now.Sub(m.lastSync) >= time.Second {
			m.sync(now)
		}
	}
}

func (m *simMember) View() SharedQuota { return m.view }

func (m *simMember) Publish(q Estimate, probeAt time.Time, hold time.Duration) {
	r := &m.hub.row
	*r = SharedQuota{Version: r.Version + 1, Rate: q.Rate, Burst: max(r.Burst, q.Burst), ProbeAt: probeAt, Hold: hold, Measured: !q.Measured.IsZero()}
	// The others read it at once (a notification), not at their next beat.
	for _, o := range m.hub.members {
		if o != m && !o.left {
			m.hub.syncs = append(m.hub.syncs, simPause{at: m.hub.now.Add(3 * time.Millisecond), to: o})
		}
	}
}

func (m *simMember) Paused(d time.Duration) {
	for _, o := range m.hub.members {
		if o != m && !o.left {
			m.hub.pauses = append(m.hub.pauses, simPause{at: m.hub.now.Add(3 * time.Millisecond), to: o, d: d})
		}
	}
}

// Three processes on one key, none with a ceiling, the second and third
// joining half a second after the first, or as its first pause ends:
// together they spend the quota as one process does, in equal shares, with
// as few 429s. A joiner's first requests, before it has an estimate to
// follow, may meet a 429: under the leader's guess that is no drop of the
// quota, and the start's burst still measures B. Taken for a drop, its
// mark kept the burst windows from the start, B stayed at 1-2 and the
// estimate read 70/s for 50, cut by 1% a 429 (0.834 and 0.744 of the
// quota at 2 and 3 processes over 120 s, bench row 81's 0.902). A joiner
// the first learns of half a second late (a heartbeat, a notification's
// round trip) sends its part while the first still sends the whole: the
// upstream's bucket drained, the windows from the change read 47/s for 50
// at the next probe, held a minute (0.926), or met a 429 taken for a drop.
// Joiners that start as the first meets its first 429 (bench workload 14)
// send nothing before the pause: with the leader's probe at +25% per
// second its windows were too short for the followers' part of them, the
// probe read 48.4/s for 50 and held it two minutes (0.941 of the quota
// over 120 s when they join 10 ms after it).
func TestRateControlSharedQuota(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		join time.Duration
		// announce is how late the first process learns of a joiner.
		announce time.Duration
		d        time.Duration // the run's length; 0: 180 s
	}{{1, 0, 0, 0}, {2, 500 * time.Millisecond, 0, 0}, {3, 500 * time.Millisecond, 0, 0}, {2, time.Second, 0, 0}, {3, time.Second, 0, 0},
		{2, 7750 * time.Millisecond, 500 * time.Millisecond, 0}, {3, 10 * time.Millisecond, 0, 120 * time.Second}} {
		n := c.n
		t.Run(fmt.Sprintf("%d processes joining at %v, announced %v later", n, c.join, c.announce), func(t *testing.T) {
			t.Parallel()
			const R, B = 50.0, 10
			T := 180 * time.Second
			if c.d > 0 {
				T = c.d
			}
			t0 := time.Unix(5_000_000, 0)
			up := &simUpstream{lim: rate.NewLimiter(R, B)}
			up.lim.AllowN(t0, 0)
			hub := &simHub{announce: c.announce}
			rcs := make([]*Controller, n)
			rcs[0] = New(0, 1)
			hub.join(t0, rcs[0])
			runs := simulateMany(t, rcs, up, t0, 8, 5*time.Millisecond, T, func(now time.Time) {
				for i := 1; i < n; i++ {
					if rcs[i] == nil && now.Sub(t0) >= c.join {
						rcs[i] = New(0, 1)
						rcs[i].now = rcs[0].now
						hub.join(now, rcs[i])
					}
				}
				hub.tick(now, func(*simMember) bool { return false })
			})
			total, late, lateAll := 0, 0, 0
			for i, r := range runs {
				total += len(r.oks)
				late += r.count(r.limited, t0.Add(10*time.Second), t0.Add(T))
				lateAll += r.count(r.oks, t0.Add(10*time.Second), t0.Add(T))
				t.Logf("process %d: %d 2xx, %d 429s, estimate %.2f, burst %.0f, rate %.2f", i+1, len(r.oks), len(r.limited), rcs[i].quota.rate, rcs[i].quota.burst, rcs[i].currentLocked())
			}
			frac := float64(total) / (R*T.Seconds() + B)
			per1000 := 1000 * float64(late) / float64(lateAll+late)
			t.Logf("%d processes: achieved %.3f of the quota, %.2f 429s per 1000 after 10 s", n, frac, per1000)
			if frac < 0.95 {
				t.Errorf("achieved %.3f of the allowed rate, want >= 0.95", frac)
			}
			if per1000 > 5 {
				t.Errorf("%.2f 429s per 1000 after the first 10 s, want <= 5", per1000)
			}
			for i, r := range runs[1:] {
				got := float64(r.count(r.oks, t0.Add(20*time.Second), t0.Add(T))) / (T - 20*time.Second).Seconds()
				if math.Abs(got-R/float64(n)) > 0.1*R/float64(n) {
					t.Errorf("process %d: %.2f/s after 20 s, want %.2f +- 10%%", i+2, got, R/float64(n))
				}
			}
		})
	}
}

// Of two processes sharing the key, one dies (its heartbeat stops): within
// seconds the other takes the whole quota.
func TestRateControlSharedQuotaAbsorbsADeath(t *testing.T) {
	t.Parallel()
	const R, B = 50.0, 10
	t0 := time.Unix(6_000_000, 0)
	up := &simUpstream{lim: rate.NewLimiter(R, B)}
	up.lim.AllowN(t0, 0)
	hub := &simHub{}
	rcs := []*Controller{New(0, 1), nil}
	hub.join(t0, rcs[0])
	death := t0.Add(60 * time.Second)
	var second *simMember
	runs := simulateMany(t, rcs, up, t0, 8, 5*time.Millisecond, 90*time.Second, func(now time.Time) {
		if rcs[1] == nil && second == nil && now.Sub(t0) >= 500*time.Millisecond {
			rcs[1] = New(0, 1)
			rcs[1].now = rcs[0].now
			second = hub.join(now, rcs[1])
		}
		if rcs[1] != nil && !now.Before(death) {
			rcs[1] = nil // killed: no more requests, no more heartbeats
		}
		hub.tick(now, func(m *simMember) bool { return m == second && !now.Before(death) })
	})
	first := runs[0]
	before := float64(first.count(first.oks, death.Add(-20*time.Second), death)) / 20
	after := float64(first.count(first.oks, death.Add(5*time.Second), death.Add(30*time.Second))) / 25
	t.Logf("first process: %.2f/s before the death, %.2f/s from 5 s after it; 429s %d", before, after, len(first.limited))
	if math.Abs(before-R/2) > 0.1*R/2 {
		t.Errorf("before: %.2f/s, want %.2f +- 10%%", before, R/2)
	}
	if after < 0.93*R {
		t.Errorf("after: %.2f/s, want >= %.2f", after, 0.93*R)
	}
}

// Two processes share the key through a drop of the quota and its return:
// the leader takes the quota back from its own successes and what the
// other sends, and both send their half of it again.
func TestRateControlSharedQuotaComesBack(t *testing.T) {
	t.Parallel()
	const B = 10
	t0 := time.Unix(7_000_000, 0)
	up := &simUpstream{lim: rate.NewLimiter(50, B)}
	up.lim.AllowN(t0, 0)
	hub := &simHub{}
	rcs := []*Controller{New(0, 1), nil}
	hub.join(t0, rcs[0])
	phase := 60 * time.Second
	runs := simulateMany(t, rcs, up, t0, 8, 5*time.Millisecond, 3*phase, func(now time.Time) {
		if rcs[1] == nil && now.Sub(t0) >= 500*time.Millisecond {
			rcs[1] = New(0, 1)
			rcs[1].now = rcs[0].now
			hub.join(now, rcs[1])
		}
		switch i := int(now.Sub(t0) / phase); {
		case i == 1 && up.lim.Limit() == 50:
			up.lim.SetLimitAt(now, 20)
		case i == 2 && up.lim.Limit() == 20:
			up.lim.SetLimitAt(now, 50)
		}
		hub.tick(now, func(*simMember) bool { return false })
	})
	from, to := t0.Add(2*phase+15*time.Second), t0.Add(3*phase)
	for i, r := range runs {
		got := float64(r.count(r.oks, from, to)) / to.Sub(from).Seconds()
		t.Logf("process %d: %.2f/s from 15 s after the return; estimate %.2f", i+1, got, rcs[i].quota.rate)
		if math.Abs(got-25) > 2.5 {
			t.Errorf("process %d: %.2f/s after the quota came back, want 25 +- 10%%", i+1, got)
		}
	}
	if n := runs[0].count(runs[0].limited, t0.Add(2*phase+5*time.Second), to) + runs[1].count(runs[1].limited, t0.Add(2*phase+5*time.Second), to); n != 0 {
		t.Errorf("%d 429s after the return, want 0", n)
	}
}

// At the real service's answer times (2-4 s, then 18-22 s) the first 429s
// come while most of the requests sent before them are still out: the
// reaction waits for their answers (the estimate counts successes at their
// send times) at half the rate, and the run gets the quota; without the
// wait the first estimate was a fraction of it, held for a minute.
func TestRateControlFindsTheQuotaAtLongAnswerTimes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name            string
		latency, jitter time.Duration
		workers         int
		d               time.Duration
	}{
		{"2-4 s", 2 * time.Second, 2 * time.Second, 120, 180 * time.Second},
		{"18-22 s", 18 * time.Second, 4 * time.Second, 440, 180 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			const R, B = 20.0, 10
			t0 := time.Unix(8_000_000, 0)
			up := &simUpstream{lim: rate.NewLimiter(R, B), jitter: c.jitter, rng: rand.New(rand.NewPCG(1, 1))}
			up.lim.AllowN(t0, 0)
			rc := New(0, 1)
			run := simulate(t, rc, up, t0, c.workers, c.latency, c.d, nil)
			// From the first measured reaction (the first answers, a probe,
			// its answers): the start is the answer time's, not the control's.
			from := t0.Add(2*(c.latency+c.jitter) + 5*time.Second)
			got := float64(run.count(run.oks, from, t0.Add(c.d))) / t0.Add(c.d).Sub(from).Seconds()
			t.Logf("%.2f/s from %v on (%.3f of %v); estimate %.2f, burst %.0f; %d 429s", got, from.Sub(t0), got/R, R, rc.quota.rate, rc.quota.burst, len(run.limited))
			if got < 0.93*R {
				t.Errorf("%.2f/s, want >= 0.93 x %v", got, R)
			}
			if math.Abs(rc.quota.rate-R)/R > 0.05 {
				t.Errorf("estimate %.2f, want within 5%% of %v", rc.quota.rate, R)
			}
		})
	}
}
