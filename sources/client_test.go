package sources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "sk-test-7c1f"

// scripted serves the responses of fn and counts requests.
type scripted struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func newScripted(t *testing.T, fn func(w http.ResponseWriter, r *http.Request, n int64)) *scripted {
	t.Helper()
	s := &scripted{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.calls.Add(1)
		if r.Header.Get("x-api-key") != testKey {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"success":false,"message":"bad key"}`)
			return
		}
		fn(w, r, n)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func testClient(t *testing.T, base string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{Options: DefaultOptions(), APIKey: testKey}
	cfg.BaseURL = base + "/api"
	cfg.RetryInitial, cfg.RetryMax = Duration(time.Millisecond), Duration(2*time.Millisecond)
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status    int
		class     Class
		wantCalls int64
	}{
		{400, ClassBadRequest, 1},
		{401, ClassAuth, 1},
		{402, ClassNoCredits, 1},
		{403, ClassBlocked, 1},
		{404, ClassNotFound, 1},
		{500, ClassRetry, 3}, // 1 + MaxRetries(2)
		{503, ClassRetry, 3},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, `{"success":false,"message":"upstream says no"}`)
			})
			c := testClient(t, s.srv.URL, func(c *Config) { c.MaxRetries = 2 })
			_, err := c.SVProfile(context.Background(), "alice")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.Message != "upstream says no" {
				t.Errorf("got %+v", e)
			}
			if got := s.calls.Load(); got != tc.wantCalls {
				t.Errorf("requests = %d, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		switch n {
		case 1:
			w.WriteHeader(502)
		default:
			fmt.Fprint(w, `{"followers":[{"uniqueId":"x"}],"hasMore":false,"cursor":"9"}`)
		}
	})
	c := testClient(t, s.srv.URL, nil)
	p, err := c.SVFollowers(context.Background(), "S", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 1 || s.calls.Load() != 2 {
		t.Errorf("items=%d calls=%d", len(p.Items), s.calls.Load())
	}
}

// A 2xx body received whole that does not decode was billed and will not
// decode better next time: the call fails at once (one billable request),
// with the reason. A body cut short in transit stays retryable.
func TestMalformedBodyFailsAtOnce(t *testing.T) {
	t.Parallel()
	// (An entry that does not decode costs only itself: see
	// TestDecodePageDropsBadEntries.)
	for name, body := range map[string]string{
		"cut short JSON": `{"followers":[{"uniqueId":"x"`,
		"not a list":     `{"followers":{"uniqueId":"x"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var billed atomic.Int64
			s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) { fmt.Fprint(w, body) })
			c := testClient(t, s.srv.URL, func(c *Config) {
				c.AfterResponse = func(_ context.Context, o Outcome) {
					if o.Billed {
						billed.Add(1)
					}
				}
			})
			_, err := c.SVFollowers(context.Background(), "S", "")
			var e *Error
			if !errors.As(err, &e) || e.Class != ClassBadRequest || !strings.Contains(e.Message, "malformed body") {
				t.Fatalf("err = %v, want a bad_request naming the malformed body", err)
			}
			if s.calls.Load() != 1 || billed.Load() != 1 {
				t.Errorf("requests %d billed %d, want 1 and 1", s.calls.Load(), billed.Load())
			}
		})
	}
	t.Run("truncated in transit", func(t *testing.T) {
		t.Parallel()
		s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
			if n == 1 {
				w.Header().Set("Content-Length", "100")
				fmt.Fprint(w, `{"followers":[`)
				return
			}
			fmt.Fprint(w, `{"followers":[{"uniqueId":"x"}]}`)
		})
		c := testClient(t, s.srv.URL, nil)
		if p, err := c.SVFollowers(context.Background(), "S", ""); err != nil || len(p.Items) != 1 || s.calls.Load() != 2 {
			t.Errorf("err %v calls %d", err, s.calls.Load())
		}
	})
}

func TestRetryAfterPausesAllWorkers(t *testing.T) {
	t.Parallel()
	for _, form := range []string{"seconds", "date", "garbage", "absent"} {
		t.Run(form, func(t *testing.T) {
			t.Parallel()
			var limitedAt atomic.Int64
			var early atomic.Int64
			pause := 1 * time.Second
			s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
				if n == 1 {
					limitedAt.Store(time.Now().UnixNano())
					switch form {
					case "seconds":
						w.Header().Set("Retry-After", "1")
					case "date":
						w.Header().Set("Retry-After", time.Now().Add(pause+time.Second).UTC().Format(http.TimeFormat))
					case "garbage":
						w.Header().Set("Retry-After", "soon-ish")
					}
					w.WriteHeader(429)
					return
				}
				if form == "seconds" || form == "date" {
					if time.Since(time.Unix(0, limitedAt.Load())) < pause-50*time.Millisecond {
						early.Add(1)
					}
				}
				fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
			})
			limited := make(chan struct{})
			c := testClient(t, s.srv.URL, func(cfg *Config) {
				cfg.AfterResponse = func(_ context.Context, o Outcome) {
					if o.Status == 429 {
						close(limited)
					}
				}
			})
			ctx := context.Background()
			var g sync.WaitGroup
			g.Go(func() {
				if _, err := c.SVProfile(ctx, "a"); err != nil {
					t.Error(err)
				}
			})
			// A second worker, starting while the first sits out its 429,
			// must also respect the pause.
			<-limited
			if _, err := c.SVProfile(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			g.Wait()
			if early.Load() != 0 {
				t.Errorf("%d requests arrived before Retry-After elapsed", early.Load())
			}
			if s.calls.Load() != 3 {
				t.Errorf("calls = %d, want 3", s.calls.Load())
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"0":                             0,
		"-5":                            0,
		"1e9":                           time.Minute,
		"banana":                        0,
		"Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second,
		"Wed, 31 Dec 2025 23:00:00 GMT": 0,
		"Fri, 02 Jan 2026 00:00:00 GMT": time.Minute,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now, time.Minute); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) { w.WriteHeader(500) })
	c := testClient(t, s.srv.URL, func(c *Config) {
		c.MaxRetries = 1
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	_, err := c.SVProfile(context.Background(), "alice")
	cfgDump := fmt.Sprintf("%v %+v %#v", c.cfg, c.cfg, c.cfg.APIKey)
	for _, text := range []string{err.Error(), logs.String(), cfgDump} {
		if strings.Contains(text, testKey) {
			t.Errorf("key leaked in %q", text)
		}
	}
	if logs.Len() == 0 {
		t.Error("expected a retry log line")
	}
}

func TestWalkStops(t *testing.T) {
	t.Parallel()
	// endless: a fresh cursor and hasMore forever; only the page limit stops it.
	endless := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		fmt.Fprintf(w, `{"followers":[{"uniqueId":"u%d"}],"hasMore":true,"cursor":"%d"}`, n, n)
	})
	loop := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		fmt.Fprint(w, `{"followers":[{"uniqueId":"u"}],"hasMore":true,"cursor":"same"}`)
	})
	emptyMore := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		fmt.Fprint(w, `{"followers":[],"hasMore":true,"cursor":"x"}`)
	})
	cases := []struct {
		name   string
		s      *scripted
		pages  int
		reason StopReason
	}{
		{"endless", endless, 7, StopPageLimit},
		{"loop", loop, 2, StopRepeatedCursor},
		{"emptymore", emptyMore, 1, StopEmptyWithHasMore},
	}
	for _, tc := range cases {
		c := testClient(t, tc.s.srv.URL, nil)
		items := 0
		pages, reason, err := Walk(context.Background(), 7, func(ctx context.Context, cur string) (*Page[testFollower], error) {
			return c.SVFollowers(ctx, "S", cur)
		}, func(p *Page[testFollower]) error { items += len(p.Items); return nil })
		if err != nil || pages != tc.pages || reason != tc.reason || tc.s.calls.Load() != int64(tc.pages) {
			t.Errorf("%s: pages=%d reason=%q err=%v calls=%d", tc.name, pages, reason, err, tc.s.calls.Load())
		}
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	valid := func() Config {
		c := Config{Options: DefaultOptions(), APIKey: "k"}
		c.BaseURL = "https://x/api"
		return c
	}
	if _, err := New(valid()); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for want, mod := range map[string]func(*Config){
		"sources: base_url: is required":             func(c *Config) { c.BaseURL = "" },
		"sources: base_url: \"ftp://x/api\" must be": func(c *Config) { c.BaseURL = "ftp://x/api" },
		"sources: base_url: must not carry":          func(c *Config) { c.BaseURL = "http://user:pw@x/api" },
		"sources: api key is empty":                  func(c *Config) { c.APIKey = "" },
		"sources: prefixes.shortvideo: \"v1\" must":  func(c *Config) { c.Prefixes.ShortVideo = "v1" },
		"sources: timeout: 0s is shorter":            func(c *Config) { c.Timeout = 0 },
		"sources: max_retries: must be between 0":    func(c *Config) { c.MaxRetries = -1 },
		"sources: retry_max: 1ms is shorter than retry_initial (2ms)": func(c *Config) {
			c.RetryInitial, c.RetryMax = Duration(2*time.Millisecond), Duration(time.Millisecond)
		},
		"sources: outage_window: 0s is shorter": func(c *Config) { c.OutageWindow = 0 },
		"sources: rate: must be between 0 and":  func(c *Config) { c.Rate = math.NaN() },
		"sources: burst: must be between 1 and": func(c *Config) { c.Burst = 0 },
	} {
		cfg := valid()
		mod(&cfg)
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: New = %v", want, err)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("error leaks password: %v", err)
		}
	}
}

func TestOutcomeBilling(t *testing.T) {
	t.Parallel()
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		switch r.URL.Query().Get("handle") {
		case "free":
			fmt.Fprint(w, `{}`)
		case "charged0":
			fmt.Fprint(w, `{"success":true,"credits_charged":0,"credits_remaining":9,"user":{},"stats":{}}`)
		case "gone":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"success":false,"credits_charged":0,"message":"not found"}`)
		default:
			fmt.Fprint(w, `{"success":true,"credits_charged":1,"credits_remaining":8,"user":{},"stats":{}}`)
		}
	})
	var got []Outcome
	var mu sync.Mutex
	c := testClient(t, s.srv.URL, func(c *Config) {
		c.AfterResponse = func(_ context.Context, o Outcome) { mu.Lock(); got = append(got, o); mu.Unlock() }
	})
	for _, h := range []string{"free", "charged0", "gone", "paid"} {
		_, _ = c.SVProfile(context.Background(), h)
	}
	want := []struct {
		status       int
		billed, free bool
	}{{200, false, true}, {200, false, true}, {404, false, false}, {200, true, false}}
	if len(got) != len(want) {
		t.Fatalf("outcomes = %+v", got)
	}
	for i, w := range want {
		if got[i].Status != w.status || got[i].Billed != w.billed || got[i].Free != w.free {
			t.Errorf("outcome %d = %+v, want %+v", i, got[i], w)
		}
	}
	if got[3].Credits.Remaining.V != 8 {
		t.Errorf("credits_remaining = %+v", got[3].Credits)
	}
}

func TestRedirectToAnotherHostDropsKey(t *testing.T) {
	t.Parallel()
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("x-api-key"))
		w.WriteHeader(401)
	}))
	t.Cleanup(other.Close)
	// Same port, other host name: a different host to the client.
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		http.Redirect(w, r, target+r.URL.Path, http.StatusFound)
	})
	c := testClient(t, s.srv.URL, nil)
	_, _ = c.SVProfile(context.Background(), "alice")
	if v, _ := leaked.Load().(string); v != "" {
		t.Errorf("x-api-key %q sent to another host", v)
	}
	if leaked.Load() == nil {
		t.Error("the redirect was not followed: the test proves nothing")
	}
}

func TestRateLimitWaitsDoNotUseRetries(t *testing.T) {
	t.Parallel()
	// A 429 with nothing measured yet holds the key at the rate control's
	// floor (0.5/s) until an answer comes; a retry borrows its token
	// ahead of it, a burst at most. With the default burst of 1 the
	// scripted 429s cost 12 s of real time here, which this test does not
	// look at: a ceiling's burst of 10 lets every retry leave at the end
	// of its pause.
	ceiling := func(c *Config) { c.Rate, c.Burst = 1000, 10 }
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		if n <= 4 {
			w.Header().Set("Retry-After", "0.01")
			w.WriteHeader(429)
			return
		}
		fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
	})
	c := testClient(t, s.srv.URL, func(c *Config) { ceiling(c); c.MaxRetries = 1 })
	if _, err := c.SVProfile(context.Background(), "a"); err != nil {
		t.Fatalf("four 429s with max_retries 1: %v", err)
	}
	limited := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		w.Header().Set("Retry-After", "0.01")
		w.WriteHeader(429)
	})
	c = testClient(t, limited.srv.URL, func(c *Config) { ceiling(c); c.MaxRateLimitWaits = 3 })
	_, err := c.SVProfile(context.Background(), "a")
	if ClassOf(err) != ClassRateLimited || limited.calls.Load() != 4 {
		t.Errorf("err = %v after %d calls; want rate_limited after 1 + 3 waits", err, limited.calls.Load())
	}
}

// A 429 pauses the key before anything else happens (the AfterResponse
// hook is a database round trip in the pipeline), and a worker that had
// already reserved its credit when the 429 came waits the pause out
// instead of sending into it.
func TestPauseBeatsHooksAndReservedWaits(t *testing.T) {
	t.Parallel()
	var limitedAt atomic.Int64
	var early atomic.Int64
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		if n == 1 {
			limitedAt.Store(time.Now().UnixNano())
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
		if time.Since(time.Unix(0, limitedAt.Load())) < 950*time.Millisecond {
			early.Add(1)
		}
		fmt.Fprint(w, `{"success":true,"user":{"uniqueId":"a"},"stats":{}}`)
	})
	bEntered, limitedSeen := make(chan struct{}), make(chan struct{})
	var reserves atomic.Int64
	var pausedAtHook atomic.Bool
	var c *Client
	lease := &testLease{reserve: func() error {
		if reserves.Add(1) == 1 { // worker B: reserved before the 429 arrives
			close(bEntered)
			<-limitedSeen
		}
		return nil
	}}
	c = testClient(t, s.srv.URL, func(cfg *Config) {
		cfg.AfterResponse = func(_ context.Context, o Outcome) {
			if o.Status == 429 {
				pausedAtHook.Store(c.control.Paused())
				close(limitedSeen)
			}
		}
	})
	ctx := context.Background()
	var g sync.WaitGroup
	g.Go(func() {
		if _, err := Do(ctx, c, lease, testProfileCall("b")); err != nil {
			t.Error(err)
		}
	})
	<-bEntered
	if _, err := Do(ctx, c, lease, testProfileCall("a")); err != nil {
		t.Fatal(err)
	}
	g.Wait()
	if !pausedAtHook.Load() {
		t.Error("the pause was not in force when the 429's AfterResponse hook ran")
	}
	if early.Load() != 0 || s.calls.Load() != 3 {
		t.Errorf("early %d, calls %d; want 0, 3", early.Load(), s.calls.Load())
	}
}

func TestUnsentRequestIsReported(t *testing.T) {
	t.Parallel()
	base := "http://127.0.0.1:1" // a privileged port nobody listens on: refused
	var notSent, reserved atomic.Int64
	c := testClient(t, base, func(c *Config) {
		c.MaxRetries = 2
		c.OutageWindow = Duration(100 * time.Millisecond) // refused throughout: an outage
		c.AfterResponse = func(_ context.Context, o Outcome) {
			if o.NotSent && !o.Billed {
				notSent.Add(1)
			}
		}
	})
	lease := &testLease{reserve: func() error { reserved.Add(1); return nil }}
	_, err := Do(context.Background(), c, lease, testProfileCall("a"))
	// The last attempt reserved, then found the outage past its window
	// and sent nothing: its reservation is the lease's to give back.
	if ClassOf(err) != ClassUnreachable || notSent.Load() < 2 || notSent.Load() != reserved.Load()-1 {
		t.Errorf("err = %v, unsent outcomes = %d of %d reserved; want unreachable and every attempt sent unsent", err, notSent.Load(), reserved.Load())
	}
}

func TestNULEscapesReplaced(t *testing.T) {
	t.Parallel()
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		fmt.Fprint(w, `{"user":{"uniqueId":"a","nickname":"x\u0000y","signature":"keep \\u0000 text"},"stats":{}}`)
	})
	c := testClient(t, s.srv.URL, nil)
	p, err := c.SVProfile(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if p.User.Nickname != "x\ufffdy" || p.User.Signature != `keep \u0000 text` {
		t.Errorf("nickname %q signature %q", p.User.Nickname, p.User.Signature)
	}
	if strings.Contains(string(p.Raw), `x\u0000`) {
		t.Errorf("raw still holds a NUL escape: %s", p.Raw)
	}
}
