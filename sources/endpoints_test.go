package sources_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/endpoints"
	"github.com/socialcrawl/crawler/testkit/upstreamtest"
)

// An empty required parameter is refused before any request, naming the
// endpoint in the spec's terms; the secUid of a follower list included.
func TestEmptyParameterRefusedUnsent(t *testing.T) {
	t.Parallel()
	s := upstreamtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) { fmt.Fprint(w, `{}`) })
	c := upstreamtest.Client(t, s.URL, nil)
	ctx := context.Background()
	for want, call := range map[string]func() error{
		"/photosocial/profile: bad_request: parameter handle is empty":        func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSProfileCall(" @ ")); return err },
		"/photosocial/user/embed: bad_request: parameter handle is empty":     func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSEmbedCall("")); return err },
		"/shortvideo/profile: bad_request: parameter handle is empty":         func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVProfileCall("@")); return err },
		"/shortvideo/user/live: bad_request: parameter handle is empty":       func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVLiveCall("")); return err },
		"/shortvideo/search/hashtag: bad_request: parameter keyword is empty": func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVHashtagSearchCall(" ", "")); return err },
		"/shortvideo/song: bad_request: parameter id is empty":                func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVSongCall("")); return err },
		"/shortvideo/user/followers: bad_request: parameter secUid is empty":  func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVFollowersCall("", "")); return err },
	} {
		if err := call(); err == nil || err.Error() != want || sources.ClassOf(err) != sources.ClassBadRequest {
			t.Errorf("got %v, want %s", err, want)
		}
	}
	if n := s.Calls.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestRequiredParametersNeverSent(t *testing.T) {
	t.Parallel()
	rec := upstreamtest.NewRecorder(t, `{}`)
	c := upstreamtest.Client(t, rec.URL, nil)
	ctx := context.Background()
	cases := map[string]func() error{
		"keyword search": func() error {
			_, err := sources.Do(ctx, c, nil, endpoints.SVKeywordSearchCall(endpoints.KeywordQuery{Keyword: " "}, ""))
			return err
		},
		"hashtag search": func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVHashtagSearchCall("  ", "")); return err },
		"top search":     func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVTopSearchCall("", "c")); return err },
		"song videos":    func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVSongVideosCall("", "")); return err },
		"song":           func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVSongCall(" ")); return err },
		"live":           func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVLiveCall("@")); return err },
		"ps profile":     func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSProfileCall(" @ ")); return err },
		"comments empty": func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSCommentsCall("", "")); return err },
		"comments relative": func() error {
			_, err := sources.Do(ctx, c, nil, endpoints.PSCommentsCall("/p/Cabc/", ""))
			return err
		},
		"comments scheme": func() error {
			_, err := sources.Do(ctx, c, nil, endpoints.PSCommentsCall("ftp://x/p/C/", ""))
			return err
		},
		"reels query":      func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSReelsSearchCall("", 1)); return err },
		"reels page 0":     func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSReelsSearchCall("cats", 0)); return err },
		"transcript":       func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSTranscriptCall("Dabc")); return err },
		"embed":            func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSEmbedCall("")); return err },
		"highlight prefix": func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSHighlightCall("highlight:")); return err },
		"highlight letters": func() error {
			_, err := sources.Do(ctx, c, nil, endpoints.PSHighlightCall("17a"))
			return err
		},
	}
	for name, fn := range cases {
		err := fn()
		var e *sources.Error
		if !errors.As(err, &e) || e.Class != sources.ClassBadRequest || e.Status != 0 || !strings.Contains(e.Message, "parameter ") {
			t.Errorf("%s: err = %v, want a client-side bad request", name, err)
		}
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("%d requests sent for refused parameters", n)
	}
}

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
	s, c := checkRealRequests(t, want, func(c *sources.Client) []func() error {
		return []func() error{
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVKeywordSearchCall(endpoints.KeywordQuery{Keyword: "cats"}, "12"))
				return err
			},
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVHashtagSearchCall("cats", "12"))
				return err
			},
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVTopSearchCall("cats", "")); return err },
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVFollowersCall("alice", "1700000000"))
				return err
			},
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVFollowingCall("alice", "")); return err },
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVSongVideosCall("7370375686554782506", "30"))
				return err
			},
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVSongCall("7370375686554782506"))
				return err
			},
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVTrendingFeedCall()); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVPopularCreatorsCall()); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVProfileCall("alice")); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVLiveCall("alice")); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSProfileCall("bob")); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSCommentsCall(post, "QVFE")); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSReelsSearchCall("dogs", 2)); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSTranscriptCall(post)); return err },
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSEmbedCall("bob")); return err },
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.PSHighlightCall("18067016518767507"))
				return err
			},
		}
	})
	// The retired feed is not asked at all.
	before := s.Calls.Load()
	if _, err := sources.Do(ctx, c, nil, endpoints.SVPopularVideosCall()); sources.ClassOf(err) != sources.ClassRetired || !strings.Contains(err.Error(), "retired") {
		t.Errorf("popular videos: %v, want ClassRetired", err)
	}
	if s.Calls.Load() != before {
		t.Error("a retired endpoint was called")
	}
}

// checkRealRequests sends the calls made by calls with a client of the
// real service's preset to a server that records each request's path and
// query (answering {"success":true}), and checks them against want.
func checkRealRequests(t *testing.T, want map[string]string, calls func(c *sources.Client) []func() error) (*upstreamtest.Server, *sources.Client) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]string{}
	s := upstreamtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		mu.Lock()
		seen[r.URL.Path] = r.URL.RawQuery
		mu.Unlock()
		fmt.Fprint(w, `{"success":true}`)
	})
	c := upstreamtest.Client(t, s.URL, func(c *sources.Config) { c.Preset, c.BaseURL = sources.PresetScrapeCreators, s.URL })
	for i, call := range calls(c) {
		if err := call(); err != nil && sources.ClassOf(err) != sources.ClassBadRequest { // {"success":true} is no page: malformed is fine
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
	s, _ := checkRealRequests(t, want, func(c *sources.Client) []func() error {
		return []func() error{
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVProfileVideosCall("@alice", "1734562353000"))
				return err
			},
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVProfileByIDCall("6659752019493208069"))
				return err
			},
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVVideoCall(video)); return err },
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVVideoCommentsCall(video, "20"))
				return err
			},
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.SVCommentRepliesCall(video, "7623828115408274207", "3"))
				return err
			},
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.SVTranscriptCall(video)); return err },
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.PSUserPostsCall("bob", "3599731065704772932_260462810"))
				return err
			},
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.PSUserReelsCall("bob", "QVFC=="))
				return err
			},
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSPostCall(post)); return err },
			func() error {
				_, err := sources.Do(ctx, c, nil, endpoints.PSCommentRepliesCall(post, "18038110327814211", "QVFD"))
				return err
			},
			func() error { _, err := sources.Do(ctx, c, nil, endpoints.PSHighlightsCall("bob")); return err },
		}
	})
	// The contract has none of them: refused unsent, as retired, naming the
	// preset.
	contract := upstreamtest.Client(t, s.URL, nil)
	before := s.Calls.Load()
	_, err := sources.Do(ctx, contract, nil, endpoints.SVProfileVideosCall("alice", ""))
	if sources.ClassOf(err) != sources.ClassRetired || !strings.Contains(err.Error(), "the contract preset has no shortvideo.profile_videos endpoint") {
		t.Errorf("under the contract: %v", err)
	}
	if s.Calls.Load() != before {
		t.Error("a contract client sent a real-only endpoint's request")
	}
}
