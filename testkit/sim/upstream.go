package sim

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// apiKey is the key every crawler of the simulation sends.
const apiKey = "sim-key"

// upstream is one night's sandbox behind a real HTTP server on loopback.
// It counts requests and runs the night's triggers (start a process, send
// a signal) as the n-th request arrives.
type upstream struct {
	sb  *sandbox.Server
	hs  *http.Server
	url string // the job's base_url

	n        atomic.Int64
	mu       sync.Mutex
	triggers map[int64][]func()
}

// sandboxConfig is the world of s on day, its answer cache shared with
// the other nights of the same timeline.
func sandboxConfig(s *Scenario, day int64, cache *sandbox.Cache) sandbox.Config {
	w := s.World
	cfg := sandbox.Config{
		APIKeys:   []string{apiKey},
		Preset:    w.Preset,
		PageSize:  w.PageSize,
		WorldTime: day,
		Churn:     w.Churn,
		Rate:      w.Rate,
		Burst:     w.Burst,
		Faults: sandbox.Faults{ErrorRate: w.ErrorRate, TruncateRate: w.TruncateRate,
			HangRate: float64(w.HangPerMille) / 1000, HangMax: time.Duration(w.HangMillis) * time.Millisecond,
			LatencyJitter: time.Duration(w.JitterMicros) * time.Microsecond, Seed: w.FaultSeed + day,
			BillAbandoned: w.BillAbandoned},
		RealServiceFields: w.RealFields && w.Preset == sandbox.PresetContract,
	}
	if w.Preset == sandbox.PresetScrapeCreators {
		cfg.Cache = cache
	}
	if len(w.Prices) > 0 {
		cfg.Prices = map[string]int64{}
		for kind, p := range w.Prices {
			e, _ := endpointOf(kind)
			cfg.Prices[e.path(w.Preset)] = p
		}
	}
	return cfg
}

func startUpstream(cfg sandbox.Config) (*upstream, error) {
	sb, err := sandbox.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{sb: sb, triggers: map[int64][]func(){}}
	u.url = fmt.Sprintf("http://%s", ln.Addr())
	if cfg.Preset != sandbox.PresetScrapeCreators {
		u.url += "/api"
	}
	h := sb.Handler()
	u.hs = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := u.n.Add(1)
		u.mu.Lock()
		fire := u.triggers[n]
		delete(u.triggers, n)
		u.mu.Unlock()
		for _, f := range fire {
			f()
		}
		h.ServeHTTP(w, r)
	})}
	go func() { _ = u.hs.Serve(ln) }()
	return u, nil
}

// at runs f as the n-th request arrives (n <= 0: at once), before it is
// served.
func (u *upstream) at(n int64, f func()) {
	u.mu.Lock()
	if n <= 0 || n <= u.n.Load() {
		u.mu.Unlock()
		f()
		return
	}
	u.triggers[n] = append(u.triggers[n], f)
	u.mu.Unlock()
}

// close stops serving at once; requests held by a latency are released.
func (u *upstream) close() {
	u.sb.Close()
	_ = u.hs.Close()
}
