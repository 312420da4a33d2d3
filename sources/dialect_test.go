package sources

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Under the real service's preset every call goes out on that service's
// path, with its parameter names and fixed parameters, and nothing else:
// the request line of each of the 18 calls, as the server saw it.
func TestScrapeCreatorsRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	post := "https://www.photosocial.example/p/ABC123/"
	want := map[string]string{
		"/v1/tiktok/search/keyword":           "cursor=12&query=cats",
		"/v1/tiktok/search/hashtag":           "cursor=12&hashtag=cats",
		"/v1/tiktok/search/top":               "query=cats",
		"/v1/tiktok/user/followers":           "handle=alice&min_time=1700000000",
		"/v1/tiktok/user/following":           "handle=alice",
		"/v1/tiktok/song/videos":              "clipId=7370375686554782506&cursor=30",
		"/v1/tiktok/song":                     "clipId=7370375686554782506",
		"/v1/tiktok/get-trending-feed":        "region=US",
		"/v1/tiktok/creators/popular":         "",
		"/v1/tiktok/profile":                  "handle=alice",
		"/v1/tiktok/user/live":                "handle=alice",
		"/v1/instagram/profile":               "handle=bob",
		"/v2/instagram/post/comments":         "cursor=QVFE&url=" + strings.NewReplacer(":", "%3A", "/", "%2F").Replace(post),
		"/v2/instagram/reels/search":          "page=2&query=dogs",
		"/v2/instagram/media/transcript":      "url=" + strings.NewReplacer(":", "%3A", "/", "%2F").Replace(post),
		"/v1/instagram/user/embed":            "handle=bob",
		"/v1/instagram/user/highlight/detail": "id=18067016518767507",
	}
	s, c := checkRealRequests(t, want, func(c *Client) []func() error {
		return []func() error{
			func() error { _, err := c.SVKeywordSearch(ctx, KeywordQuery{Keyword: "cats"}, "12"); return err },
			func() error { _, err := c.SVHashtagSearch(ctx, "cats", "12"); return err },
			func() error { _, err := c.SVTopSearch(ctx, "cats", ""); return err },
			func() error { _, err := c.SVFollowers(ctx, "alice", "1700000000"); return err },
			func() error { _, err := c.SVFollowing(ctx, "alice", ""); return err },
			func() error { _, err := c.SVSongVideos(ctx, "7370375686554782506", "30"); return err },
			func() error { _, err := c.SVSong(ctx, "7370375686554782506"); return err },
			func() error { _, err := c.SVTrendingFeed(ctx); return err },
			func() error { _, err := c.SVPopularCreators(ctx); return err },
			func() error { _, err := c.SVProfile(ctx, "alice"); return err },
			func() error { _, err := c.SVLive(ctx, "alice"); return err },
			func() error { _, err := c.PSProfile(ctx, "bob"); return err },
			func() error { _, err := c.PSComments(ctx, post, "QVFE"); return err },
			func() error { _, err := c.PSReelsSearch(ctx, "dogs", 2); return err },
			func() error { _, err := c.PSTranscript(ctx, post); return err },
			func() error { _, err := c.PSEmbed(ctx, "bob"); return err },
			func() error { _, err := c.PSHighlight(ctx, "18067016518767507"); return err },
		}
	})
	// The retired feed is not asked at all.
	before := s.calls.Load()
	if _, err := c.SVPopularVideos(ctx); ClassOf(err) != ClassRetired || !strings.Contains(err.Error(), "retired") {
		t.Errorf("popular videos: %v, want ClassRetired", err)
	}
	if s.calls.Load() != before {
		t.Error("a retired endpoint was called")
	}
}

// checkRealRequests sends the calls made by calls with a client of the
// real service's preset to a server that records each request's path and
// query (answering {"success":true}), and checks them against want.
func checkRealRequests(t *testing.T, want map[string]string, calls func(c *Client) []func() error) (*scripted, *Client) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]string{}
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		mu.Lock()
		seen[r.URL.Path] = r.URL.RawQuery
		mu.Unlock()
		fmt.Fprint(w, `{"success":true}`)
	})
	c := testClient(t, s.srv.URL, func(c *Config) { c.Preset, c.BaseURL = PresetScrapeCreators, s.srv.URL })
	for i, call := range calls(c) {
		if err := call(); err != nil && ClassOf(err) != ClassBadRequest { // {"success":true} is no page: malformed is fine
			t.Errorf("call %d: %v", i, err)
		}
	}
	for path, q := range want {
		if got, ok := seen[path]; !ok || got != q {
			t.Errorf("%s?%s, want ?%s (sent: %v)", path, got, q, ok)
		}
	}
	if len(seen) != len(want) {
		paths := make([]string, 0, len(seen))
		for p := range seen {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		t.Errorf("paths sent: %v", paths)
	}
	return s, c
}

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

// The real service's own endpoints go out on its paths with its parameter
// names (docs/upstream.md cites each from the vendor's catalogue); under
// the contract's preset, which has no such endpoints, nothing is sent.
func TestScrapeCreatorsContentRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	video, post := "https://www.tiktok.com/@a/video/7", "https://www.instagram.com/p/DH3/"
	esc := strings.NewReplacer(":", "%3A", "/", "%2F", "@", "%40").Replace
	want := map[string]string{
		"/v3/tiktok/profile/videos":          "handle=alice&max_cursor=1734562353000&sort_by=latest",
		"/v1/tiktok/profile":                 "user_id=6659752019493208069",
		"/v2/tiktok/video":                   "url=" + esc(video),
		"/v1/tiktok/video/comments":          "cursor=20&url=" + esc(video),
		"/v1/tiktok/video/comment/replies":   "comment_id=7623828115408274207&cursor=3&url=" + esc(video),
		"/v1/tiktok/video/transcript":        "url=" + esc(video),
		"/v2/instagram/user/posts":           "handle=bob&next_max_id=3599731065704772932_260462810",
		"/v1/instagram/user/reels":           "handle=bob&max_id=QVFC%3D%3D",
		"/v1/instagram/post":                 "url=" + esc(post),
		"/v1/instagram/post/comment/replies": "comment_id=18038110327814211&cursor=QVFD&url=" + esc(post),
		"/v1/instagram/user/highlights":      "handle=bob",
	}
	s, _ := checkRealRequests(t, want, func(c *Client) []func() error {
		return []func() error{
			func() error { _, err := Do(ctx, c, nil, SVProfileVideosCall("@alice", "1734562353000")); return err },
			func() error { _, err := Do(ctx, c, nil, SVProfileByIDCall("6659752019493208069")); return err },
			func() error { _, err := Do(ctx, c, nil, SVVideoCall(video)); return err },
			func() error { _, err := Do(ctx, c, nil, SVVideoCommentsCall(video, "20")); return err },
			func() error {
				_, err := Do(ctx, c, nil, SVCommentRepliesCall(video, "7623828115408274207", "3"))
				return err
			},
			func() error { _, err := Do(ctx, c, nil, SVTranscriptCall(video)); return err },
			func() error {
				_, err := Do(ctx, c, nil, PSUserPostsCall("bob", "3599731065704772932_260462810"))
				return err
			},
			func() error { _, err := Do(ctx, c, nil, PSUserReelsCall("bob", "QVFC==")); return err },
			func() error { _, err := Do(ctx, c, nil, PSPostCall(post)); return err },
			func() error {
				_, err := Do(ctx, c, nil, PSCommentRepliesCall(post, "18038110327814211", "QVFD"))
				return err
			},
			func() error { _, err := Do(ctx, c, nil, PSHighlightsCall("bob")); return err },
		}
	})
	// The contract has none of them: refused unsent, as retired, naming the
	// preset.
	contract := testClient(t, s.srv.URL, nil)
	before := s.calls.Load()
	_, err := Do(ctx, contract, nil, SVProfileVideosCall("alice", ""))
	if ClassOf(err) != ClassRetired || !strings.Contains(err.Error(), "the contract preset has no shortvideo.profile_videos endpoint") {
		t.Errorf("under the contract: %v", err)
	}
	if s.calls.Load() != before {
		t.Error("a contract client sent a real-only endpoint's request")
	}
}
