package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// OtherEndpoint is the Usage.ByEndpoint key of requests to paths that are
// not one of the 18 endpoints; one bucket keeps the map bounded whatever
// paths callers send.
const OtherEndpoint = "other"

// apiPrefix is the path segment the spec's {base_url} ends with.
const apiPrefix = "/api"

// Server is the sandbox. It holds no per-request state besides the usage
// counters, so one Server serves any number of concurrent requests.
type Server struct {
	keys      map[string]struct{}
	log       *slog.Logger
	usage     *usageBook
	endpoints map[string]endpoint
	handler   http.Handler
}

// New validates cfg, applies defaults and builds the server.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		keys:  make(map[string]struct{}, len(cfg.APIKeys)),
		log:   cfg.Logger,
		usage: newUsageBook(),
	}
	for _, k := range cfg.APIKeys {
		s.keys[k] = struct{}{}
	}
	w := &world{pageSize: int64(cfg.PageSize), day: cfg.WorldTime}
	s.endpoints = w.endpoints()

	// The one chain every /api request goes through. identify and count come
	// first so that every request, rejected or not, is counted under its key;
	// fault injectors (per-key 429 token bucket, 402 credit balance, 5xx
	// rate, latency, truncated bodies) slot in between authorize and route,
	// where the key is known and the counter sees their status codes.
	api := chain(http.HandlerFunc(s.route), s.identify, s.count, s.authorize)

	s.handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/debug/") {
			s.debug(rw, r)
			return
		}
		api.ServeHTTP(rw, r)
	})
	return s, nil
}

// Handler serves /api/... (the 18 endpoints) and /debug/... (usage and
// health, not counted).
func (s *Server) Handler() http.Handler { return s.handler }

// Usage returns the counts recorded for apiKey; requests without a key or
// with an unknown key are recorded under "".
func (s *Server) Usage(apiKey string) Usage { return s.usage.get(apiKey) }

// middleware wraps a handler; chain applies them so the first runs first.
type middleware func(http.Handler) http.Handler

func chain(h http.Handler, mws ...middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// exchange is the per-request state shared along the chain.
type exchange struct {
	key      string // accepted API key, or "" when missing or unknown
	endpoint string // path after /api when it is an endpoint, else OtherEndpoint
	free     bool   // set by a handler whose 200 answer costs no credit
}

type exchangeKey struct{}

func exchangeFrom(ctx context.Context) *exchange {
	return ctx.Value(exchangeKey{}).(*exchange)
}

// identify resolves the key and the endpoint name; it never rejects.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ex := &exchange{endpoint: OtherEndpoint}
		if k := r.Header.Get("x-api-key"); k != "" {
			if _, ok := s.keys[k]; ok {
				ex.key = k
			}
		}
		if p, ok := strings.CutPrefix(r.URL.Path, apiPrefix); ok {
			if _, known := s.endpoints[p]; known {
				ex.endpoint = p
			}
		}
		next.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex)))
	})
}

// count records the request and whether its answer is billable: a 200 not
// marked free by its handler.
func (s *Server) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: rw}
		next.ServeHTTP(sw, r)
		ex := exchangeFrom(r.Context())
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		billable := status == http.StatusOK && !ex.free
		s.usage.record(ex.key, ex.endpoint, billable)
		s.log.LogAttrs(r.Context(), slog.LevelDebug, "sandbox request",
			slog.String("method", r.Method),
			slog.String("endpoint", ex.endpoint),
			slog.Bool("key_known", ex.key != ""),
			slog.Int("status", status),
			slog.Bool("billable", billable))
	})
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
	if r.Method != http.MethodGet {
		rw.Header().Set("Allow", http.MethodGet)
		writeError(rw, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
			message: "only GET is supported"})
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
	writeJSON(rw, http.StatusOK, rep.body)
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
	if r.Method != http.MethodGet {
		rw.Header().Set("Allow", http.MethodGet)
		writeError(rw, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
			message: "only GET is supported"})
		return
	}
	if r.URL.Path == "/debug/healthz" {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write([]byte("ok"))
		return
	}
	writeJSON(rw, http.StatusOK, s.usage.get(r.Header.Get("x-api-key")))
}

// statusWriter remembers the status code for count.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeJSON writes body; encoding/json sorts map keys and keeps struct field
// order, so the same value always gives the same bytes. HTML is not escaped
// so the embed markup reads as sent.
func writeJSON(rw http.ResponseWriter, status int, body any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"success":false,"error":"internal","message":"encoding failed"}` + "\n")
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	rw.WriteHeader(status)
	_, _ = rw.Write(buf.Bytes())
}
