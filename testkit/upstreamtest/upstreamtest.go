// Package upstreamtest is a scripted upstream over real HTTP for the tests
// of package endpoints and package sources' external tests: a server
// answering what a test scripts, counting and recording the requests, and
// a client of it. (Package sources' own tests, which cannot import a
// package importing it, have their own.)
package upstreamtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/sources"
)

// Key is the API key the server accepts; any other is answered 401.
const Key = "sk-test-7c1f"

// Server serves the responses of a test's function and counts requests.
type Server struct {
	*httptest.Server
	Calls atomic.Int64
}

// NewServer is a Server answering with fn, n being the request's number
// (from 1), once the key checked.
func NewServer(t testing.TB, fn func(w http.ResponseWriter, r *http.Request, n int64)) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.Calls.Add(1)
		if r.Header.Get("x-api-key") != Key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"success":false,"message":"bad key"}`)
			return
		}
		fn(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

// Recorder is a Server that answers the n-th request with the n-th body
// (the last one repeating) and records the path and query of each.
type Recorder struct {
	*Server
	mu   sync.Mutex
	sent []string
}

// NewRecorder is a Recorder answering bodies.
func NewRecorder(t testing.TB, bodies ...string) *Recorder {
	t.Helper()
	rec := &Recorder{}
	rec.Server = NewServer(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		rec.mu.Lock()
		rec.sent = append(rec.sent, r.URL.Path+"?"+r.URL.RawQuery)
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(bodies[min(int(n), len(bodies))-1]))
	})
	return rec
}

// Requests are the path?query of every request so far.
func (r *Recorder) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// Client is a client of the server at base (its API under /api), with
// short retries; mod, when set, changes its config first.
func Client(t testing.TB, base string, mod func(*sources.Config)) *sources.Client {
	t.Helper()
	cfg := sources.Config{Options: sources.DefaultOptions(), APIKey: Key}
	cfg.BaseURL = base + "/api"
	cfg.RetryInitial, cfg.RetryMax = sources.Duration(time.Millisecond), sources.Duration(2*time.Millisecond)
	if mod != nil {
		mod(&cfg)
	}
	c, err := sources.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Call sends call to a Recorder answering body and returns its result and
// the single request it sent.
func Call[T any](t testing.TB, body string, call sources.Call[T]) (T, string) {
	t.Helper()
	rec := NewRecorder(t, body)
	v, err := sources.Do(context.Background(), Client(t, rec.URL, nil), nil, call)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	reqs := rec.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %q, want exactly one", reqs)
	}
	return v, reqs[0]
}

// WantQuery fails unless got is path?query with the query equal to want
// (compared decoded, so the parameter order does not matter).
func WantQuery(t testing.TB, got, path string, want url.Values) {
	t.Helper()
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != path {
		t.Errorf("path = %q, want %q", u.Path, path)
	}
	if q := u.Query(); q.Encode() != want.Encode() {
		t.Errorf("query = %q, want %q", q.Encode(), want.Encode())
	}
}
