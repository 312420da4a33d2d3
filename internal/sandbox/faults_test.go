package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves, so the bucket is exact.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// answer is one HTTP exchange as the client saw it.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	readErr error // reading the body failed (a truncated answer)
}

// call sends GET /api+path?q with key under ctx; err is a transport error
// (e.g. the client gave up).
func (b *testBundle) call(ctx context.Context, key, path, q string) (answer, error) {
	u := b.url + "/api" + path
	if q != "" {
		u += "?" + q
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: body, readErr: readErr}, nil
}

// callAndGiveUp sends a request and cancels it once the server holds it
// (held receives from the Config.holding hook); it returns the client's
// error.
func (b *testBundle) callAndGiveUp(t *testing.T, held <-chan struct{}, key, path, q string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := b.call(ctx, key, path, q)
		errc <- err
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not hold the request within 10 s")
	}
	cancel()
	return <-errc
}

// holder returns a Config.holding hook and the channel it signals.
func holder() (func(), <-chan struct{}) {
	c := make(chan struct{}, 100)
	return func() { c <- struct{}{} }, c
}

// recorder returns a Config hook and a channel receiving every arrival the
// server counts.
func recorder() (func(string, Arrival), <-chan Arrival) {
	c := make(chan Arrival, 100)
	return func(_ string, a Arrival) { c <- a }, c
}

// next waits for the server to count a request.
func next(t *testing.T, c <-chan Arrival) Arrival {
	t.Helper()
	select {
	case a := <-c:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("the server counted no request within 10 s")
		return Arrival{}
	}
}

func (b *testBundle) mustCall(t *testing.T, key, path, q string) answer {
	t.Helper()
	a, err := b.call(t.Context(), key, path, q)
	if err != nil {
		t.Fatalf("GET %s?%s: %v", path, q, err)
	}
	return a
}

func statuses(as []answer) []int {
	out := make([]int, len(as))
	for i, a := range as {
		out[i] = a.status
	}
	return out
}

func TestRateLimitExact(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	b := setup(t, Config{Rate: 5, Burst: 2, now: clk.Now})
	var got []answer
	for range 10 {
		got = append(got, b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice"))
	}
	for i, a := range got {
		want := http.StatusTooManyRequests
		if i < 2 {
			want = http.StatusOK
		}
		if a.status != want {
			t.Fatalf("statuses %v, want 2 x 200 then 429", statuses(got))
		}
		if i < 2 {
			continue
		}
		if ra := a.header.Get("Retry-After"); ra != "1" { // 200 ms rounded up
			t.Errorf("Retry-After %q, want 1", ra)
		}
		m := decode(t, a.body).(map[string]any)
		if m["success"] != false || m["error"] != "rate_limited" {
			t.Errorf("429 body %s", a.body)
		}
	}
	u := b.srv.Usage(testKey)
	if u.Requests != 10 || u.Billable != 2 || u.RateLimited != 8 || u.ByEndpoint["/shortvideo/profile"].Billable != 2 {
		t.Errorf("usage %+v", u)
	}
	arr := b.srv.Arrivals(testKey)
	if len(arr) != 10 || arr[2].Status != 429 || arr[2].RetryAfter != 200*time.Millisecond || arr[0].RetryAfter != 0 ||
		arr[2].Endpoint != "/shortvideo/profile" || arr[2].Query != "handle=alice" || !arr[2].Time.Equal(clk.Now()) {
		t.Errorf("arrivals %+v", arr[:min(3, len(arr))])
	}

	// A separate key has its own full bucket.
	for i := range 3 {
		want := http.StatusOK
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if a := b.mustCall(t, "test-key-2", "/shortvideo/profile", "handle=alice"); a.status != want {
			t.Errorf("key 2 request %d: %d, want %d", i, a.status, want)
		}
	}

	// One token after 200 ms, not before.
	clk.Advance(199 * time.Millisecond)
	if a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice"); a.status != http.StatusTooManyRequests {
		t.Errorf("after 199ms: %d", a.status)
	}
	clk.Advance(time.Millisecond)
	if a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice"); a.status != http.StatusOK {
		t.Errorf("after 200ms: %d", a.status)
	}

	// Raising the rate: 10 ms at 1000/s fills a burst of 10.
	if err := b.srv.SetRate(1000, 10); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Millisecond)
	for i := range 11 {
		want := http.StatusOK
		if i == 10 {
			want = http.StatusTooManyRequests
		}
		if a := b.mustCall(t, testKey, "/shortvideo/song", "id=x"); a.status != want {
			t.Errorf("after SetRate request %d: %d, want %d", i, a.status, want)
		}
	}
	// Lowering it: the bucket keeps at most the new burst.
	clk.Advance(time.Second)
	if err := b.srv.SetRate(1, 1); err != nil {
		t.Fatal(err)
	}
	if got := statuses([]answer{b.mustCall(t, testKey, "/shortvideo/song", "id=x"), b.mustCall(t, testKey, "/shortvideo/song", "id=x")}); got[0] != 200 || got[1] != 429 {
		t.Errorf("after lowering: %v", got)
	}
	// Rate 0: no limit.
	if err := b.srv.SetRate(0, 0); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if a := b.mustCall(t, testKey, "/shortvideo/song", "id=x"); a.status != http.StatusOK {
			t.Fatalf("limit off: %d", a.status)
		}
	}
	if err := b.srv.SetRate(-1, 0); err == nil {
		t.Error("SetRate(-1) accepted")
	}
}

// TestRateLimitRealClock is the same bucket on the wall clock: only the
// elapsed time can let more than the burst through.
func TestRateLimitRealClock(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Rate: 5, Burst: 2})
	start := time.Now()
	ok, limited := 0, 0
	for range 10 {
		a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice")
		switch a.status {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			limited++
			if n, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || n < 1 {
				t.Errorf("Retry-After %q", a.header.Get("Retry-After"))
			}
		default:
			t.Fatalf("status %d", a.status)
		}
	}
	elapsed := time.Since(start)
	refilled := int(elapsed.Seconds() * 5)
	if ok < 2 || ok > 2+refilled || ok+limited != 10 {
		t.Errorf("%d OK and %d 429 in %v", ok, limited, elapsed)
	}
	if u := b.srv.Usage(testKey); u.RateLimited != int64(limited) || u.Billable != int64(ok) {
		t.Errorf("usage %+v", u)
	}
}

func TestRetryAfterModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{RetryAfterSeconds, RetryAfterDate, RetryAfterNone, RetryAfterGarbage} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			// One token per 1000 s: the second request is limited.
			b := setup(t, Config{Rate: 0.001, Burst: 1, RetryAfterMode: mode})
			start := time.Now()
			first := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice")
			a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice")
			if first.status != http.StatusOK || a.status != http.StatusTooManyRequests {
				t.Fatalf("statuses %d %d", first.status, a.status)
			}
			ra, has := a.header["Retry-After"]
			v := a.header.Get("Retry-After")
			switch mode {
			case RetryAfterSeconds:
				if n, err := strconv.Atoi(v); err != nil || n < 999 || n > 1000 {
					t.Errorf("Retry-After %q, want about 1000", v)
				}
			case RetryAfterDate:
				at, err := http.ParseTime(v)
				if err != nil || !at.After(start.Add(990*time.Second)) {
					t.Errorf("Retry-After %q (%v), want a date about 1000 s after %v", v, err, start)
				}
			case RetryAfterNone:
				if has {
					t.Errorf("Retry-After sent: %q", ra)
				}
			case RetryAfterGarbage:
				_, errN := strconv.Atoi(v)
				_, errD := http.ParseTime(v)
				if v == "" || errN == nil || errD == nil {
					t.Errorf("Retry-After %q parses", v)
				}
			}
			if arr := b.srv.Arrivals(testKey); len(arr) != 2 || arr[1].RetryAfter < 990*time.Second {
				t.Errorf("arrivals %+v", arr)
			}
		})
	}
}

func TestScript(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Faults: Faults{HangMax: time.Millisecond, Script: map[string][]int{
		"/shortvideo/profile":     {500, 502, 0},
		"/shortvideo/song":        {402, 429, 404, 403},
		"/photosocial/user/embed": {ScriptTruncate, ScriptHang, 0},
	}}})
	var got []answer
	for range 4 {
		got = append(got, b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice"))
	}
	if s := fmt.Sprint(statuses(got)); s != "[500 502 200 200]" {
		t.Fatalf("profile statuses %s", s)
	}
	for i, want := range []string{"internal", "bad_gateway"} {
		if m := decode(t, got[i].body).(map[string]any); m["success"] != false || m["error"] != want {
			t.Errorf("body %s, want error %s", got[i].body, want)
		}
	}

	// An endpoint without a script is untouched; others count on their own.
	if a := b.mustCall(t, testKey, "/shortvideo/user/live", "handle=alice"); a.status != http.StatusOK {
		t.Errorf("live: %d", a.status)
	}
	var song []answer
	for range 5 {
		song = append(song, b.mustCall(t, "test-key-2", "/shortvideo/song", "id=x"))
	}
	if s := fmt.Sprint(statuses(song)); s != "[402 429 404 403 200]" {
		t.Fatalf("song statuses %s", s)
	}
	var oc outOfCreditsBody
	if err := json.Unmarshal(song[0].body, &oc); err != nil || oc.Success || oc.Message != OutOfCreditsMessage ||
		!strings.HasPrefix(oc.Message, "Looks like you're out of credits :(") {
		t.Errorf("402 body %s", song[0].body)
	}
	if song[1].header.Get("Retry-After") != "1" {
		t.Errorf("scripted 429 Retry-After %q", song[1].header.Get("Retry-After"))
	}

	trunc := b.mustCall(t, testKey, "/photosocial/user/embed", "handle=alice")
	if trunc.status != http.StatusOK || trunc.readErr == nil || json.Valid(trunc.body) {
		t.Errorf("scripted truncate: status %d, read error %v, body %q", trunc.status, trunc.readErr, trunc.body)
	}
	if a := b.mustCall(t, testKey, "/photosocial/user/embed", "handle=alice"); a.status != http.StatusGatewayTimeout {
		t.Errorf("scripted hang: %d", a.status)
	}
	if a := b.mustCall(t, testKey, "/photosocial/user/embed", "handle=alice"); a.status != http.StatusOK || a.readErr != nil {
		t.Errorf("after the script: %d %v", a.status, a.readErr)
	}

	u, u2 := b.srv.Usage(testKey), b.srv.Usage("test-key-2")
	if u.Errors != 2 || u.Truncated != 1 || u.Hung != 1 || u.Billable != 2+1+1+1 {
		t.Errorf("usage %+v", u)
	}
	if u2.OutOfCredits != 1 || u2.RateLimited != 1 || u2.Billable != 1 || u2.Requests != 5 {
		t.Errorf("usage of key 2 %+v", u2)
	}

	// SetFaults restarts the script.
	if err := b.srv.SetFaults(Faults{Script: map[string][]int{"/shortvideo/profile": {503}}}); err != nil {
		t.Fatal(err)
	}
	if a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice"); a.status != http.StatusServiceUnavailable {
		t.Errorf("after SetFaults: %d", a.status)
	}
	if err := b.srv.SetFaults(Faults{Script: map[string][]int{"/api/shortvideo/profile": {500}}}); err == nil {
		t.Error("SetFaults accepted a path with /api")
	}
}

// outcomeOf classifies an answer for the seeded-fault tests.
func outcomeOf(rec *httptest.ResponseRecorder) string {
	switch {
	case rec.Code == http.StatusOK && strconv.Itoa(rec.Body.Len()) != rec.Header().Get("Content-Length"):
		return "truncate"
	case rec.Code == http.StatusGatewayTimeout:
		return "hang"
	default:
		return strconv.Itoa(rec.Code)
	}
}

// serveDirect runs one request through the handler without a network.
func serveDirect(srv *Server, key, path, q string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/api"+path+"?"+q, nil)
	req.Header.Set("x-api-key", key)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	return rec
}

// faultSequence is the request sequence of the seeded tests: distinct
// requests and repeats of the same one (whose attempt number grows).
func faultSequence(n int) (qs []string) {
	for i := range n {
		if i%3 == 0 {
			qs = append(qs, "handle=same")
		} else {
			qs = append(qs, fmt.Sprintf("handle=user%d", i))
		}
	}
	return qs
}

func runSeeded(t *testing.T, f Faults, qs []string) []string {
	t.Helper()
	srv, err := New(Config{APIKeys: []string{testKey}, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = outcomeOf(serveDirect(srv, testKey, "/shortvideo/profile", q))
	}
	return out
}

// expectedOutcome applies the rule documented in docs/sandbox.md.
func expectedOutcome(f Faults, key, path, q string, n int) string {
	parts := []string{strconv.FormatInt(f.Seed, 10), key, path, q, strconv.Itoa(n)}
	u := float64(fnvParts(append([]string{"fault"}, parts...)...)>>11) / (1 << 53)
	switch {
	case u < f.ErrorRate:
		return strconv.Itoa([]int{500, 502, 503}[fnvParts(append([]string{"fault.status"}, parts...)...)%3])
	case u < f.ErrorRate+f.HangRate:
		return "hang"
	case u < f.ErrorRate+f.HangRate+f.TruncateRate:
		return "truncate"
	}
	return "200"
}

func TestSeededFaultsDeterministic(t *testing.T) {
	t.Parallel()
	f := Faults{ErrorRate: 0.2, HangRate: 0.1, TruncateRate: 0.2, HangMax: time.Microsecond, Seed: 42}
	qs := faultSequence(300)
	a, b := runSeeded(t, f, qs), runSeeded(t, f, qs)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("same seed, different outcomes:\n%v\n%v", a, b)
	}
	attempts := map[string]int{}
	for i, q := range qs {
		attempts[q]++
		if want := expectedOutcome(f, testKey, "/shortvideo/profile", q, attempts[q]); a[i] != want {
			t.Fatalf("request %d (%s, attempt %d): %s, documented rule says %s", i, q, attempts[q], a[i], want)
		}
	}
	f.Seed = 43
	if c := runSeeded(t, f, qs); fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("seeds 42 and 43 give the same outcomes")
	}
	// The retries of one request do not all share one fate.
	seen := map[string]bool{}
	for i, q := range qs {
		if q == "handle=same" {
			seen[a[i]] = true
		}
	}
	if len(seen) < 3 {
		t.Errorf("retries of one request saw only %v", seen)
	}
}

func TestFaultFractions(t *testing.T) {
	t.Parallel()
	f := Faults{ErrorRate: 0.1, HangRate: 0.05, TruncateRate: 0.15, HangMax: time.Microsecond, Seed: 7}
	srv, err := New(Config{APIKeys: []string{testKey}, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	count := map[string]int{}
	for i := range n {
		q := fmt.Sprintf("handle=h%d", i%500) // 500 requests, each 4 times
		count[outcomeOf(serveDirect(srv, testKey, "/shortvideo/profile", q))]++
	}
	errs := count["500"] + count["502"] + count["503"]
	for name, c := range map[string]struct {
		got  int
		want float64
	}{"errors": {errs, f.ErrorRate}, "hangs": {count["hang"], f.HangRate}, "truncated": {count["truncate"], f.TruncateRate}} {
		if frac := float64(c.got) / n; math.Abs(frac-c.want) > 0.03 {
			t.Errorf("%s: %.3f of %d requests, want %.2f", name, frac, n, c.want)
		}
	}
	if count["500"] == 0 || count["502"] == 0 || count["503"] == 0 {
		t.Errorf("error statuses %v", count)
	}
	u := srv.Usage(testKey)
	if u.Requests != n || u.Errors != int64(errs) || u.Hung != int64(count["hang"]) || u.Truncated != int64(count["truncate"]) ||
		u.Billable != int64(count["200"]+count["truncate"]) {
		t.Errorf("usage %+v, outcomes %v", u, count)
	}
}

func TestTruncatedOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Faults: Faults{TruncateRate: 1}})
	a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice")
	if a.status != http.StatusOK || !errors.Is(a.readErr, io.ErrUnexpectedEOF) {
		t.Errorf("status %d, read error %v", a.status, a.readErr)
	}
	var v any
	if err := json.Unmarshal(a.body, &v); err == nil {
		t.Errorf("half a body decodes: %q", a.body)
	}
	if cl, _ := strconv.Atoi(a.header.Get("Content-Length")); len(a.body) == 0 || len(a.body) >= cl {
		t.Errorf("%d bytes of %d", len(a.body), cl)
	}
	// A 404 is sent whole.
	if a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=missing"); a.status != http.StatusNotFound || a.readErr != nil {
		t.Errorf("404: %d %v", a.status, a.readErr)
	}
	if u := b.srv.Usage(testKey); u.Truncated != 1 || u.Billable != 1 || u.Requests != 2 {
		t.Errorf("usage %+v", u)
	}
}

func TestHangEndsWithClient(t *testing.T) {
	t.Parallel()
	hook, counted := recorder()
	hold, held := holder()
	b := setup(t, Config{Faults: Faults{HangRate: 1, HangMax: time.Hour}, recorded: hook, holding: hold})
	if err := b.callAndGiveUp(t, held, testKey, "/shortvideo/profile", "handle=alice"); !errors.Is(err, context.Canceled) {
		t.Fatalf("hung request: %v", err)
	}
	// The hang (HangMax an hour) ends when its client goes.
	if a := next(t, counted); a.Status != StatusClientClosed {
		t.Errorf("arrival %+v", a)
	}
	u := b.srv.Usage(testKey)
	if u.Hung != 1 || u.Billable != 0 || u.Requests != 1 || u.Errors != 0 {
		t.Errorf("usage %+v", u)
	}
	if arr := b.srv.Arrivals(testKey); len(arr) != 1 || arr[0].Status != StatusClientClosed {
		t.Errorf("arrivals %+v", arr)
	}
}

// Under BillAbandoned a request its client gave up on, while it waited
// out its latency or a hang, is answered all the same and billed at its
// price; an error status drawn is still free.
func TestBillAbandoned(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]Faults{
		"latency": {Latency: time.Hour, BillAbandoned: true},
		"hang":    {HangRate: 1, HangMax: time.Hour, BillAbandoned: true},
		"error":   {ErrorRate: 1, Latency: time.Hour, BillAbandoned: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hook, counted := recorder()
			hold, held := holder()
			b := setup(t, Config{Credits: 10, Prices: map[string]int64{"/shortvideo/profile": 3}, Faults: f, recorded: hook, holding: hold})
			if err := b.callAndGiveUp(t, held, testKey, "/shortvideo/profile", "handle=alice"); !errors.Is(err, context.Canceled) {
				t.Fatalf("abandoned request: %v", err)
			}
			a := next(t, counted)
			left, _ := b.srv.Credits(testKey)
			if name == "error" {
				if a.Status != StatusClientClosed || a.Credits != 0 || a.Abandoned || left != 10 {
					t.Errorf("arrival %+v, %d credits left", a, left)
				}
				return
			}
			if a.Status != http.StatusOK || a.Credits != 3 || !a.Abandoned || left != 7 {
				t.Errorf("arrival %+v, %d credits left; want 200, 3 credits charged, 7 left", a, left)
			}
			if u := b.srv.Usage(testKey); u.Requests != 1 || u.Billable != 1 || u.Credits != 3 {
				t.Errorf("usage %+v", u)
			}
		})
	}
}

func TestHangMaxAndClose(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Faults: Faults{HangRate: 1, HangMax: 20 * time.Millisecond}})
	start := time.Now()
	a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice")
	if a.status != http.StatusGatewayTimeout || time.Since(start) < 20*time.Millisecond {
		t.Errorf("HangMax: %d after %v", a.status, time.Since(start))
	}
	if m := decode(t, a.body).(map[string]any); m["error"] != "upstream_timeout" {
		t.Errorf("504 body %s", a.body)
	}
	// Close releases hangs: 503 whether the request was already held or not.
	if err := b.srv.SetFaults(Faults{HangRate: 1, HangMax: time.Hour}); err != nil {
		t.Fatal(err)
	}
	done := make(chan answer)
	go func() {
		a, _ := b.call(context.Background(), testKey, "/shortvideo/profile", "handle=alice")
		done <- a
	}()
	b.srv.Close()
	if a := <-done; a.status != http.StatusServiceUnavailable {
		t.Errorf("after Close: %d", a.status)
	}
	if u := b.srv.Usage(testKey); u.Hung != 2 || u.Errors != 0 || u.Billable != 0 {
		t.Errorf("usage %+v", u)
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	f := Faults{Latency: 30 * time.Millisecond, LatencyJitter: 40 * time.Millisecond, Seed: 3}
	b := setup(t, Config{Faults: f})
	for n := 1; n <= 3; n++ {
		jitter := time.Duration(fnvParts("fault.latency", "3", testKey, "/shortvideo/profile", "handle=alice", strconv.Itoa(n)) % uint64(f.LatencyJitter))
		start := time.Now()
		a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice")
		if d := time.Since(start); a.status != http.StatusOK || d < f.Latency+jitter {
			t.Errorf("attempt %d: %d after %v, want at least %v", n, a.status, d, f.Latency+jitter)
		}
	}
	// Rejections are immediate; a client giving up during the latency is not
	// charged and gets its credit back.
	hook, counted := recorder()
	hold, held := holder()
	b2 := setup(t, Config{Credits: 1, Faults: Faults{Latency: time.Hour}, recorded: hook, holding: hold})
	if err := b2.callAndGiveUp(t, held, testKey, "/shortvideo/profile", "handle=alice"); !errors.Is(err, context.Canceled) {
		t.Fatalf("slow request: %v", err)
	}
	if a := next(t, counted); a.Status != StatusClientClosed {
		t.Errorf("arrival %+v", a)
	}
	if left, _ := b2.srv.Credits(testKey); left != 1 {
		t.Errorf("credits after an abandoned request: %d", left)
	}
	if u := b2.srv.Usage(testKey); u.Requests != 1 || u.Billable != 0 {
		t.Errorf("usage %+v", u)
	}
}

func TestCredits(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Credits: 5, RealServiceFields: true})
	// Not billable: a 404, a 400, the private photo profile.
	for _, c := range []struct{ path, q string }{
		{"/shortvideo/profile", "handle=missing"},
		{"/shortvideo/profile", ""},
		{"/photosocial/profile", "handle=private_x"},
	} {
		a := b.mustCall(t, testKey, c.path, c.q)
		if a.status == http.StatusPaymentRequired || strings.Contains(string(a.body), "credits_") {
			t.Errorf("%s?%s: %d %s", c.path, c.q, a.status, a.body)
		}
	}
	var got []int
	for i := range 7 {
		a := b.mustCall(t, testKey, "/shortvideo/profile", "handle=alice")
		got = append(got, a.status)
		if a.status != http.StatusOK {
			var oc outOfCreditsBody
			if err := json.Unmarshal(a.body, &oc); err != nil || oc.Success || oc.Message != OutOfCreditsMessage {
				t.Errorf("402 body %s", a.body)
			}
			continue
		}
		m := decode(t, a.body).(map[string]any)
		if num(t, m["credits_remaining"]) != int64(4-i) || num(t, m["credits_charged"]) != 1 || m["success"] != true {
			t.Errorf("answer %d: credits_remaining %v credits_charged %v", i, m["credits_remaining"], m["credits_charged"])
		}
	}
	if s := fmt.Sprint(got); s != "[200 200 200 200 200 402 402]" {
		t.Fatalf("statuses %s", s)
	}
	u := b.srv.Usage(testKey)
	if u.Billable != 5 || u.OutOfCredits != 2 || u.Requests != 10 || u.CreditsRemaining == nil || *u.CreditsRemaining != 0 {
		t.Errorf("usage %+v", u)
	}
	status, body := b.do(t, http.MethodGet, "/debug/usage", "", map[string]string{"x-api-key": testKey})
	if status != http.StatusOK || !strings.Contains(string(body), `"out_of_credits":2`) || !strings.Contains(string(body), `"credits_remaining":0`) {
		t.Errorf("/debug/usage %s", body)
	}

	// The other key has its own balance; a top-up resumes.
	if a := b.mustCall(t, "test-key-2", "/shortvideo/song", "id=x"); a.status != http.StatusOK {
		t.Errorf("key 2: %d", a.status)
	}
	b.srv.AddCredits(testKey, 2)
	got = got[:0]
	for range 3 {
		got = append(got, b.mustCall(t, testKey, "/shortvideo/song", "id=x").status)
	}
	if s := fmt.Sprint(got); s != "[200 200 402]" {
		t.Errorf("after AddCredits: %s", s)
	}
	if left, limited := b.srv.Credits("test-key-2"); left != 4 || !limited {
		t.Errorf("key 2 balance %d %v", left, limited)
	}

	// CreditLimit with 0 credits: 402 at once.
	b0 := setup(t, Config{CreditLimit: true})
	if a := b0.mustCall(t, testKey, "/shortvideo/profile", "handle=alice"); a.status != http.StatusPaymentRequired {
		t.Errorf("zero balance: %d", a.status)
	}
}

func TestRealServiceFields(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{RealServiceFields: true})
	m := b.getOK(t, "/shortvideo/song", "id=x")
	if num(t, m["credits_charged"]) != 1 || m["credits_remaining"] != nil {
		t.Errorf("unlimited: %v", m)
	}
	if _, body := b.get(t, "/photosocial/profile", "handle=private_x"); strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("free answer changed: %s", body)
	}
	if u := b.srv.Usage(testKey); u.CreditsRemaining != nil {
		t.Errorf("unlimited usage shows a balance: %+v", u)
	}
	plain := setup(t, Config{})
	if m := plain.getOK(t, "/shortvideo/song", "id=x"); m["credits_charged"] != nil {
		t.Errorf("fields without RealServiceFields: %v", m)
	}
}

func TestFaultsConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Rate: 1e6, Burst: 1000, Credits: 100, RealServiceFields: true,
		Faults: Faults{ErrorRate: 0.2, TruncateRate: 0.1, LatencyJitter: time.Millisecond, Seed: 1}})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 15 {
				_, _ = b.call(t.Context(), testKey, "/shortvideo/profile", fmt.Sprintf("handle=c%d_%d", i, j%4))
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			_ = b.srv.SetRate(1e6, 1000+i)
			_ = b.srv.SetFaults(Faults{ErrorRate: 0.2, Seed: int64(i)})
			b.srv.AddCredits(testKey, 1)
			_ = b.srv.Arrivals(testKey)
			_ = b.srv.Usage(testKey)
		}
	})
	wg.Wait()
	u := b.srv.Usage(testKey)
	if u.Requests != 16*15 || u.CreditsRemaining == nil || u.Billable+*u.CreditsRemaining != 120 || u.Billable > 120 {
		t.Errorf("usage %+v, remaining %v", u, *u.CreditsRemaining)
	}
	if n := len(b.srv.Arrivals(testKey)); n != 16*15 {
		t.Errorf("%d arrivals", n)
	}
}

func TestArrivalRing(t *testing.T) {
	t.Parallel()
	ab := newArrivalBook()
	for i := range ArrivalsMax + 5 {
		ab.add("k", Arrival{Status: i})
	}
	got := ab.get("k")
	if len(got) != ArrivalsMax || got[0].Status != 5 || got[len(got)-1].Status != ArrivalsMax+4 {
		t.Errorf("%d arrivals from %d to %d", len(got), got[0].Status, got[len(got)-1].Status)
	}
	if ab.get("other") != nil {
		t.Error("arrivals of an unseen key")
	}
}

func TestFaultConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"negative rate":      {Rate: -1},
		"NaN rate":           {Rate: math.NaN()},
		"infinite rate":      {Rate: math.Inf(1)},
		"negative burst":     {Rate: 1, Burst: -1},
		"bad mode":           {RetryAfterMode: "minutes"},
		"negative credits":   {Credits: -1},
		"error rate > 1":     {Faults: Faults{ErrorRate: 1.5}},
		"rates sum > 1":      {Faults: Faults{ErrorRate: 0.5, HangRate: 0.3, TruncateRate: 0.3}},
		"negative latency":   {Faults: Faults{Latency: -1}},
		"negative jitter":    {Faults: Faults{LatencyJitter: -1}},
		"negative hang max":  {Faults: Faults{HangMax: -1}},
		"unknown path":       {Faults: Faults{Script: map[string][]int{"/nope": {500}}}},
		"status 200 scripts": {Faults: Faults{Script: map[string][]int{"/shortvideo/song": {200}}}},
		"status -3 scripts":  {Faults: Faults{Script: map[string][]int{"/shortvideo/song": {-3}}}},
	} {
		cfg.APIKeys = []string{"k"}
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	// Defaults: burst is one second of requests; faults are off.
	c := Config{APIKeys: []string{"k"}, Rate: 2.5}.withDefaults()
	if c.Burst != 3 || c.RetryAfterMode != RetryAfterSeconds || c.Faults.HangMax != HangMaxDefault ||
		c.Faults.ErrorRate+c.Faults.HangRate+c.Faults.TruncateRate > 0 || c.Faults.LatencyJitter > 0 {
		t.Errorf("defaults %+v", c)
	}
	// The caller's script may change after New.
	script := map[string][]int{"/shortvideo/song": {500}}
	b := setup(t, Config{Faults: Faults{Script: script}})
	script["/shortvideo/song"][0] = 503
	if status, _ := b.get(t, "/shortvideo/song", "id=x"); status != http.StatusInternalServerError {
		t.Errorf("script not copied: %d", status)
	}
}

// TestScripted429 (the bucket's own edges are in package faults).
func TestScripted429(t *testing.T) {
	t.Parallel()
	// A scripted 429 with tokens left still announces a delay.
	b := setup(t, Config{Rate: 100, Faults: Faults{Script: map[string][]int{"/shortvideo/song": {429}}}})
	if a := b.mustCall(t, testKey, "/shortvideo/song", "id=x"); a.status != 429 || a.header.Get("Retry-After") != "1" {
		t.Errorf("scripted 429: %d %q", a.status, a.header.Get("Retry-After"))
	}
	if arr := b.srv.Arrivals(testKey); len(arr) != 1 || arr[0].RetryAfter != time.Second {
		t.Errorf("arrivals %+v", arr)
	}
}

// outOfCreditsBody is the 402 body: no error code.
type outOfCreditsBody struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}
