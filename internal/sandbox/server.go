package sandbox

import (
	"cmp"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/contract"
	"github.com/socialcrawl/crawler/internal/sandbox/faults"
	"github.com/socialcrawl/crawler/internal/sandbox/real"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// OtherEndpoint is the Usage.ByEndpoint key of requests to paths that are
// not one of the 18 endpoints; one bucket keeps the map bounded whatever
// paths callers send.
const OtherEndpoint = "other"

// apiPrefix is the path segment the spec's {base_url} ends with.
const apiPrefix = "/api"

// Faults are the seeded random and scripted faults a Server injects
// (package faults); the pseudo-statuses of Faults.Script and the hang's
// default bound are faults'.
type Faults = faults.Faults

const (
	ScriptNormal   = faults.ScriptNormal
	ScriptTruncate = faults.ScriptTruncate
	ScriptHang     = faults.ScriptHang
	HangMaxDefault = faults.HangMaxDefault
)

// OutOfCreditsMessage is the message of a 402 answer, as the real service
// words it.
const OutOfCreditsMessage = api.OutOfCreditsMessage

// dialect is a preset's endpoints: the contract's (package contract) or
// the real service's (package real), over the same world.
type dialect interface {
	// Has reports whether path (after the prefix) is an endpoint.
	Has(path string) bool
	// Answer is the 200 body of the endpoint ex names, or its error.
	Answer(ex *api.Exchange, p *api.Params) ([]byte, error)
	// WriteError answers an error in the dialect's body.
	WriteError(rw http.ResponseWriter, ex *api.Exchange, err error)
}

// knownPath reports whether path is an endpoint of either dialect: what a
// fault script may name.
func knownPath(path string) bool { return contract.Has(path) || real.Has(path) }

// Server is the sandbox: a world (package world) served in one dialect
// behind the chain every request goes through, the fault layer (package
// faults) in it. The world is stateless; the mutable state (usage
// counters, arrivals, token buckets, credit balances, fault sequence
// counters, the real dialect's cache and ids) sits behind mutexes, so one
// Server serves any number of concurrent requests and its methods may be
// called while it serves.
type Server struct {
	keys      map[string]struct{}
	log       *slog.Logger
	now       func() time.Time
	usage     *usageBook
	arrivals  *arrivalBook
	layer     *faults.Layer
	recorded  func(key string, a Arrival) // test hook, may be nil
	prices    map[string]int64            // Config.Prices
	closeOnce sync.Once
	prefix    string // apiPrefix, or "" in the real preset
	dialect   dialect
	handler   http.Handler
}

// New validates cfg, applies defaults and builds the server.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		keys:     make(map[string]struct{}, len(cfg.APIKeys)),
		log:      cfg.Logger,
		now:      cfg.now,
		recorded: cfg.recorded,
		prices:   maps.Clone(cfg.Prices),
		usage:    newUsageBook(),
		arrivals: newArrivalBook(),
		layer: faults.New(faults.Config{Rate: cfg.Rate, Burst: cfg.Burst, RetryMode: cfg.RetryAfterMode,
			Credits: cfg.Credits, CreditLimit: cfg.CreditLimit, Faults: cfg.Faults, Now: cfg.now, Holding: cfg.holding}),
	}
	for _, k := range cfg.APIKeys {
		s.keys[k] = struct{}{}
	}
	w := world.New(cfg.PageSize, cfg.WorldTime, cfg.Churn)
	s.prefix, s.dialect = apiPrefix, contract.New(w, cfg.RealServiceFields, s.layer)
	if cfg.Preset == PresetScrapeCreators {
		s.prefix, s.dialect = "", real.New(w, s.layer, cfg.Cache, cacheClock(cfg))
	}

	// The one chain every /api request goes through. identify and count come
	// first so that every request, rejected or not, is counted under its key;
	// the fault layer (per-key 429 token bucket, 402 credit balance, latency,
	// 5xx, hangs, truncated bodies) sits between authorize and route, where
	// the key is known and the counter sees its status codes.
	chained := chain(http.HandlerFunc(s.route), s.identify, s.count, s.authorize, s.layer.Wrap)

	s.handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/debug/") {
			s.debug(rw, r)
			return
		}
		chained.ServeHTTP(rw, r)
	})
	return s, nil
}

// Handler serves /api/... (the 18 endpoints; in the real preset their real
// paths at the root) and /debug/... (usage and health, not counted).
func (s *Server) Handler() http.Handler { return s.handler }

// Usage returns the counts recorded for apiKey; requests without a key or
// with an unknown key are recorded under "".
func (s *Server) Usage(apiKey string) Usage {
	u := s.usage.get(apiKey)
	if _, known := s.keys[apiKey]; known {
		if left, limited := s.layer.Credits(apiKey); limited {
			u.CreditsRemaining = &left
		}
	}
	return u
}

// Arrivals returns the last ArrivalsMax requests of apiKey ("" for missing
// or unknown keys) in the order their status was decided, so a test can
// check that a client honoured the Retry-After it was given.
func (s *Server) Arrivals(apiKey string) []Arrival { return s.arrivals.get(apiKey) }

// SetRate changes the per-key token bucket while the server runs (see
// Config.Rate and Config.Burst; burst 0 is ceil(rate)). Buckets keep the
// tokens they hold, at most the new burst; rate 0 turns the limit off.
func (s *Server) SetRate(rate float64, burst int) error {
	if err := faults.ValidateRate("SetRate rate", "SetRate burst", rate, burst); err != nil {
		return err
	}
	s.layer.SetRate(rate, faults.BurstOrDefault(rate, burst))
	return nil
}

// SetFaults replaces the faults while the server runs and restarts their
// sequences: script positions and attempt numbers count from this call.
// Requests already past the draw keep their fate.
func (s *Server) SetFaults(f Faults) error {
	f = f.WithDefaults()
	if err := f.Validate("Faults", knownPath); err != nil {
		return err
	}
	s.layer.SetFaults(f)
	return nil
}

// AddCredits changes apiKey's credit balance by n (negative n takes credits
// away; the balance stays >= 0). No-op when credits are unlimited.
func (s *Server) AddCredits(apiKey string, n int64) { s.layer.AddCredits(apiKey, n) }

// Credits returns apiKey's credit balance; limited is false (and left 0)
// when credits are unlimited.
func (s *Server) Credits(apiKey string) (left int64, limited bool) { return s.layer.Credits(apiKey) }

// Close releases every request held by a hang (503) or waiting out its
// latency (it then proceeds), and makes later ones not wait, so an
// http.Server holding the sandbox can shut down at once. The sandbox keeps
// answering after Close.
func (s *Server) Close() { s.closeOnce.Do(s.layer.Close) }

// middleware wraps a handler; chain applies them so the first runs first.
type middleware func(http.Handler) http.Handler

func chain(h http.Handler, mws ...middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// identify resolves the key and the endpoint name; it never rejects.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ex := &api.Exchange{Endpoint: OtherEndpoint, Path: r.URL.Path, Arrived: s.now()}
		if k := r.Header.Get("x-api-key"); k != "" {
			if _, ok := s.keys[k]; ok {
				ex.Key = k
			}
		}
		if p, ok := strings.CutPrefix(r.URL.Path, s.prefix); ok {
			ex.Path = p
			if s.dialect.Has(p) {
				ex.Endpoint, ex.Price = p, s.prices[p]
			}
		}
		next.ServeHTTP(rw, api.WithExchange(r, ex))
	})
}

// count records the request and whether its answer is billable (a 200 not
// marked free by its handler) when its status is decided: before the status
// line goes out, so a client that has read an answer sees it counted.
func (s *Server) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ex := api.ExchangeOf(r)
		sw := &api.StatusWriter{ResponseWriter: rw, OnStatus: func(status int) { s.record(r, ex, status) }}
		next.ServeHTTP(sw, r)
		if sw.Status == 0 {
			if ex.Abandoned {
				sw.Decide(StatusClientClosed)
			} else {
				sw.Decide(http.StatusOK) // net/http answers 200 with an empty body
			}
		}
	})
}

func (s *Server) record(r *http.Request, ex *api.Exchange, status int) {
	billable := ex.Billable(status)
	s.usage.record(ex.Key, ex.Endpoint, outcome{status: status, billable: billable, credits: cmp.Or(ex.Charge, 1),
		truncated: ex.Truncated, hung: ex.Hung})
	a := Arrival{Time: ex.Arrived, Answered: s.now(), Endpoint: ex.Endpoint,
		Query: r.URL.RawQuery, Status: status, RetryAfter: ex.RetryAfter, Truncated: ex.Truncated, Abandoned: ex.AbandonedBilled}
	if billable {
		a.Credits = cmp.Or(ex.Charge, 1)
	}
	s.arrivals.add(ex.Key, a)
	if s.recorded != nil {
		s.recorded(ex.Key, a)
	}
	s.log.LogAttrs(r.Context(), slog.LevelDebug, "sandbox request",
		slog.String("method", r.Method),
		slog.String("endpoint", ex.Endpoint),
		slog.Bool("key_known", ex.Key != ""),
		slog.Int("status", status),
		slog.Bool("billable", billable),
		slog.String("fault", ex.Fault))
}

// authorize answers 401 unless identify accepted the key. The message never
// echoes the key sent.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if api.ExchangeOf(r).Key == "" {
			api.WriteError(rw, api.Errorf(http.StatusUnauthorized, "missing or invalid API key in the x-api-key header"))
			return
		}
		next.ServeHTTP(rw, r)
	})
}

// route dispatches to the endpoint: unknown path 404, non-GET 405, then
// the dialect's answer, its 200 body cut when the fault layer says so.
func (s *Server) route(rw http.ResponseWriter, r *http.Request) {
	ex := api.ExchangeOf(r)
	if !s.dialect.Has(ex.Endpoint) {
		api.WriteError(rw, api.NotFound("no endpoint at %q", r.URL.Path))
		return
	}
	if !api.OnlyGET(rw, r) {
		return
	}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.dialect.WriteError(rw, ex, api.BadRequest("malformed query string"))
		return
	}
	body, err := s.dialect.Answer(ex, api.NewParams(vals))
	if err != nil {
		s.dialect.WriteError(rw, ex, err)
		return
	}
	if ex.Truncate {
		ex.Truncated = true
		api.WriteCut(rw, body)
		return
	}
	api.WriteBody(rw, http.StatusOK, body)
}

// debug serves /debug/usage and /debug/healthz; it is outside the chain, so
// it is neither authenticated nor counted.
func (s *Server) debug(rw http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/debug/usage", "/debug/healthz":
	default:
		api.WriteError(rw, api.NotFound("no debug endpoint at %q", r.URL.Path))
		return
	}
	if !api.OnlyGET(rw, r) {
		return
	}
	if r.URL.Path == "/debug/healthz" {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write([]byte("ok"))
		return
	}
	api.WriteJSON(rw, http.StatusOK, s.Usage(r.Header.Get("x-api-key")))
}
