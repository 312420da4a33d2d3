package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// apiKey is the key every workload's sandbox accepts.
const apiKey = "sk-bench-3f9c"

// upstream is a sandbox served over HTTP behind a middleware that counts
// requests, can act when the n-th arrives (kill -9 a child), and counts the
// 200 answers per request (path and query) to find pages bought twice.
type upstream struct {
	sb  *sandbox.Server
	url string // base URL, with /api
	hs  *http.Server

	n       atomic.Int64 // requests arrived
	active  atomic.Int64 // requests being answered now
	mu      sync.Mutex
	trigger func(n int64)
	seen    map[string]int // path?query -> 200 answers, when tracked
	// gate, when set, is the upstream's servers in front of the sandbox.
	gate *serverGate
	// conns counts the client's connections: open now, the most open at
	// once, accepted in all.
	conns struct {
		mu                 sync.Mutex
		open, most, opened int
	}
}

// newUpstream serves a sandbox with cfg (APIKeys set here) on a free port.
// track records the 200 answers per request, for duplicates.
func newUpstream(cfg sandbox.Config, track bool) (*upstream, error) {
	return newGatedUpstream(cfg, track, nil)
}

// newGatedUpstream is newUpstream with the sandbox behind gate (nil: none).
func newGatedUpstream(cfg sandbox.Config, track bool, gate *serverGate) (*upstream, error) {
	cfg.APIKeys = []string{apiKey}
	sb, err := sandbox.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{sb: sb, url: fmt.Sprintf("http://%s/api", ln.Addr()), gate: gate}
	if track {
		u.seen = map[string]int{}
	}
	h := sb.Handler()
	if gate != nil {
		h = gate.wrap(h)
	}
	u.hs = &http.Server{ReadHeaderTimeout: 10 * time.Second, ConnState: u.connState, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := u.n.Add(1)
		u.active.Add(1)
		defer u.active.Add(-1)
		u.mu.Lock()
		trig := u.trigger
		u.mu.Unlock()
		if trig != nil {
			trig(n)
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusOK && u.seen != nil {
			u.mu.Lock()
			u.seen[r.URL.Path+"?"+r.URL.RawQuery]++
			u.mu.Unlock()
		}
	})}
	go func() { _ = u.hs.Serve(ln) }()
	return u, nil
}

// close stops serving at once (the workload is over: a graceful shutdown
// would wait for connections a client opened and never used); requests held
// by a latency are released.
func (u *upstream) close() {
	u.sb.Close()
	_ = u.hs.Close()
}

// connState counts the connections as they open and close.
func (u *upstream) connState(_ net.Conn, st http.ConnState) {
	u.conns.mu.Lock()
	defer u.conns.mu.Unlock()
	switch st {
	case http.StateNew:
		u.conns.open++
		u.conns.opened++
		u.conns.most = max(u.conns.most, u.conns.open)
	case http.StateClosed, http.StateHijacked:
		u.conns.open--
	}
}

// connections is the most connections open at once, and those accepted.
func (u *upstream) connections() (most, opened int) {
	u.conns.mu.Lock()
	defer u.conns.mu.Unlock()
	return u.conns.most, u.conns.opened
}

func (u *upstream) setTrigger(f func(n int64)) {
	u.mu.Lock()
	u.trigger = f
	u.mu.Unlock()
}

// duplicates lists the requests answered 200 more than once, and how many
// distinct requests were answered 200.
func (u *upstream) duplicates() (dups []string, distinct int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, n := range u.seen {
		if n > 1 {
			dups = append(dups, fmt.Sprintf("%s x%d", k, n))
		}
	}
	sort.Strings(dups)
	return dups, len(u.seen)
}

// firstArrival waits until the sandbox has seen a request and returns when
// it arrived.
func (u *upstream) firstArrival(ctx context.Context) (time.Time, error) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if u.sb.Usage(apiKey).Requests > 0 {
			if a := u.sb.Arrivals(apiKey); len(a) > 0 {
				return a[0].Time, nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-tick.C:
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// window counts the arrivals in [from, to): all, answered 200, answered 429.
type window struct {
	from, to              time.Time
	requests, ok, limited int
}

func countWindow(arrivals []sandbox.Arrival, from, to time.Time) window {
	w := window{from: from, to: to}
	for _, a := range arrivals {
		if a.Time.Before(from) || !a.Time.Before(to) {
			continue
		}
		w.requests++
		switch a.Status {
		case http.StatusOK:
			w.ok++
		case http.StatusTooManyRequests:
			w.limited++
		}
	}
	return w
}

func (w window) seconds() float64 { return w.to.Sub(w.from).Seconds() }

// per1000 is the 429s per 1000 requests.
func (w window) per1000() float64 {
	if w.requests == 0 {
		return 0
	}
	return 1000 * float64(w.limited) / float64(w.requests)
}
