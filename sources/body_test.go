package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/socialcrawl/crawler/internal/jsontext"
)

func TestCheckShape(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, tc := range []struct {
		name, body string
		want       string // substring of the error, "" for none
	}{
		{"flat", `{"a":[1,2,{"b":-1.5e3}],"s":"{[{[\"]"}`, ""},
		{"at the limit", deep(MaxNesting), ""},
		{"too deep", deep(MaxNesting + 1), "nested deeper than 64 levels"},
		{"deep arrays", strings.Repeat("[", 9000), "nested deeper"},
		{"brackets in strings do not count", `{"s":"` + strings.Repeat("[", 9000) + `"}`, ""},
		{"escaped quote keeps the string open", `{"s":"\"[[[["}`, ""},
		{"long number", `{"n":` + strings.Repeat("9", 10000) + `}`, "number literal longer than 40"},
		{"huge exponent is short", `{"n":1e999999999}`, ""},
		{"40 digits", `{"n":` + strings.Repeat("1", 40) + `}`, ""},
		{"41 digits", `{"n":` + strings.Repeat("1", 41) + `}`, "longer than 40"},
		{"long digits in a string", `{"n":"` + strings.Repeat("9", 10000) + `"}`, ""},
	} {
		err := checkShape([]byte(tc.body))
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseIntBounded(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"12": 12, "12.0": 12, "1.2e3": 1200, "-1.5E3": -1500, "0e999999999": 0, "1200e-2": 12,
		"9223372036854775807": 9223372036854775807, "9.223372036854775807e18": 9223372036854775807,
		"-9223372036854775808": -9223372036854775808, "+7": 7, "0.000": 0,
	} {
		if got, err := ParseInt(in); err != nil || got != want {
			t.Errorf("parseInt(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1.5", "1e-1", "1e999999999", "-1e999999999", "9223372036854775808", "1e19",
		"abc", "", "1e", "e5", ".", "1.2.3", "1e+", "--1", strings.Repeat("9", 10000), "1" + strings.Repeat("0", 50) + "e-50"} {
		if got, err := ParseInt(in); err == nil {
			t.Errorf("parseInt(%.30q) = %d, want an error", in, got)
		}
	}
	// Hostile literals cost no more than short ones.
	start := time.Now()
	for range 1000 {
		_, _ = ParseInt("1e999999999")
		_, _ = ParseInt(strings.Repeat("7", 5000) + ".0")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("2000 hostile literals took %v", d)
	}
}

func TestTruncateOnRuneBoundary(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", 200) // 2 bytes each
	for n := 1; n < 50; n++ {
		if got := Truncate(s, n); !utf8.ValidString(got) || len(got) > n+3 {
			t.Fatalf("truncate(%d) = %q", n, got)
		}
	}
	if got := Truncate("ab€", 3); got != "ab..." {
		t.Errorf("got %q", got)
	}
}

// A key echoed by the upstream, raw or escaped, in a 400, a 401 or a 2xx
// body, never reaches an error, a decoded value or a raw body.
func TestEchoedKeyRedacted(t *testing.T) {
	t.Parallel()
	escaped := strings.ReplaceAll(testKey, "-", `\u002d`)
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		switch r.URL.Query().Get("handle") {
		case "four":
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"message":"key %s is not valid for %s"}`, testKey, escaped)
		case "one":
			w.WriteHeader(401)
			fmt.Fprintf(w, `not json: %s`, escaped)
		default:
			fmt.Fprintf(w, `{"user":{"uniqueId":"x","nickname":"%s","signature":"%s"},"echo":{"key":"%s"}}`, testKey, escaped, testKey)
		}
	})
	c := testClient(t, s.srv.URL, nil)
	for _, h := range []string{"four", "one"} {
		_, err := c.SVProfile(context.Background(), h)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, jsontext.Marker) {
			t.Errorf("%s: err = %v, want the key redacted", h, err)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), escaped) {
			t.Errorf("%s: key in %q", h, err)
		}
	}
	p, err := c.SVProfile(context.Background(), "ok")
	if err != nil {
		t.Fatal(err)
	}
	if p.User.Nickname != jsontext.Marker || p.User.Signature != jsontext.Marker || strings.Contains(string(p.Raw), testKey) || strings.Contains(string(p.Raw), `\u002d`) || !json.Valid(p.Raw) {
		t.Errorf("profile %+v raw %s", p.User, p.Raw)
	}
}

// A body nested past MaxNesting or with an over-long number fails its call
// at once, billed once, in well under a second.
func TestHostileShapesFailFast(t *testing.T) {
	t.Parallel()
	deep := `{"user":{"uniqueId":"x"},"itemList":[` + strings.Repeat(`{"aweme_info":`, 9000) + `{"id":"1"}` + strings.Repeat("}", 9000) + `]}`
	long := `{"user":{"uniqueId":"x"},"stats":{"followerCount":` + strings.Repeat("9", 10000) + `}}`
	for name, body := range map[string]string{"deep": deep, "long number": long} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) { fmt.Fprint(w, body) })
			c := testClient(t, s.srv.URL, nil)
			start := time.Now()
			_, err := c.SVProfile(context.Background(), "x")
			if ClassOf(err) != ClassBadRequest || !strings.Contains(err.Error(), "malformed body") || s.calls.Load() != 1 {
				t.Errorf("err = %v after %d calls", err, s.calls.Load())
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// Bodies over the cap fail without being read past it, whether their length
// is announced or not; the in-flight budget is whole again afterwards.
func TestBodyCapAndBudget(t *testing.T) {
	t.Parallel()
	big := `{"user":{"nickname":"` + strings.Repeat("x", 5000) + `"}}`
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		if r.URL.Query().Get("handle") == "chunked" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		fmt.Fprint(w, big)
	})
	c := testClient(t, s.srv.URL, func(c *Config) { c.MaxBodyBytes = 4096; c.MaxInflightBytes = 4096 })
	for _, h := range []string{"sized", "chunked"} {
		_, err := c.SVProfile(context.Background(), h)
		if ClassOf(err) != ClassBadRequest || !strings.Contains(err.Error(), "body larger than 4096 bytes") {
			t.Errorf("%s: err = %v", h, err)
		}
	}
	if !c.bodies.sem.TryAcquire(4096) {
		t.Error("budget not given back")
	}
	c.bodies.sem.Release(4096)
	// Under a hold, a body stays counted until release.
	c2 := testClient(t, s.srv.URL, func(c *Config) { c.MaxBodyBytes = 8192; c.MaxInflightBytes = 8192 })
	lease := &testLease{}
	if _, err := Do(context.Background(), c2, lease, testProfileCall("sized")); err != nil {
		t.Fatal(err)
	}
	if c2.bodies.sem.TryAcquire(8192) {
		t.Error("held body not counted")
	}
	lease.release()
	lease.release()
	if !c2.bodies.sem.TryAcquire(8192) {
		t.Error("released body still counted")
	}
}
