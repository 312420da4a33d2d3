package bench

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
)

// serverGate is an upstream's servers: c requests served at once, the
// others queued first come first served (an M/G/c queue in front of the
// sandbox, whose latency is the service time). Its number of servers can
// change mid-run (a degradation). It records every request's arrival,
// start of service and end.
type serverGate struct {
	mu      sync.Mutex
	servers int
	busy    int
	queue   []chan struct{}
	visits  []visit
}

// visit is one request through the gate.
type visit struct {
	arrived, started, ended time.Time
}

func newServerGate(servers int) *serverGate { return &serverGate{servers: servers} }

// wrap serves h behind the gate.
func (g *serverGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := visit{arrived: time.Now()}
		if !g.enter(r.Context()) {
			return // the client gave up while queued
		}
		v.started = time.Now()
		defer func() {
			v.ended = time.Now()
			g.leave(v)
		}()
		h.ServeHTTP(w, r)
	})
}

// enter waits for a server, first come first served; false when ctx ended
// first.
func (g *serverGate) enter(ctx context.Context) bool {
	g.mu.Lock()
	if len(g.queue) == 0 && g.busy < g.servers {
		g.busy++
		g.mu.Unlock()
		return true
	}
	ready := make(chan struct{})
	g.queue = append(g.queue, ready)
	g.mu.Unlock()
	select {
	case <-ready:
		return true
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-ready:
			g.busy--
			g.handOn()
		default:
			if i := slices.Index(g.queue, ready); i >= 0 {
				g.queue = slices.Delete(g.queue, i, i+1)
			}
		}
		return false
	}
}

// leave frees a server, records v, and hands the server on.
func (g *serverGate) leave(v visit) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy--
	g.visits = append(g.visits, v)
	g.handOn()
}

// handOn gives free servers to the queue; g.mu is held.
func (g *serverGate) handOn() {
	for len(g.queue) > 0 && g.busy < g.servers {
		close(g.queue[0])
		g.queue = g.queue[1:]
		g.busy++
	}
}

// resize sets the number of servers from now on.
func (g *serverGate) resize(servers int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.servers = servers
	g.handOn()
}

// served are the visits that ended in [from, to).
func (g *serverGate) served(from, to time.Time) []visit {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []visit
	for _, v := range g.visits {
		if !v.ended.Before(from) && v.ended.Before(to) {
			out = append(out, v)
		}
	}
	return out
}

// visitFigures are the figures of the visits of a window.
type visitFigures struct {
	n                     int
	perSecond             float64
	meanService           time.Duration
	medianService, median time.Duration // service time; answer time (queue + service)
}

func figuresOf(vs []visit, seconds float64) visitFigures {
	f := visitFigures{n: len(vs)}
	if len(vs) == 0 {
		return f
	}
	f.perSecond = float64(len(vs)) / seconds
	svc := make([]time.Duration, len(vs))
	ans := make([]time.Duration, len(vs))
	var sum time.Duration
	for i, v := range vs {
		svc[i], ans[i] = v.ended.Sub(v.started), v.ended.Sub(v.arrived)
		sum += svc[i]
	}
	slices.Sort(svc)
	slices.Sort(ans)
	f.meanService = sum / time.Duration(len(vs))
	f.medianService, f.median = svc[len(svc)/2], ans[len(ans)/2]
	return f
}

// inSystem is the number of requests at the upstream (queued or served)
// at each of the instants ts, from the visits.
func (g *serverGate) inSystem(ts []time.Time) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]int, len(ts))
	for _, v := range g.visits {
		for i, t := range ts {
			if !t.Before(v.arrived) && t.Before(v.ended) {
				out[i]++
			}
		}
	}
	return out
}
