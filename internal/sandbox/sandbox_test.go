package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "test-key-1"

// testBundle is one sandbox behind a real HTTP server, owned by one test.
type testBundle struct {
	srv *Server
	hs  *httptest.Server
	url string
	key string
}

func setup(t *testing.T, cfg Config) *testBundle {
	t.Helper()
	if cfg.APIKeys == nil {
		cfg.APIKeys = []string{testKey, "test-key-2"}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &testBundle{srv: srv, hs: hs, url: hs.URL, key: testKey}
}

// tWriter sends logs to t.Log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (b *testBundle) do(t *testing.T, method, path, rawQuery string, header map[string]string) (int, []byte) {
	t.Helper()
	u := b.url + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// get calls an endpoint (path after /api) with the test key.
func (b *testBundle) get(t *testing.T, path, rawQuery string) (int, []byte) {
	t.Helper()
	return b.do(t, http.MethodGet, "/api"+path, rawQuery, map[string]string{"x-api-key": b.key})
}

// getOK calls an endpoint that must answer 200 and decodes the body.
func (b *testBundle) getOK(t *testing.T, path, rawQuery string) map[string]any {
	t.Helper()
	status, body := b.get(t, path, rawQuery)
	if status != http.StatusOK {
		t.Fatalf("GET %s?%s: status %d, body %s", path, rawQuery, status, body)
	}
	m, ok := decode(t, body).(map[string]any)
	if !ok {
		t.Fatalf("GET %s?%s: not an object: %s", path, rawQuery, body)
	}
	return m
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%v is not an integer", v)
	}
	return i
}

func list(t *testing.T, m map[string]any, key string) []any {
	t.Helper()
	l, ok := m[key].([]any)
	if !ok {
		t.Fatalf("%q is %T, want array", key, m[key])
	}
	return l
}

func field(m any, path string) any {
	for _, k := range strings.Split(path, ".") {
		o, _ := m.(map[string]any)
		m = o[k]
	}
	return m
}

// walk follows a cursor list to its end and returns the item ids in order and
// the number of requests. idOf names the item field that identifies it.
type walkSpec struct {
	path, params, list, idOf string
	numericCursor            bool // keyword search form B
	commentsStyle            bool // no hasMore; "" ends
}

func (b *testBundle) walk(t *testing.T, w walkSpec) (ids []string, requests int) {
	t.Helper()
	cursor := ""
	for requests < 10_000 {
		q := w.params
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		m := b.getOK(t, w.path, q)
		requests++
		for _, it := range list(t, m, w.list) {
			ids = append(ids, jsonText(field(it, w.idOf)))
		}
		if w.commentsStyle {
			if _, has := m["hasMore"]; has {
				t.Fatalf("comments carry hasMore")
			}
			c, ok := m["cursor"].(string)
			if !ok {
				t.Fatalf("cursor is %T, want string", m["cursor"])
			}
			if c == "" {
				return ids, requests
			}
			cursor = c
			continue
		}
		if w.numericCursor {
			cursor = strconv.FormatInt(num(t, m["cursor"]), 10)
		} else {
			c, ok := m["cursor"].(string)
			if !ok {
				t.Fatalf("cursor is %T, want string", m["cursor"])
			}
			cursor = c
		}
		more, ok := m["hasMore"].(bool)
		if !ok {
			t.Fatalf("hasMore is %T, want boolean", m["hasMore"])
		}
		if !more {
			return ids, requests
		}
	}
	t.Fatalf("walk of %s did not end", w.path)
	return nil, 0
}

func pagesFor(n, p int) int { return max(1, (n+p-1)/p) }

func checkDistinct(t *testing.T, ids []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" {
			t.Fatalf("empty id in %v", ids)
		}
		if seen[id] {
			t.Fatalf("duplicate %q", id)
		}
		seen[id] = true
	}
}

func TestPaginationWalks(t *testing.T) {
	t.Parallel()
	const p = 7
	cases := []struct {
		name string
		walkSpec
		n int
	}{
		{"followers 23", walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + secUIDFor("walker_f23"), list: "followers", idOf: "uniqueId"}, 23},
		{"followers 0", walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + secUIDFor("walker_f0"), list: "followers", idOf: "uniqueId"}, 0},
		{"followers exactly one page", walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + secUIDFor("walker_f7"), list: "followers", idOf: "uniqueId"}, 7},
		{"following 15", walkSpec{path: "/shortvideo/user/following", params: "secUid=" + secUIDFor("walker_g15"), list: "following", idOf: "uniqueId"}, 15},
		{"song videos 17", walkSpec{path: "/shortvideo/song/videos", params: "id=tune_v17", list: "videos", idOf: "id"}, 17},
		{"song videos 0", walkSpec{path: "/shortvideo/song/videos", params: "id=tune_v0", list: "videos", idOf: "id"}, 0},
		{"keyword A 20", walkSpec{path: "/shortvideo/search/keyword", params: "keyword=cats_n20", list: "videos", idOf: "id"}, 20},
		{"keyword A missing", walkSpec{path: "/shortvideo/search/keyword", params: "keyword=missing_cats", list: "videos", idOf: "id"}, 0},
		{"keyword B 20", walkSpec{path: "/shortvideo/search/keyword", params: "query=cats+n20&sort_by=date-posted&region=us", list: "videos", idOf: "id", numericCursor: true}, 20},
		{"keyword B trimmed 14", walkSpec{path: "/shortvideo/search/keyword", params: "query=cats+n14&trim=true", list: "videos", idOf: "id", numericCursor: true}, 14},
		{"hashtag 13", walkSpec{path: "/shortvideo/search/hashtag", params: "keyword=dance+n13", list: "hashtags", idOf: "name"}, 13},
		{"top 29", walkSpec{path: "/shortvideo/search/top", params: "keyword=mixed_n29", list: "results", idOf: "type"}, 29},
		{"comments 17", walkSpec{path: "/photosocial/post/comments", params: "url=https://x.example/p/post_c17/", list: "comments", idOf: "id", commentsStyle: true}, 17},
		{"comments 14", walkSpec{path: "/photosocial/post/comments", params: "url=https://x.example/reel/post_c14", list: "comments", idOf: "id", commentsStyle: true}, 14},
		{"comments 0", walkSpec{path: "/photosocial/post/comments", params: "url=https://x.example/reels/post_c0/", list: "comments", idOf: "id", commentsStyle: true}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{PageSize: p})
			ids, requests := b.walk(t, c.walkSpec)
			if len(ids) != c.n {
				t.Fatalf("got %d items, want %d", len(ids), c.n)
			}
			if want := pagesFor(c.n, p); requests != want {
				t.Errorf("took %d requests, want %d", requests, want)
			}
			if c.idOf != "type" {
				checkDistinct(t, ids)
			}
			u := b.srv.Usage(testKey)
			if u.Requests != int64(requests) || u.Billable != int64(requests) {
				t.Errorf("usage %+v, want %d requests all billable", u, requests)
			}
			if e := u.ByEndpoint[c.path]; e.Requests != int64(requests) || e.Billable != int64(requests) {
				t.Errorf("usage of %s = %+v", c.path, e)
			}
		})
	}
}

func TestTopSearchTypes(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PageSize: 5})
	ids, _ := b.walk(t, walkSpec{path: "/shortvideo/search/top", params: "keyword=mixed_n11", list: "results", idOf: "type"})
	for i, typ := range ids {
		if want := []string{"video", "user", "hashtag", "sound"}[i%4]; typ != want {
			t.Errorf("rank %d is %s, want %s", i+1, typ, want)
		}
	}
	ids, _ = b.walk(t, walkSpec{path: "/shortvideo/search/top", params: "keyword=plain_n40", list: "results", idOf: "type"})
	kinds := map[string]int{}
	for _, typ := range ids {
		kinds[typ]++
	}
	if kinds["video"] == 0 || kinds["user"] == 0 || kinds["video"]+kinds["user"] != 40 {
		t.Errorf("without mixed: %v, want videos and users only", kinds)
	}
}

func TestReelsPages(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PageSize: 3}) // reels ignore PageSize
	var codes []string
	for page := 1; page <= 4; page++ {
		m := b.getOK(t, "/photosocial/reels/search", fmt.Sprintf("query=surf+n30&page=%d", page))
		reels := list(t, m, "reels")
		if want := []int{12, 12, 6, 0}[page-1]; len(reels) != want {
			t.Fatalf("page %d has %d reels, want %d", page, len(reels), want)
		}
		for _, r := range reels {
			codes = append(codes, field(r, "code").(string), field(r, "id").(string))
		}
	}
	checkDistinct(t, codes)
	first := b.getOK(t, "/photosocial/reels/search", "query=surf+n30")
	second := b.getOK(t, "/photosocial/reels/search", "query=surf+n30&page=1")
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Error("no page is not page 1")
	}
	if got := len(list(t, b.getOK(t, "/photosocial/reels/search", "query=missing"), "reels")); got != 0 {
		t.Errorf("missing query: %d reels", got)
	}
	if u := b.srv.Usage(testKey); u.Billable != 7 {
		t.Errorf("billable %d, want 7 (empty pages are billable)", u.Billable)
	}
}

func TestKeywordSearchForms(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PageSize: 100})
	ids := func(q string) []string {
		var out []string
		for _, v := range list(t, b.getOK(t, "/shortvideo/search/keyword", q), "videos") {
			out = append(out, field(v, "id").(string))
		}
		return out
	}
	a := ids("keyword=Cats+n40")
	if got := ids("query=cats+n40"); strings.Join(got, ",") != strings.Join(a, ",") {
		t.Error("form B without filters differs from form A")
	}
	if got := ids("query=cats+n40&date_posted=all-time&sort_by=relevance"); strings.Join(got, ",") != strings.Join(a, ",") {
		t.Error("form B with default filters differs from form A")
	}
	orders := map[string]string{"A": strings.Join(a, ",")}
	for _, q := range []string{"sort_by=most-liked", "sort_by=date-posted", "date_posted=yesterday", "region=FR", "region=DE"} {
		got := ids("query=cats+n40&" + q)
		if len(got) != 40 {
			t.Fatalf("%s: %d results", q, len(got))
		}
		key := strings.Join(got, ",")
		for other, o := range orders {
			if o == key {
				t.Errorf("%s gives the same order as %s", q, other)
			}
		}
		orders[q] = key
		sortedA, sortedGot := append([]string(nil), a...), append([]string(nil), got...)
		slicesSort(sortedA)
		slicesSort(sortedGot)
		if strings.Join(sortedA, ",") != strings.Join(sortedGot, ",") {
			t.Errorf("%s: not the same result set", q)
		}
	}
	// keyword wins over query: form B parameters, even invalid, are ignored.
	m := b.getOK(t, "/shortvideo/search/keyword", "keyword=cats_n40&query=dogs&date_posted=bogus")
	if _, isString := m["cursor"].(string); !isString {
		t.Error("keyword+query did not answer form A")
	}
	if got := len(list(t, m, "videos")); got != 40 {
		t.Errorf("keyword+query: %d videos, want 40", got)
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	for name, hdr := range map[string]map[string]string{
		"missing key": nil,
		"wrong key":   {"x-api-key": "sk-wrong-secret-value"},
	} {
		status, body := b.do(t, http.MethodGet, "/api/shortvideo/profile", "handle=alice", hdr)
		if status != http.StatusUnauthorized {
			t.Errorf("%s: status %d", name, status)
		}
		m := decode(t, body).(map[string]any)
		if m["success"] != false || m["error"] != "unauthorized" || kindOf(m["message"]) != tString {
			t.Errorf("%s: body %s", name, body)
		}
		if strings.Contains(string(body), "sk-wrong-secret-value") {
			t.Errorf("%s: body echoes the key: %s", name, body)
		}
	}
	anon := b.srv.Usage("")
	if anon.Requests != 2 || anon.Billable != 0 || anon.ByEndpoint["/shortvideo/profile"].Requests != 2 {
		t.Errorf("usage of unknown callers %+v", anon)
	}
	if u := b.srv.Usage(testKey); u.Requests != 0 {
		t.Errorf("test key charged for others: %+v", u)
	}
	// the second key works and is counted apart.
	status, _ := b.do(t, http.MethodGet, "/api/shortvideo/profile", "handle=alice", map[string]string{"x-api-key": "test-key-2"})
	if status != http.StatusOK || b.srv.Usage("test-key-2").Billable != 1 {
		t.Errorf("second key: status %d usage %+v", status, b.srv.Usage("test-key-2"))
	}
}

func expectError(t *testing.T, b *testBundle, path, q string, status int, code, mentions string) {
	t.Helper()
	gotStatus, body := b.get(t, path, q)
	if gotStatus != status {
		t.Errorf("%s?%s: status %d, want %d (body %s)", path, q, gotStatus, status, body)
		return
	}
	m, ok := decode(t, body).(map[string]any)
	if !ok || m["success"] != false || m["error"] != code {
		t.Errorf("%s?%s: body %s, want error %q", path, q, body, code)
		return
	}
	msg, _ := m["message"].(string)
	if !strings.Contains(msg, mentions) {
		t.Errorf("%s?%s: message %q does not name %q", path, q, msg, mentions)
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	post := "url=" + url.QueryEscape("https://www.photosocial.example/p/abc/")
	cases := []struct{ path, query, param string }{
		{"/shortvideo/search/keyword", "", "keyword"},
		{"/shortvideo/search/keyword", "cursor=5", "keyword"},
		{"/shortvideo/search/keyword", "keyword=cats&cursor=abc", "cursor"},
		{"/shortvideo/search/keyword", "keyword=cats&cursor=-1", "cursor"},
		{"/shortvideo/search/keyword", "query=cats&date_posted=today", "date_posted"},
		{"/shortvideo/search/keyword", "query=cats&sort_by=views", "sort_by"},
		{"/shortvideo/search/keyword", "query=cats&region=USA", "region"},
		{"/shortvideo/search/keyword", "query=cats&region=1a", "region"},
		{"/shortvideo/search/keyword", "query=cats&trim=yes", "trim"},
		{"/shortvideo/search/keyword", "query=cats&cursor=1.74e%2B09", "cursor"},
		{"/shortvideo/search/keyword", "query=cats&cursor=12.0", "cursor"},
		{"/shortvideo/search/hashtag", "", "keyword"},
		{"/shortvideo/search/hashtag", "keyword=x&cursor=z", "cursor"},
		{"/shortvideo/search/top", "", "keyword"},
		{"/shortvideo/user/followers", "", "secUid"},
		{"/shortvideo/user/followers", "secUid=" + secUIDFor("bob") + "&cursor=next", "cursor"},
		{"/shortvideo/user/following", "", "secUid"},
		{"/shortvideo/song/videos", "", "id"},
		{"/shortvideo/song/videos", "id=s1&cursor=+3", "cursor"},
		{"/shortvideo/song", "", "id"},
		{"/shortvideo/profile", "", "handle"},
		{"/shortvideo/profile", "handle=%40alice", "handle"},
		{"/shortvideo/user/live", "", "handle"},
		{"/shortvideo/user/live", "handle=%40alice", "handle"},
		{"/photosocial/profile", "", "handle"},
		{"/photosocial/profile", "handle=%40alice", "handle"},
		{"/photosocial/post/comments", "", "url"},
		{"/photosocial/post/comments", "url=abc", "url"},
		{"/photosocial/post/comments", "url=" + url.QueryEscape("https://www.photosocial.example/alice/"), "url"},
		{"/photosocial/post/comments", post + "&cursor=x", "cursor"},
		{"/photosocial/reels/search", "", "query"},
		{"/photosocial/reels/search", "query=x&page=0", "page"},
		{"/photosocial/reels/search", "query=x&page=two", "page"},
		{"/photosocial/media/transcript", "", "url"},
		{"/photosocial/media/transcript", "url=ftp://x/p/abc/", "url"},
		{"/photosocial/user/embed", "", "handle"},
		{"/photosocial/user/embed", "handle=%40alice", "handle"},
		{"/photosocial/user/highlight/detail", "", "id"},
		{"/photosocial/user/highlight/detail", "id=highlight:17900", "id"},
		{"/photosocial/user/highlight/detail", "id=17a", "id"},
	}
	for _, c := range cases {
		expectError(t, b, c.path, c.query, http.StatusBadRequest, "bad_request", c.param)
	}
	if u := b.srv.Usage(testKey); u.Requests != int64(len(cases)) || u.Billable != 0 {
		t.Errorf("usage %+v, want %d requests, none billable", u, len(cases))
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	cases := []struct{ path, query string }{
		{"/shortvideo/profile", "handle=missing_bob"},
		{"/shortvideo/user/live", "handle=missingno"},
		{"/shortvideo/user/followers", "secUid=" + secUIDFor("missing_f10")},
		{"/shortvideo/user/following", "secUid=" + secUIDFor("missing")},
		{"/shortvideo/user/followers", "secUid=not-a-secuid"},
		{"/shortvideo/user/followers", "secUid=MS4wLjABAAAA%21%21"},
		{"/shortvideo/song", "id=missing_v3"},
		{"/shortvideo/song/videos", "id=missing"},
		{"/photosocial/profile", "handle=missing_business"},
		{"/photosocial/user/embed", "handle=missing"},
		{"/photosocial/post/comments", "url=" + url.QueryEscape("https://www.photosocial.example/p/missing_c5/")},
		{"/photosocial/media/transcript", "url=" + url.QueryEscape("https://www.photosocial.example/reel/missingX/")},
		{"/photosocial/user/highlight/detail", "id=40412"},
	}
	for _, c := range cases {
		expectError(t, b, c.path, c.query, http.StatusNotFound, "not_found", "")
	}
	if u := b.srv.Usage(testKey); u.Requests != int64(len(cases)) || u.Billable != 0 {
		t.Errorf("usage %+v, want %d requests, none billable", u, len(cases))
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	hdr := map[string]string{"x-api-key": testKey}
	status, body := b.do(t, http.MethodPost, "/api/shortvideo/profile", "handle=alice", hdr)
	if status != http.StatusMethodNotAllowed || decode(t, body).(map[string]any)["error"] != "method_not_allowed" {
		t.Errorf("POST: %d %s", status, body)
	}
	for _, p := range []string{"/api/shortvideo/nope", "/api/shortvideo/profile/", "/shortvideo/profile", "/", "/api"} {
		status, body := b.do(t, http.MethodGet, p, "handle=alice", hdr)
		if status != http.StatusNotFound || decode(t, body).(map[string]any)["error"] != "not_found" {
			t.Errorf("GET %s: %d %s", p, status, body)
		}
	}
	u := b.srv.Usage(testKey)
	if u.Requests != 6 || u.Billable != 0 || u.ByEndpoint[OtherEndpoint].Requests != 5 {
		t.Errorf("usage %+v", u)
	}
}

func TestDebug(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.getOK(t, "/shortvideo/profile", "handle=alice")
	b.getOK(t, "/photosocial/profile", "handle=private_zed")
	b.get(t, "/shortvideo/profile", "handle=missing")

	status, body := b.do(t, http.MethodGet, "/debug/healthz", "", nil)
	if status != http.StatusOK || string(body) != "ok" {
		t.Errorf("healthz: %d %q", status, body)
	}
	status, body = b.do(t, http.MethodGet, "/debug/usage", "", map[string]string{"x-api-key": testKey})
	if status != http.StatusOK {
		t.Fatalf("usage: %d %s", status, body)
	}
	want := `{"requests":3,"billable":1,"credits":1,"rate_limited":0,"out_of_credits":0,"errors":0,"truncated":0,"hung":0,"by_endpoint":{"/photosocial/profile":{"requests":1,"billable":0,"credits":0},"/shortvideo/profile":{"requests":2,"billable":1,"credits":1}}}`
	if got := strings.TrimSpace(string(body)); got != want {
		t.Errorf("usage body\n got %s\nwant %s", got, want)
	}
	if u := b.srv.Usage(testKey); u.Requests != 3 {
		t.Errorf("debug calls were counted: %+v", u)
	}
	status, _ = b.do(t, http.MethodPost, "/debug/usage", "", nil)
	if status != http.StatusMethodNotAllowed {
		t.Errorf("POST /debug/usage: %d", status)
	}
}

func TestPrivateAccounts(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	status, body := b.get(t, "/photosocial/profile", "handle=private_f10")
	if status != http.StatusOK || strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("private photo profile: %d %s", status, body)
	}
	if u := b.srv.Usage(testKey); u.Requests != 1 || u.Billable != 0 {
		t.Errorf("private photo profile was billed: %+v", u)
	}
	p := b.getOK(t, "/shortvideo/profile", "handle=private_f10_g4")
	if field(p, "user.privateAccount") != true || num(t, field(p, "stats.followerCount")) != 10 {
		t.Errorf("short-video private profile: %v", p)
	}
	for _, path := range []string{"/shortvideo/user/followers", "/shortvideo/user/following"} {
		m := b.getOK(t, path, "secUid="+secUIDFor("private_f10_g4"))
		l := m["followers"]
		if l == nil {
			l = m["following"]
		}
		if len(l.([]any)) != 0 || m["hasMore"] != false || m["cursor"] != "0" {
			t.Errorf("%s of a private account: %v", path, m)
		}
	}
	if u := b.srv.Usage(testKey); u.Billable != 3 {
		t.Errorf("billable %d, want 3", u.Billable)
	}
}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	q := func(code string) string {
		return "url=" + url.QueryEscape("https://www.photosocial.example/reel/"+code+"/?igsh=x")
	}
	status, body := b.get(t, "/photosocial/media/transcript", q("clip_nospeech"))
	if status != http.StatusOK || strings.TrimSpace(string(body)) != `{"success":true,"transcripts":[]}` {
		t.Errorf("nospeech: %d %s", status, body)
	}
	one := list(t, b.getOK(t, "/photosocial/media/transcript", q("clip")), "transcripts")
	if len(one) != 1 || field(one[0], "shortcode") != "clip" {
		t.Errorf("default transcript: %v", one)
	}
	if n := len(list(t, b.getOK(t, "/photosocial/media/transcript", q("clip_t4")), "transcripts")); n != 4 {
		t.Errorf("t4: %d entries", n)
	}
	if u := b.srv.Usage(testKey); u.Billable != 3 {
		t.Errorf("billable %d, want 3", u.Billable)
	}
}

func TestHighlight(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	for id, n := range map[string]int{"17900000000000007": 7, "17900000000000000": 0, "5": 5, "12345": 45} {
		m := b.getOK(t, "/photosocial/user/highlight/detail", "id="+id)
		if m["id"] != "highlight:"+id || num(t, m["media_count"]) != int64(n) || len(list(t, m, "items")) != n {
			t.Errorf("id %s: %v", id, m)
		}
		for _, it := range list(t, m, "items") {
			mt, vv := num(t, field(it, "media_type")), field(it, "video_versions").([]any)
			if (mt == 2) != (len(vv) > 0) || (mt != 1 && mt != 2) {
				t.Errorf("id %s: item media_type %d with %d video versions", id, mt, len(vv))
			}
		}
	}
}

func TestBusinessContact(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	biz := b.getOK(t, "/photosocial/profile", "handle=acme_business_f12_g3")
	if field(biz, "data.user.is_business_account") != true || kindOf(field(biz, "data.user.category_name")) != tString ||
		kindOf(field(biz, "data.user.business_email")) != tString || num(t, field(biz, "data.user.edge_followed_by.count")) != 12 ||
		num(t, field(biz, "data.user.edge_follow.count")) != 3 {
		t.Errorf("business profile: %v", biz)
	}
	user := b.getOK(t, "/photosocial/profile", "handle=acme")
	for _, k := range []string{"category_name", "business_email", "business_phone_number", "public_email", "public_phone_number"} {
		if v, ok := field(user, "data.user").(map[string]any)[k]; !ok || v != nil {
			t.Errorf("personal %s = %v, want null", k, v)
		}
	}
	if field(user, "data.user.is_business_account") != false {
		t.Error("personal account is business")
	}
}

func TestLive(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{WorldTime: 3})
	on := b.getOK(t, "/shortvideo/user/live", "handle=streamer_live")
	if on["isLive"] != true || on["title"] == "" || num(t, on["viewerCount"]) <= 0 || num(t, on["startTime"]) <= 0 {
		t.Errorf("live: %v", on)
	}
	off := b.getOK(t, "/shortvideo/user/live", "handle=streamer")
	if off["isLive"] != false || off["title"] != "" || num(t, off["viewerCount"]) != 0 || num(t, off["startTime"]) != 0 {
		t.Errorf("offline: %v", off)
	}
}

func TestEmbed(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	m := b.getOK(t, "/photosocial/user/embed", "handle=erin.photos")
	if h, _ := m["html"].(string); !strings.HasPrefix(h, "<blockquote") || !strings.Contains(h, "erin.photos") {
		t.Errorf("html %q", h)
	}
}

func TestPathologicalLists(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PageSize: 4})
	page := func(handle, cursor string) (n int, next string, more bool) {
		q := "secUid=" + secUIDFor(handle)
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		m := b.getOK(t, "/shortvideo/user/followers", q)
		return len(list(t, m, "followers")), m["cursor"].(string), m["hasMore"].(bool)
	}
	// endless: full pages, fresh cursors, far past the follower count.
	cursor, seen := "", map[string]bool{}
	for range 10 {
		n, next, more := page("forever_endless_f5", cursor)
		if n != 4 || !more || seen[next] || next == cursor {
			t.Fatalf("endless: %d items, cursor %q -> %q, more %v", n, cursor, next, more)
		}
		seen[next], cursor = true, next
	}
	// loop: the same cursor back, forever.
	for _, c := range []string{"", "0", "8", "008"} {
		n, next, more := page("spin_loop", c)
		want := c
		if c == "" {
			want = "0"
		}
		if n != 4 || !more || next != want {
			t.Errorf("loop at %q: %d items, cursor %q, more %v", c, n, next, more)
		}
	}
	// emptymore: empty pages that claim more, with fresh cursors.
	cursor = ""
	for range 5 {
		n, next, more := page("hollow_emptymore_f100", cursor)
		if n != 0 || !more || next == cursor {
			t.Fatalf("emptymore: %d items, cursor %q -> %q, more %v", n, cursor, next, more)
		}
		cursor = next
	}
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	a, b := setup(t, Config{WorldTime: 9}), setup(t, Config{WorldTime: 9})
	for _, c := range contracts() {
		_, x := a.get(t, c.path, c.query)
		_, y := a.get(t, c.path, c.query)
		_, z := b.get(t, c.path, c.query)
		if !bytes.Equal(x, y) || !bytes.Equal(x, z) {
			t.Errorf("%s: answers differ", c.name)
		}
	}
}

func TestWorldTimeDrift(t *testing.T) {
	t.Parallel()
	t0, t5 := setup(t, Config{}), setup(t, Config{WorldTime: 5})
	type probe struct{ path, query, field string }
	grows := []probe{
		{"/shortvideo/profile", "handle=alice", "stats.followerCount"},
		{"/shortvideo/profile", "handle=alice", "stats.heartCount"},
		{"/shortvideo/profile", "handle=alice", "stats.videoCount"},
		{"/shortvideo/profile", "handle=alice", "stats.diggCount"},
		{"/shortvideo/song", "id=tune", "usageCount"},
		{"/shortvideo/song", "id=tune_v4", "usageCount"},
		{"/shortvideo/user/live", "handle=x_live", "viewerCount"},
		{"/photosocial/profile", "handle=alice", "data.user.edge_followed_by.count"},
		{"/photosocial/profile", "handle=alice", "data.user.edge_owner_to_timeline_media.count"},
	}
	for _, p := range grows {
		v0 := num(t, field(t0.getOK(t, p.path, p.query), p.field))
		v5 := num(t, field(t5.getOK(t, p.path, p.query), p.field))
		if v5 <= v0 {
			t.Errorf("%s %s: %d at day 0, %d at day 5; want growth", p.path, p.field, v0, v5)
		}
	}
	fixed := []probe{
		{"/shortvideo/profile", "handle=alice_f42", "stats.followerCount"},
		{"/shortvideo/profile", "handle=alice", "stats.followingCount"},
		{"/photosocial/user/highlight/detail", "id=123", "media_count"},
	}
	for _, p := range fixed {
		v0 := num(t, field(t0.getOK(t, p.path, p.query), p.field))
		v5 := num(t, field(t5.getOK(t, p.path, p.query), p.field))
		if v5 != v0 {
			t.Errorf("%s %s drifted: %d -> %d", p.path, p.field, v0, v5)
		}
	}
	if v := num(t, field(t0.getOK(t, "/shortvideo/song", "id=tune_v4"), "usageCount")); v != 4 {
		t.Errorf("usageCount of v4 at day 0 = %d, want 4", v)
	}
	// Video counters grow; the same video keeps its id and text.
	v0 := list(t, t0.getOK(t, "/shortvideo/search/keyword", "keyword=drift_n3"), "videos")[0]
	v5 := list(t, t5.getOK(t, "/shortvideo/search/keyword", "keyword=drift_n3"), "videos")[0]
	if field(v0, "id") != field(v5, "id") || field(v0, "desc") != field(v5, "desc") ||
		num(t, field(v5, "stats.playCount")) <= num(t, field(v0, "stats.playCount")) {
		t.Errorf("video drift: %v -> %v", v0, v5)
	}
	// Feeds rotate daily but keep their size.
	for _, p := range []struct{ path, list string }{
		{"/shortvideo/get-trending-feed", "videos"},
		{"/shortvideo/videos/popular", "videos"},
		{"/shortvideo/creators/popular", "creators"},
	} {
		a, b := list(t, t0.getOK(t, p.path, ""), p.list), list(t, t5.getOK(t, p.path, ""), p.list)
		if len(a) != FeedSize || len(b) != FeedSize || fmt.Sprint(a[0]) == fmt.Sprint(b[0]) {
			t.Errorf("%s: %d and %d items, first equal %v", p.path, len(a), len(b), fmt.Sprint(a[0]) == fmt.Sprint(b[0]))
		}
	}
}

// fnvParts is the documented hash H: FNV-1a 64 of each part followed by
// NUL, finished with the SplitMix64 finalizer.
func fnvParts(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p + "\x00"))
	}
	return splitmix(h.Sum64())
}

// splitmix is the SplitMix64 finalizer, as docs/sandbox.md gives it.
func splitmix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// TestDocumentedFormulas recomputes hash-derived values the way
// docs/sandbox.md says, so the docs cannot drift from the code.
func TestDocumentedFormulas(t *testing.T) {
	t.Parallel()
	const day = 11
	b := setup(t, Config{WorldTime: day, PageSize: 1000})
	for _, h := range []string{"alice", "bob", "u0123456789abcdef"} {
		base := int64(fnvParts("account", h, "followers") % 300)
		rate := 1 + int64(fnvParts("account", h, "followers.rate")%5)
		following := int64(fnvParts("account", h, "following") % 150)
		p := b.getOK(t, "/shortvideo/profile", "handle="+h)
		if got := num(t, field(p, "stats.followerCount")); got != base+rate*day {
			t.Errorf("%s followerCount %d, want %d", h, got, base+rate*day)
		}
		if got := num(t, field(p, "stats.followingCount")); got != following {
			t.Errorf("%s followingCount %d, want %d", h, got, following)
		}
		if got := field(p, "user.secUid"); got != secUIDFor(h) {
			t.Errorf("%s secUid %v", h, got)
		}
		// the followers list is as long as the count.
		ids, _ := b.walk(t, walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + secUIDFor(h), list: "followers", idOf: "uniqueId"})
		if int64(len(ids)) != base+rate*day {
			t.Errorf("%s has %d followers listed, count %d", h, len(ids), base+rate*day)
		}
		// position i shows entry i - rate*day: the list grew at its head.
		for i, id := range ids[:min(3, len(ids))] {
			if want := fmt.Sprintf("u%016x", splitmix(fnvParts("followers", h)+uint64(int64(i)-rate*day))); id != want {
				t.Errorf("%s follower %d = %s, want %s", h, i, id, want)
			}
		}
	}
	for _, kw := range []string{"cats", "dogs"} {
		m := b.getOK(t, "/shortvideo/search/keyword", "keyword="+kw)
		if got, want := len(list(t, m, "videos")), int(fnvParts("search", "keyword", kw)%120); got != want {
			t.Errorf("%s: %d results, want %d", kw, got, want)
		}
	}
}

func TestHugeAccountIsCheap(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PageSize: 1000})
	sec := secUIDFor("star_f1000000000")
	p := b.getOK(t, "/shortvideo/profile", "handle=star_f1000000000")
	if num(t, field(p, "stats.followerCount")) != 1_000_000_000 {
		t.Fatalf("followerCount %v", field(p, "stats.followerCount"))
	}
	start := time.Now()
	deep := b.getOK(t, "/shortvideo/user/followers", "secUid="+sec+"&cursor=987654321")
	last := b.getOK(t, "/shortvideo/user/followers", "secUid="+sec+"&cursor=999999500")
	// Pages costing O(cursor) would take minutes here; O(page) takes
	// milliseconds, so the bound is loose enough for any loaded machine.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("two deep pages took %v", d)
	}
	if len(list(t, deep, "followers")) != 1000 || deep["cursor"] != "987655321" || deep["hasMore"] != true {
		t.Errorf("deep page: cursor %v hasMore %v", deep["cursor"], deep["hasMore"])
	}
	if len(list(t, last, "followers")) != 500 || last["cursor"] != "1000000000" || last["hasMore"] != false {
		t.Errorf("last page: cursor %v hasMore %v", last["cursor"], last["hasMore"])
	}
	// past the end: an empty last page at the offset sent.
	past := b.getOK(t, "/shortvideo/user/followers", "secUid="+sec+"&cursor=2000000000")
	if len(list(t, past, "followers")) != 0 || past["cursor"] != "2000000000" || past["hasMore"] != false {
		t.Errorf("past the end: %v", past)
	}
}

func TestSnowball(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PageSize: 3})
	m := b.getOK(t, "/shortvideo/user/followers", "secUid="+secUIDFor("root_f3"))
	for _, e := range list(t, m, "followers") {
		h := field(e, "uniqueId").(string)
		p := b.getOK(t, "/shortvideo/profile", "handle="+h)
		if field(p, "user.secUid") != field(e, "secUid") || field(p, "user.nickname") != field(e, "nickname") ||
			field(p, "user.verified") != field(e, "verified") {
			t.Errorf("follower entry %v disagrees with profile %v", e, p["user"])
		}
		b.getOK(t, "/shortvideo/user/followers", "secUid="+field(p, "user.secUid").(string))
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PageSize: 10})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			b.getOK(t, "/shortvideo/user/followers", fmt.Sprintf("secUid=%s", secUIDFor(fmt.Sprintf("c%d_f30", i))))
			b.get(t, "/shortvideo/profile", "handle=missing")
		})
	}
	wg.Wait()
	if u := b.srv.Usage(testKey); u.Requests != 32 || u.Billable != 16 {
		t.Errorf("usage %+v", u)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"no keys":       {},
		"empty key":     {APIKeys: []string{"a", ""}},
		"negative page": {APIKeys: []string{"a"}, PageSize: -1},
		"huge page":     {APIKeys: []string{"a"}, PageSize: PageSizeMax + 1},
		"negative time": {APIKeys: []string{"a"}, WorldTime: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	b := setup(t, Config{APIKeys: []string{"k"}})
	b.key = "k"
	m := b.getOK(t, "/shortvideo/user/followers", "secUid="+secUIDFor("x_f120"))
	if len(list(t, m, "followers")) != PageSizeDefault {
		t.Errorf("default page size: %d", len(list(t, m, "followers")))
	}
}

// TestListGrowthAtHead checks the growth law of docs/sandbox.md: a list
// that gains g entries a world day shows, d days later, g*d new entries
// first and then exactly the list of day 0, so a harvest one day later can
// tell which entries are new.
func TestListGrowthAtHead(t *testing.T) {
	t.Parallel()
	const day = 3
	t0, td := setup(t, Config{PageSize: 7}), setup(t, Config{PageSize: 7, WorldTime: day})
	alice := 1 + int64(fnvParts("account", "alice", "followers.rate")%5)
	for _, tc := range []struct {
		name       string
		spec       walkSpec
		n0, perDay int64
		count      [2]string // path, field of the counter that must equal the length
	}{
		{"followers r7", walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + secUIDFor("grow_f40_g10_r7"), list: "followers", idOf: "uniqueId"}, 40, 7,
			[2]string{"/shortvideo/profile?handle=grow_f40_g10_r7", "stats.followerCount"}},
		{"following r7", walkSpec{path: "/shortvideo/user/following", params: "secUid=" + secUIDFor("grow_f40_g10_r7"), list: "following", idOf: "uniqueId"}, 10, 7,
			[2]string{"/shortvideo/profile?handle=grow_f40_g10_r7", "stats.followingCount"}},
		{"followers hash-derived", walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + secUIDFor("alice"), list: "followers", idOf: "uniqueId"},
			int64(fnvParts("account", "alice", "followers") % 300), alice, [2]string{"/shortvideo/profile?handle=alice", "stats.followerCount"}},
		{"following fixed f<N>", walkSpec{path: "/shortvideo/user/followers", params: "secUid=" + secUIDFor("still_f12"), list: "followers", idOf: "uniqueId"}, 12, 0,
			[2]string{"/shortvideo/profile?handle=still_f12", "stats.followerCount"}},
		{"song videos r4", walkSpec{path: "/shortvideo/song/videos", params: "id=tune_v30_r4", list: "videos", idOf: "id"}, 30, 4,
			[2]string{}},
		{"comments r5", walkSpec{path: "/photosocial/post/comments", params: "url=" + url.QueryEscape("https://www.photosocial.example/p/talk_c20_r5/"), list: "comments", idOf: "id", commentsStyle: true}, 20, 5, [2]string{}},
	} {
		before, _ := t0.walk(t, tc.spec)
		after, requests := td.walk(t, tc.spec)
		added := tc.perDay * day
		if int64(len(before)) != tc.n0 || int64(len(after)) != tc.n0+added {
			t.Errorf("%s: %d entries at day 0, %d at day %d; want %d and %d", tc.name, len(before), len(after), day, tc.n0, tc.n0+added)
			continue
		}
		if want := max(1, (tc.n0+added+6)/7); int64(requests) != want {
			t.Errorf("%s: %d requests at day %d, want %d", tc.name, requests, day, want)
		}
		if !slices.Equal(after[added:], before) {
			t.Errorf("%s: the list of day 0 is not the tail of day %d's", tc.name, day)
		}
		seen := map[string]bool{}
		for _, id := range after {
			if seen[id] {
				t.Errorf("%s: %s listed twice", tc.name, id)
			}
			seen[id] = true
		}
		if tc.count[0] != "" {
			path, q, _ := strings.Cut(tc.count[0], "?")
			if got := num(t, field(td.getOK(t, path, q), tc.count[1])); got != tc.n0+added {
				t.Errorf("%s: %s = %d, want the list's length %d", tc.name, tc.count[1], got, tc.n0+added)
			}
		}
	}
	// New comments are newer than every comment of day 0, and dated before now.
	m := td.getOK(t, "/photosocial/post/comments", "url="+url.QueryEscape("https://www.photosocial.example/p/talk_c20_r5/"))
	cs := list(t, m, "comments")
	m = td.getOK(t, "/photosocial/post/comments", "cursor=14&url="+url.QueryEscape("https://www.photosocial.example/p/talk_c20_r5/"))
	newest, oldest := num(t, field(cs[0], "created_at")), num(t, field(list(t, m, "comments")[0], "created_at"))
	if newest >= WorldEpoch+day*86400 || newest < WorldEpoch+(day-1)*86400 || oldest < WorldEpoch || oldest > newest {
		t.Errorf("new comments dated %d .. %d, want within world days 0..%d", oldest, newest, day)
	}
}
