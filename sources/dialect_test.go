package sources

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Errors as the real service means them: 403 is one item blocked, a
// missing key's 500 is an auth failure, and a redirect loop is that
// request's own fault (never an outage that would pause every worker).
func TestRealServiceErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
		class  Class
		calls  int64
	}{
		{"blocked", 403, `{"success":false,"message":"This content is blocked"}`, ClassBlocked, 1},
		{"missing key", 500, `{"success":false,"message":"apiKey is required"}`, ClassAuth, 1},
		{"other 500", 500, `{"success":false,"message":"oops"}`, ClassRetry, 3},
		{"out of credits", 402, `{"success":false,"message":"Looks like you're out of credits :("}`, ClassNoCredits, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			})
			c := testClient(t, s.srv.URL, func(c *Config) { c.MaxRetries = 2 })
			_, err := c.SVProfile(context.Background(), "alice")
			if ClassOf(err) != tc.class || s.calls.Load() != tc.calls {
				t.Errorf("err = %v after %d requests, want class %v after %d", err, s.calls.Load(), tc.class, tc.calls)
			}
		})
	}
	t.Run("redirect loop", func(t *testing.T) {
		t.Parallel()
		s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
			http.Redirect(w, r, r.URL.Path+"?again=1", http.StatusFound)
		})
		c := testClient(t, s.srv.URL, func(c *Config) { c.MaxRetries = 2; c.OutageWindow = Duration(time.Hour) })
		start := time.Now()
		_, err := c.SVProfile(context.Background(), "alice")
		var e *Error
		if !errors.As(err, &e) || e.Class != ClassBadRequest || !strings.Contains(e.Message, "redirect") {
			t.Fatalf("err = %v, want a bad request naming the redirect", err)
		}
		// One call of 10 requests (the first and 9 redirects: the 10th is not
		// followed), no retry,
		// and the outage gate stays open.
		if n := s.calls.Load(); n != 10 {
			t.Errorf("requests = %d, want 10", n)
		}
		if c.gate.isClosed() {
			t.Error("a redirect loop closed the outage gate")
		}
		if time.Since(start) > time.Minute {
			t.Error("the redirect loop was waited out")
		}
	})
}

// What an answer costs: its credits_charged when it says, else 1 when billed.
func TestOutcomeCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    Outcome
		want int64
	}{
		{Outcome{Billed: true}, 1},
		{Outcome{Billed: true, Credits: Credits{Charged: Int64{V: 15, Valid: true}}}, 15},
		{Outcome{Free: true, Credits: Credits{Charged: Int64{V: 0, Valid: true}}}, 0},
		{Outcome{Status: 404, Credits: Credits{Charged: Int64{V: 3, Valid: true}}}, 0},
	} {
		if got := tc.o.Cost(); got != tc.want {
			t.Errorf("%+v: cost %d, want %d", tc.o, got, tc.want)
		}
	}
}

// A charged 200 whose data is all nulls is not found (billed once, never
// retried, no row of nulls); a body of envelope members only is an answer
// without data, not charged.
func TestAllNullAndDatalessAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		class      Class
		billed     bool
	}{
		{"all null", `{"success":true,"credits_charged":1,"user":null,"stats":null}`, ClassNotFound, true},
		{"nested nulls", `{"user":{"id":null,"uniqueId":null},"stats":{"followerCount":null}}`, ClassNotFound, true},
		{"dataless", `{"success":true}`, 0, false},
		{"some data", `{"user":{"id":null,"uniqueId":"alice"},"stats":null}`, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			outs, calls, err := profileOutcomes(t, tc.body)
			if ClassOf(err) != tc.class || calls != 1 {
				t.Errorf("err = %v after %d requests, want class %v after 1", err, calls, tc.class)
			}
			if len(outs) != 1 || outs[0].Billed != tc.billed {
				t.Errorf("outcomes %+v, want one billed=%v", outs, tc.billed)
			}
		})
	}
}

// profileOutcomes asks a profile of a server answering body: the outcomes
// the client reported, the requests the server saw, the call's error.
func profileOutcomes(t *testing.T, body string) ([]Outcome, int64, error) {
	t.Helper()
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) { fmt.Fprint(w, body) })
	var outs []Outcome
	var mu sync.Mutex
	c := testClient(t, s.srv.URL, func(c *Config) {
		c.AfterResponse = func(_ context.Context, o Outcome) { mu.Lock(); outs = append(outs, o); mu.Unlock() }
	})
	_, err := c.SVProfile(context.Background(), "alice")
	mu.Lock()
	defer mu.Unlock()
	return outs, s.calls.Load(), err
}

// An answer saying the account has 0 credits left is kept, and the next
// call stops like a 402 without sending anything.
func TestCreditsRemainingZeroStops(t *testing.T) {
	t.Parallel()
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		fmt.Fprintf(w, `{"success":true,"credits_remaining":%d,"credits_charged":1,"user":{"uniqueId":"alice"}}`, 2-n)
	})
	c := testClient(t, s.srv.URL, nil)
	ctx := context.Background()
	for i, wantErr := range []bool{false, false, true} {
		_, err := c.SVProfile(ctx, "alice")
		if (err != nil) != wantErr || (wantErr && ClassOf(err) != ClassNoCredits) {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if n := s.calls.Load(); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

// One 403 is an item blocked; BlockedRunMax of them in a row, with no
// success between, are the key refused, which stops the run.
func TestForbiddenStreakIsAuth(t *testing.T) {
	t.Parallel()
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		if r.URL.Query().Get("handle") == "ok" {
			fmt.Fprint(w, `{"user":{"uniqueId":"ok"}}`)
			return
		}
		w.WriteHeader(403)
		fmt.Fprint(w, `{"success":false,"message":"blocked"}`)
	})
	c := testClient(t, s.srv.URL, nil)
	ctx := context.Background()
	for i := 1; i < BlockedRunMax; i++ {
		if _, err := c.SVProfile(ctx, "x"); ClassOf(err) != ClassBlocked {
			t.Fatalf("403 number %d: %v, want blocked", i, err)
		}
	}
	if _, err := c.SVProfile(ctx, "ok"); err != nil { // a success ends the streak
		t.Fatal(err)
	}
	for i := 1; i <= BlockedRunMax; i++ {
		_, err := c.SVProfile(ctx, "x")
		if want := map[bool]Class{true: ClassAuth, false: ClassBlocked}[i == BlockedRunMax]; ClassOf(err) != want {
			t.Fatalf("403 number %d after a success: %v, want %v", i, err, want)
		}
	}
}

// A credits_charged no request can cost (2^62 would overflow the ledger's
// sums) is refused as bad data for its task, billed as 1, never retried.
func TestAbsurdChargeRefused(t *testing.T) {
	t.Parallel()
	for _, charge := range []string{"4611686018427387904", "-5", "1001"} {
		s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
			fmt.Fprintf(w, `{"credits_charged":%s,"user":{"uniqueId":"alice"}}`, charge)
		})
		var outs []Outcome
		var mu sync.Mutex
		c := testClient(t, s.srv.URL, func(c *Config) {
			c.AfterResponse = func(_ context.Context, o Outcome) { mu.Lock(); outs = append(outs, o); mu.Unlock() }
		})
		_, err := c.SVProfile(context.Background(), "alice")
		if ClassOf(err) != ClassBadRequest || !strings.Contains(err.Error(), "not a credible charge") || s.calls.Load() != 1 {
			t.Errorf("charge %s: %v after %d requests", charge, err, s.calls.Load())
		}
		if len(outs) != 1 || outs[0].Cost() != 1 {
			t.Errorf("charge %s: outcomes %+v, want one costing 1", charge, outs)
		}
	}
}

// An answer's credits_charged is what it cost, whatever else it says: an
// answer marked cached, or holding only envelope members, is free only
// when it charges nothing or says no charge at all (docs/upstream.md,
// Credits: free means credits_charged 0).
func TestChargedAnswersAreBilled(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		cost       int64
		cached     bool
	}{
		{"cached but charged", `{"success":true,"credits_charged":3,"user":{"uniqueId":"a"},"cached":true,"cached_at":"2026-01-01T00:00:00.000Z"}`, 3, true},
		{"envelope only but charged", `{"success":true,"credits_charged":2}`, 2, false},
		{"cached at no charge", `{"user":{"uniqueId":"a"},"credits_charged":0,"cached":true}`, 0, true},
		{"cached, charge not said", `{"user":{"uniqueId":"a"},"cached":true}`, 0, true},
		{"envelope only, charge not said", `{"success":true}`, 0, false},
		{"data, charge not said", `{"user":{"uniqueId":"a"}}`, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			outs, _, _ := profileOutcomes(t, tc.body)
			if len(outs) != 1 || outs[0].Cost() != tc.cost || outs[0].Free != (tc.cost == 0) || outs[0].Cached != tc.cached {
				t.Errorf("outcomes %+v, want one costing %d (cached %v)", outs, tc.cost, tc.cached)
			}
		})
	}
}
