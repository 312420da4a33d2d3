package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// OtherEndpoint is the Usage.ByEndpoint key of requests to paths that are
// not one of the 18 endpoints; one bucket keeps the map bounded whatever
// paths callers send.
const OtherEndpoint = "other"

// apiPrefix is the path segment the spec's {base_url} ends with.
const apiPrefix = "/api"

// Server is the sandbox. Its world is stateless; the mutable state (usage
// counters, arrivals, token buckets, credit balances, fault sequence
// counters) sits behind mutexes, so one Server serves any number of
// concurrent requests and its methods may be called while it serves.
type Server struct {
	keys       map[string]struct{}
	log        *slog.Logger
	now        func() time.Time
	retryMode  string
	realFields bool
	usage      *usageBook
	arrivals   *arrivalBook
	bucket     *bucketBook
	credits    *creditBook
	faults     *faultBox
	recorded   func(key string, a Arrival) // test hook, may be nil
	holding    func()                      // test hook, may be nil
	closing    chan struct{}               // closed by Close: held requests are released
	closeOnce  sync.Once
	prices     map[string]int64 // Config.Prices
	prefix     string           // apiPrefix, or "" in the real preset
	endpoints  map[string]endpoint
	real       *realState // the real preset's endpoints and state; nil in the contract preset
	handler    http.Handler
}

// New validates cfg, applies defaults and builds the server.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		keys:       make(map[string]struct{}, len(cfg.APIKeys)),
		log:        cfg.Logger,
		now:        cfg.now,
		recorded:   cfg.recorded,
		holding:    cfg.holding,
		retryMode:  cfg.RetryAfterMode,
		realFields: cfg.RealServiceFields,
		usage:      newUsageBook(),
		arrivals:   newArrivalBook(),
		bucket:     newBucketBook(cfg.Rate, cfg.Burst),
		credits:    newCreditBook(cfg.CreditLimit || cfg.Credits > 0, cfg.Credits),
		faults:     newFaultBox(cfg.Faults),
		prices:     maps.Clone(cfg.Prices),
		closing:    make(chan struct{}),
	}
	for _, k := range cfg.APIKeys {
		s.keys[k] = struct{}{}
	}
	w := &world{pageSize: int64(cfg.PageSize), day: cfg.WorldTime, churn: cfg.Churn == ChurnHeavyTail}
	s.endpoints = w.endpoints()
	s.prefix = apiPrefix
	route := s.route
	if cfg.Preset == PresetScrapeCreators {
		s.real = newRealState(w, cfg)
		s.prefix, s.realFields, route = "", false, s.realRoute
	}

	// The one chain every /api request goes through. identify and count come
	// first so that every request, rejected or not, is counted under its key;
	// inject (per-key 429 token bucket, 402 credit balance, latency, 5xx,
	// hangs, truncated bodies) sits between authorize and route, where the
	// key is known and the counter sees its status codes.
	api := chain(http.HandlerFunc(route), s.identify, s.count, s.authorize, s.inject)

	s.handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/debug/") {
			s.debug(rw, r)
			return
		}
		api.ServeHTTP(rw, r)
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
		if left, limited := s.credits.get(apiKey); limited {
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
	if err := validateRate("SetRate rate", "SetRate burst", rate, burst); err != nil {
		return err
	}
	s.bucket.set(rate, burstOrDefault(rate, burst), s.now())
	return nil
}

// SetFaults replaces the faults while the server runs and restarts their
// sequences: script positions and attempt numbers count from this call.
// Requests already past the draw keep their fate.
func (s *Server) SetFaults(f Faults) error {
	f = f.withDefaults()
	if err := f.validate("Faults"); err != nil {
		return err
	}
	s.faults.set(f)
	return nil
}

// AddCredits changes apiKey's credit balance by n (negative n takes credits
// away; the balance stays >= 0). No-op when credits are unlimited.
func (s *Server) AddCredits(apiKey string, n int64) { s.credits.add(apiKey, n) }

// Credits returns apiKey's credit balance; limited is false (and left 0)
// when credits are unlimited.
func (s *Server) Credits(apiKey string) (left int64, limited bool) { return s.credits.get(apiKey) }

// Close releases every request held by a hang (503) or waiting out its
// latency (it then proceeds), and makes later ones not wait, so an
// http.Server holding the sandbox can shut down at once. The sandbox keeps
// answering after Close.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// middleware wraps a handler; chain applies them so the first runs first.
type middleware func(http.Handler) http.Handler

func chain(h http.Handler, mws ...middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// exchange is the per-request state shared along the chain. The fields
// after arrived are set by inject and route before the status is written,
// so count sees them when it records.
type exchange struct {
	key      string    // accepted API key, or "" when missing or unknown
	endpoint string    // path after the prefix when it is an endpoint, else OtherEndpoint
	path     string    // URL path after the prefix (/api, or none in the real preset)
	arrived  time.Time // when identify saw the request

	free           bool          // set by a handler whose 200 answer costs no credit
	charge         int64         // credits a billable answer costs; 0 is 1
	fault          string        // what inject did, for the log ("" = nothing)
	retryAfter     time.Duration // delay announced by a 429
	creditsLimited bool          // a credit is held for this request
	creditsLeft    int64         // the balance after holding it
	truncate       bool          // route must cut its 200 body
	truncated      bool          // route did
	hung           bool          // held by a hang
	abandoned      bool          // the client gave up before any answer
}

// billable reports whether an answer with this status costs a credit.
func (ex *exchange) billable(status int) bool { return status == http.StatusOK && !ex.free }

type exchangeKey struct{}

func exchangeFrom(ctx context.Context) *exchange {
	return ctx.Value(exchangeKey{}).(*exchange)
}

// identify resolves the key and the endpoint name; it never rejects.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ex := &exchange{endpoint: OtherEndpoint, path: r.URL.Path, arrived: s.now()}
		if k := r.Header.Get("x-api-key"); k != "" {
			if _, ok := s.keys[k]; ok {
				ex.key = k
			}
		}
		if p, ok := strings.CutPrefix(r.URL.Path, s.prefix); ok {
			ex.path = p
			if s.known(p) {
				ex.endpoint = p
			}
		}
		next.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex)))
	})
}

// count records the request and whether its answer is billable (a 200 not
// marked free by its handler) when its status is decided: before the status
// line goes out, so a client that has read an answer sees it counted.
func (s *Server) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ex := exchangeFrom(r.Context())
		sw := &statusWriter{ResponseWriter: rw, onStatus: func(status int) { s.record(r, ex, status) }}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			if ex.abandoned {
				sw.decide(StatusClientClosed)
			} else {
				sw.decide(http.StatusOK) // net/http answers 200 with an empty body
			}
		}
	})
}

func (s *Server) record(r *http.Request, ex *exchange, status int) {
	billable := ex.billable(status)
	s.usage.record(ex.key, ex.endpoint, outcome{status: status, billable: billable, credits: cmp.Or(ex.charge, 1),
		truncated: ex.truncated, hung: ex.hung})
	a := Arrival{Time: ex.arrived, Answered: s.now(), Endpoint: ex.endpoint,
		Query: r.URL.RawQuery, Status: status, RetryAfter: ex.retryAfter, Truncated: ex.truncated}
	if billable {
		a.Credits = cmp.Or(ex.charge, 1)
	}
	s.arrivals.add(ex.key, a)
	if s.recorded != nil {
		s.recorded(ex.key, a)
	}
	s.log.LogAttrs(r.Context(), slog.LevelDebug, "sandbox request",
		slog.String("method", r.Method),
		slog.String("endpoint", ex.endpoint),
		slog.Bool("key_known", ex.key != ""),
		slog.Int("status", status),
		slog.Bool("billable", billable),
		slog.String("fault", ex.fault))
}

// authorize answers 401 unless identify accepted the key. The message never
// echoes the key sent.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if exchangeFrom(r.Context()).key == "" {
			writeError(rw, &apiError{status: http.StatusUnauthorized, code: "unauthorized",
				message: "missing or invalid API key in the x-api-key header"})
			return
		}
		next.ServeHTTP(rw, r)
	})
}

// known reports whether p (the path after the prefix) is an endpoint of the
// preset.
func (s *Server) known(p string) bool {
	if s.real != nil {
		_, ok := realRoutes[p]
		return ok
	}
	_, ok := s.endpoints[p]
	return ok
}

// route dispatches to the endpoint: unknown path 404, non-GET 405, then the
// handler's answer.
func (s *Server) route(rw http.ResponseWriter, r *http.Request) {
	ex := exchangeFrom(r.Context())
	ep, ok := s.endpoints[ex.endpoint]
	if !ok {
		writeError(rw, &apiError{status: http.StatusNotFound, code: "not_found",
			message: fmt.Sprintf("no endpoint at %q", r.URL.Path)})
		return
	}
	if !onlyGET(rw, r) {
		return
	}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(rw, badRequest("malformed query string"))
		return
	}
	rep, err := ep(query{vals})
	if err != nil {
		writeError(rw, err)
		return
	}
	ex.free = rep.free
	body, err := encodeJSON(rep.body)
	if err != nil {
		writeError(rw, err)
		return
	}
	if !rep.free && !s.chargePrice(rw, ex) {
		return
	}
	if s.realFields && !rep.free {
		body = withCredits(body, ex.creditsLimited, ex.creditsLeft, cmp.Or(ex.charge, 1))
	}
	if ex.truncate {
		ex.truncated = true
		writeCut(rw, body)
		return
	}
	writeBody(rw, http.StatusOK, body)
}

// onlyGET answers 405 to any method but GET, and says whether r is a GET.
func onlyGET(rw http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet {
		return true
	}
	rw.Header().Set("Allow", http.MethodGet)
	writeError(rw, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
		message: "only GET is supported"})
	return false
}

// debug serves /debug/usage and /debug/healthz; it is outside the chain, so
// it is neither authenticated nor counted.
func (s *Server) debug(rw http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/debug/usage", "/debug/healthz":
	default:
		writeError(rw, &apiError{status: http.StatusNotFound, code: "not_found",
			message: fmt.Sprintf("no debug endpoint at %q", r.URL.Path)})
		return
	}
	if !onlyGET(rw, r) {
		return
	}
	if r.URL.Path == "/debug/healthz" {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write([]byte("ok"))
		return
	}
	writeJSON(rw, http.StatusOK, s.Usage(r.Header.Get("x-api-key")))
}

// statusWriter remembers the status code and calls onStatus once with it,
// before the status line goes out.
type statusWriter struct {
	http.ResponseWriter
	status   int
	onStatus func(status int)
}

func (w *statusWriter) decide(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if w.onStatus != nil {
		w.onStatus(code)
	}
}

func (w *statusWriter) WriteHeader(code int) {
	w.decide(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.decide(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// encodeJSON encodes body; encoding/json sorts map keys and keeps struct
// field order, so the same value always gives the same bytes. HTML is not
// escaped so the embed markup reads as sent.
func encodeJSON(body any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, &apiError{status: http.StatusInternalServerError, code: "internal", message: "encoding failed"}
	}
	return buf.Bytes(), nil
}

// writeJSON encodes and writes body.
func writeJSON(rw http.ResponseWriter, status int, body any) {
	b, err := encodeJSON(body)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"success":false,"error":"internal","message":"encoding failed"}` + "\n")
	}
	writeBody(rw, status, b)
}

// writeBody writes an encoded JSON answer.
func writeBody(rw http.ResponseWriter, status int, b []byte) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Length", strconv.Itoa(len(b)))
	rw.WriteHeader(status)
	_, _ = rw.Write(b)
}
