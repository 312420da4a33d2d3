package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/output/events"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

const hookSecret = "whsec-test-91f2"

// hookCall is one request a webhook received.
type hookCall struct {
	body      []byte
	eventID   string
	signedOK  bool
	keyInside bool // the API key in any form, in the body or a header
}

// hook is a webhook receiver whose answers follow a script: "500", "hang"
// (no answer until the client gives up), "200"; the last entry repeats.
type hook struct {
	mu     sync.Mutex
	script []string
	calls  []hookCall
	forms  []string // spellings of the API key to look for
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c := hookCall{body: body, eventID: r.Header.Get(events.HeaderEventID)}
	var ts int64
	fmt.Sscan(r.Header.Get(events.HeaderTimestamp), &ts)
	c.signedOK = r.Method == http.MethodPost && ts > 0 &&
		r.Header.Get(events.HeaderSignature) == "sha256="+events.Sign(hookSecret, ts, body)
	var all strings.Builder
	all.Write(body)
	for k, v := range r.Header {
		fmt.Fprintf(&all, "%s: %s\n", k, v)
	}
	for _, f := range h.forms {
		c.keyInside = c.keyInside || strings.Contains(all.String(), f)
	}
	h.mu.Lock()
	n := len(h.calls)
	h.calls = append(h.calls, c)
	step := h.script[min(n, len(h.script)-1)]
	h.mu.Unlock()
	switch step {
	case "hang":
		<-r.Context().Done()
	case "500":
		w.WriteHeader(500)
	default:
		w.WriteHeader(200)
	}
}

func (h *hook) got() []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookCall(nil), h.calls...)
}

// keyForms are the API key raw and JSON-escaped, as an echoing upstream
// sends it (TestEchoedKeyNeverStoredOrPrinted).
func keyForms() []string {
	dashes := strings.ReplaceAll(cliKey, "-", `\u002d`)
	var all strings.Builder
	for _, r := range cliKey {
		fmt.Fprintf(&all, `\u%04X`, r)
	}
	return []string{cliKey, dashes, all.String(), strings.ToUpper(all.String())}
}

// A run whose upstream echoes the key (tasks fail with it in their
// answer) ends with its event on a webhook that answers 500, then hangs
// past the attempt's timeout (a third of events.timeout: 4s, so the
// back-off has room under load), then takes it: three signed attempts of the
// same event, whose fields are the run's rows, with no form of the key;
// the delivery is recorded. crawler events replay sends the same event
// again.
func TestRunEventsThroughFailures(t *testing.T) {
	t.Parallel()
	forms := keyForms()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.URL.Query().Get("handle")
		if strings.HasPrefix(h, "bad") {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"success":false,"message":"invalid request for key %s (%s)"}`, cliKey, forms[1])
			return
		}
		fmt.Fprintf(w, `{"user":{"uniqueId":%q,"nickname":"%s","signature":"%s"},"stats":{"followerCount":7}}`, h, cliKey, forms[2])
	}))
	t.Cleanup(upstream.Close)
	wh := &hook{script: []string{"500", "hang", "200"}, forms: forms}
	hs := httptest.NewServer(wh)
	t.Cleanup(hs.Close)
	dbURL := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": dbURL, "CRAWLER_API_KEY": cliKey, "CRAWLER_HOOK_SECRET": hookSecret}
	job := writeJob(t, fmt.Sprintf(`name: events-echo
api: {base_url: %s/api, max_retries: 1}
limits: {workers: 1}
expand: {}
seeds: {shortvideo: {profiles: [bad_a, bad_b, echo_c, echo_d]}}
events:
  webhooks: [{url: "%s/hooks/crawler?token=t0k3n", secret_env: CRAWLER_HOOK_SECRET}]
  timeout: 12s
`, upstream.URL, hs.URL))
	r := invoke(t, env, "run", "--log-level", "debug", job)
	if r.code != exitFailed {
		t.Fatalf("run: exit %d, want 4 (two failed tasks):\n%s", r.code, r.stderr)
	}
	calls := wh.got()
	if len(calls) != 3 {
		t.Fatalf("webhook got %d requests, want 3 (500, no answer, 200)\n%s", len(calls), r.stderr)
	}
	for i, c := range calls {
		if !c.signedOK {
			t.Errorf("request %d: bad signature", i+1)
		}
		if c.keyInside {
			t.Errorf("request %d carries the API key", i+1)
		}
		if string(c.body) != string(calls[0].body) || c.eventID != calls[0].eventID {
			t.Errorf("request %d is not the same event", i+1)
		}
	}
	for _, f := range append(forms, "t0k3n") {
		if strings.Contains(r.stdout+r.stderr, f) {
			t.Errorf("%q in the output", f)
		}
	}
	var p events.Payload
	if err := json.Unmarshal(calls[0].body, &p); err != nil {
		t.Fatal(err)
	}
	// The payload against the run's rows.
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	var (
		eventID, billed, failed, newAccounts, pages int64
		outcome, state                              string
		exitCode                                    int
		stored                                      bool
	)
	if err := conn.QueryRow(context.Background(), `
		SELECT e.id, e.outcome, e.exit_code, e.payload = $2::jsonb, r.state, r.credits_billed,
		       (SELECT count(*) FROM crawl.tasks t WHERE t.run_id = r.id AND t.state = 'failed'),
		       (SELECT count(*) FROM shortvideo.users u WHERE u.first_seen_run = r.id),
		       (SELECT coalesce(sum(pages), 0) FROM crawl.tasks t WHERE t.run_id = r.id)
		FROM crawl.run_events e JOIN crawl.runs r ON r.id = e.run_id WHERE e.run_id = $1`, p.Run.ID, string(calls[0].body)).
		Scan(&eventID, &outcome, &exitCode, &stored, &state, &billed, &failed, &newAccounts, &pages); err != nil {
		t.Fatal(err)
	}
	if p.Event != events.EventRunEnded || p.EventID != eventID || calls[0].eventID != fmt.Sprint(eventID) || !stored {
		t.Errorf("event %s id %d (header %s), stored %v; want run.ended %d stored", p.Event, p.EventID, calls[0].eventID, stored, eventID)
	}
	if p.Outcome != "done_with_failures" || outcome != p.Outcome || p.ExitCode != r.code || exitCode != r.code {
		t.Errorf("outcome %q exit %d (row %q %d), want done_with_failures and the run's exit %d", p.Outcome, p.ExitCode, outcome, exitCode, r.code)
	}
	if p.Run.State != state || p.Run.Pages != pages || p.Credits.Billed != billed || p.Run.CreditsBilled != billed || billed != 2 {
		t.Errorf("run %+v credits %+v; want state %s, %d pages, %d credits billed (2 answers billed, the 400s free)", p.Run, p.Credits, state, pages, billed)
	}
	if p.Failed.Total != failed || failed != 2 || len(p.Failed.ByReason) != 1 || p.Failed.ByReason[0].Tasks != 2 ||
		!strings.Contains(p.Failed.ByReason[0].Example, "[REDACTED]") {
		t.Errorf("failed tasks %+v, want the 2 of the run in one reason, the key redacted", p.Failed)
	}
	if p.Changes == nil || p.Changes.NewAccounts != newAccounts || newAccounts != 2 {
		t.Errorf("what changed %+v, want %d new accounts", p.Changes, newAccounts)
	}
	var attempts, status int
	var delivered bool
	var target string
	if err := conn.QueryRow(context.Background(), `SELECT target, attempts, delivered, http_status FROM crawl.event_deliveries WHERE event_id = $1 AND NOT replay`, eventID).
		Scan(&target, &attempts, &delivered, &status); err != nil {
		t.Fatal(err)
	}
	if attempts != 3 || !delivered || status != 200 || strings.Contains(target, "t0k3n") || strings.Contains(target, "/hooks") {
		t.Errorf("delivery %q: %d attempts, delivered %v, HTTP %d; want 3, true, 200, the address's host only", target, attempts, delivered, status)
	}

	// Replay: the same event, once more, recorded as a replay.
	rr := invoke(t, env, "events", "replay", fmt.Sprint(p.Run.ID), job)
	if rr.code != exitOK {
		t.Fatalf("events replay: exit %d\n%s%s", rr.code, rr.stdout, rr.stderr)
	}
	calls = wh.got()
	if len(calls) != 4 || calls[3].eventID != fmt.Sprint(eventID) || !calls[3].signedOK || calls[3].keyInside {
		t.Fatalf("after replay: %d requests; the last: %+v", len(calls), calls[len(calls)-1])
	}
	var again events.Payload
	if err := json.Unmarshal(calls[3].body, &again); err != nil || again.EventID != p.EventID || again.Outcome != p.Outcome || again.Credits.Billed != p.Credits.Billed {
		t.Errorf("replayed %+v (%v), want the event %+v", again, err, p)
	}
	var replays int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM crawl.event_deliveries WHERE event_id = $1 AND replay AND delivered`, eventID).Scan(&replays); err != nil || replays != 1 {
		t.Errorf("replay deliveries %d (%v), want 1", replays, err)
	}
	// A job file of another job is refused.
	other := writeJob(t, strings.Replace(mustRead(t, job), "name: events-echo", "name: other", 1))
	if rr := invoke(t, env, "events", "replay", fmt.Sprint(p.Run.ID), other); rr.code != exitUsage || !strings.Contains(rr.stderr, "give the run's own job file") {
		t.Errorf("replay with another job: exit %d %s", rr.code, rr.stderr)
	}
}

// A webhook that never answers and one that refuses connections hold the
// run's end for events.timeout at most, and change nothing of its exit
// code; both misses are recorded.
func TestRunEventsDeadWebhook(t *testing.T) {
	t.Parallel()
	_, base := newSandbox(t)
	dead := &hook{script: []string{"hang"}}
	hs := httptest.NewServer(dead)
	t.Cleanup(hs.Close)
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	dbURL := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": dbURL, "CRAWLER_API_KEY": cliKey, "CRAWLER_HOOK_SECRET": hookSecret}
	const timeout = 3 * time.Second
	job := writeJob(t, fmt.Sprintf(`name: events-dead
api: {base_url: %s}
expand: {}
seeds: {shortvideo: {profiles: [alice, bob]}}
events:
  webhooks:
    - {url: "%s/hang", secret_env: CRAWLER_HOOK_SECRET}
    - {url: "%s/refused", secret_env: CRAWLER_HOOK_SECRET}
  timeout: %s
`, base, hs.URL, refusedURL, timeout))
	var ended time.Time
	var out, errb strings.Builder
	code := runEnv(context.Background(), []string{"run", "--log-level", "warn", job}, &cliEnv{stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] }, afterRun: func(string) { ended = time.Now() }})
	held := time.Since(ended)
	t.Logf("the run's end held %s by dead webhooks (events.timeout %s)", held, timeout)
	if code != exitOK {
		t.Fatalf("run: exit %d, want 0 whatever its webhooks do:\n%s", code, errb.String())
	}
	// The bound is events.timeout (docs/events.md); the rest is closing the
	// pool and printing.
	if held > timeout+time.Second {
		t.Errorf("the run's end was held %s by dead webhooks; bound %s", held, timeout)
	}
	if n := len(dead.got()); n < 2 {
		t.Errorf("the hanging webhook got %d attempts, want a retry after the first timed out", n)
	}
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT target, attempts, delivered, coalesce(error, ''), extract(epoch FROM finished_at - started_at)
		FROM crawl.event_deliveries ORDER BY target`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var target, why string
		var attempts int
		var delivered bool
		var secs float64
		if err := rows.Scan(&target, &attempts, &delivered, &why, &secs); err != nil {
			t.Fatal(err)
		}
		if delivered || why == "" || attempts < 2 || secs > timeout.Seconds() {
			t.Errorf("%s: delivered %v after %d attempts in %.1fs (%s); want a miss, retried, within %s", target, delivered, attempts, secs, why, timeout)
		}
		if strings.Contains(why, "/hang") || strings.Contains(why, "/refused") {
			t.Errorf("%s: the error names the address: %s", target, why)
		}
		got = append(got, target)
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "webhook 1 (http://127.0.0.1:") || !strings.HasPrefix(got[1], "webhook 2 (") {
		t.Errorf("deliveries %q", got)
	}
	if !strings.Contains(errb.String(), "run event not delivered") {
		t.Errorf("the misses are not logged:\n%s", errb.String())
	}
}

// A LISTEN on the job's channel gets the event when the run ends: here a
// run stopped at its budget (exit 5); the NOTIFY's JSON is the stored
// event's. A start refused on the spent budget ends nothing: no event.
func TestRunEventsNotify(t *testing.T) {
	t.Parallel()
	_, base := newSandbox(t)
	dbURL := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": dbURL, "CRAWLER_API_KEY": cliKey}
	job := writeJob(t, fmt.Sprintf(`name: events-notify
api: {base_url: %s}
expand: {}
limits: {max_credits: 2, workers: 1}
seeds: {shortvideo: {profiles: [alice, bob, carol, dave]}}
events: {notify: true}
`, base))
	ctx := context.Background()
	ln := testConn(t, dbURL)
	defer ln.Close(ctx)
	if _, err := ln.Exec(ctx, "LISTEN "+"crawler_run_events"); err != nil {
		t.Fatal(err)
	}
	r := invoke(t, env, "run", job)
	if r.code != exitSpent {
		t.Fatalf("run: exit %d, want 5:\n%s", r.code, r.stderr)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := ln.WaitForNotification(wctx)
	if err != nil {
		t.Fatalf("no NOTIFY: %v", err)
	}
	var p events.Payload
	if err := json.Unmarshal([]byte(n.Payload), &p); err != nil {
		t.Fatal(err)
	}
	if n.Channel != "crawler_run_events" || p.Outcome != "budget_spent" || p.ExitCode != exitSpent || p.Credits.Billed != 2 || p.Truncated {
		t.Errorf("NOTIFY on %s: %+v; want budget_spent, exit 5, 2 credits billed", n.Channel, p)
	}
	conn := testConn(t, dbURL)
	defer conn.Close(ctx)
	var same bool
	if err := conn.QueryRow(ctx, `SELECT payload = $1::jsonb FROM crawl.run_events WHERE id = $2`, n.Payload, p.EventID).Scan(&same); err != nil || !same {
		t.Errorf("the NOTIFY is not the stored event (%v)", err)
	}
	// The next start does nothing with this budget (exit 5 again) and the
	// run did not end again: no second event.
	if r := invoke(t, env, "run", job); r.code != exitSpent {
		t.Fatalf("second run: exit %d", r.code)
	}
	var events int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM crawl.run_events`).Scan(&events); err != nil || events != 1 {
		t.Errorf("%d events (%v), want 1", events, err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run interrupted by a signal (its context cancelled) tells its end
// too: outcome interrupted, exit 3, though the signal's context is done.
func TestRunEventsInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(cancel) // the signal arrives while the first request is out
		fmt.Fprintf(w, `{"user":{"uniqueId":%q},"stats":{"followerCount":7}}`, r.URL.Query().Get("handle"))
	}))
	t.Cleanup(upstream.Close)
	wh := &hook{script: []string{"200"}}
	hs := httptest.NewServer(wh)
	t.Cleanup(hs.Close)
	dbURL := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": dbURL, "CRAWLER_API_KEY": cliKey, "CRAWLER_HOOK_SECRET": hookSecret}
	job := writeJob(t, fmt.Sprintf(`name: events-interrupted
api: {base_url: %s/api}
limits: {workers: 1}
expand: {}
seeds: {shortvideo: {profiles: [a1, a2, a3, a4, a5, a6]}}
events: {webhooks: [{url: "%s", secret_env: CRAWLER_HOOK_SECRET}], timeout: 5s}
`, upstream.URL, hs.URL))
	var out, errb strings.Builder
	code := runEnv(ctx, []string{"run", "--grace", "1s", job}, &cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }})
	if code != exitStopped {
		t.Fatalf("run: exit %d, want 3:\n%s", code, errb.String())
	}
	calls := wh.got()
	if len(calls) != 1 || !calls[0].signedOK {
		t.Fatalf("webhook got %d requests, want 1 signed:\n%s", len(calls), errb.String())
	}
	var p events.Payload
	if err := json.Unmarshal(calls[0].body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Outcome != "interrupted" || p.ExitCode != exitStopped || p.Run.State != "stopped" || p.Run.StopReason != "interrupted" {
		t.Errorf("event %s exit %d run %+v; want interrupted, 3", p.Outcome, p.ExitCode, p.Run.Header)
	}
}
