package sources

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// recorder is a scripted upstream that answers the n-th request with the
// n-th body (the last one repeating) and records the path and query of each.
type recorder struct {
	*scripted
	mu   sync.Mutex
	sent []string
}

func newRecorder(t *testing.T, bodies ...string) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.scripted = newScripted(t, func(w http.ResponseWriter, r *http.Request, n int64) {
		rec.mu.Lock()
		rec.sent = append(rec.sent, r.URL.Path+"?"+r.URL.RawQuery)
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(bodies[min(int(n), len(bodies))-1]))
	})
	return rec
}

// requests returns the path?query of every request so far.
func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// call runs one typed call against a recorder answering body and returns its
// result and the single request it sent.
func call[T any](t *testing.T, body string, fn func(ctx context.Context, c *Client) (T, error)) (T, string) {
	t.Helper()
	rec := newRecorder(t, body)
	c := testClient(t, rec.srv.URL, nil)
	v, err := fn(context.Background(), c)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %q, want exactly one", reqs)
	}
	return v, reqs[0]
}

// wantQuery fails unless got is path?query with the query equal to want
// (compared decoded, so the parameter order does not matter).
func wantQuery(t *testing.T, got, path string, want url.Values) {
	t.Helper()
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != path {
		t.Errorf("path = %q, want %q", u.Path, path)
	}
	q := u.Query()
	if q.Encode() != want.Encode() {
		t.Errorf("query = %q, want %q", q.Encode(), want.Encode())
	}
}

func TestRequiredParametersNeverSent(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, `{}`)
	c := testClient(t, rec.srv.URL, nil)
	ctx := context.Background()
	cases := map[string]func() error{
		"keyword search": func() error { _, err := c.SVKeywordSearch(ctx, KeywordQuery{Keyword: " "}, ""); return err },
		"hashtag search": func() error { _, err := c.SVHashtagSearch(ctx, "  ", ""); return err },
		"top search":     func() error { _, err := c.SVTopSearch(ctx, "", "c"); return err },
		"song videos":    func() error { _, err := c.SVSongVideos(ctx, "", ""); return err },
		"song":           func() error { _, err := c.SVSong(ctx, " "); return err },
		"live":           func() error { _, err := c.SVLive(ctx, "@"); return err },
		"ps profile":     func() error { _, err := c.PSProfile(ctx, " @ "); return err },
		"comments empty": func() error { _, err := c.PSComments(ctx, "", ""); return err },
		"comments relative": func() error {
			_, err := c.PSComments(ctx, "/p/Cabc/", "")
			return err
		},
		"comments scheme":  func() error { _, err := c.PSComments(ctx, "ftp://x/p/C/", ""); return err },
		"reels query":      func() error { _, err := c.PSReelsSearch(ctx, "", 1); return err },
		"reels page 0":     func() error { _, err := c.PSReelsSearch(ctx, "cats", 0); return err },
		"transcript":       func() error { _, err := c.PSTranscript(ctx, "Dabc"); return err },
		"embed":            func() error { _, err := c.PSEmbed(ctx, ""); return err },
		"highlight prefix": func() error { _, err := c.PSHighlight(ctx, "highlight:"); return err },
		"highlight letters": func() error {
			_, err := c.PSHighlight(ctx, "17a")
			return err
		},
	}
	for name, fn := range cases {
		err := fn()
		var e *Error
		if !errors.As(err, &e) || e.Class != ClassBadRequest || e.Status != 0 || !strings.Contains(e.Message, "parameter ") {
			t.Errorf("%s: err = %v, want a client-side bad request", name, err)
		}
	}
	if n := rec.calls.Load(); n != 0 {
		t.Errorf("%d requests sent for refused parameters", n)
	}
}
