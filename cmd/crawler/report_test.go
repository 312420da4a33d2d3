package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/output/report"
	"github.com/socialcrawl/crawler/runs"
	"github.com/socialcrawl/crawler/testkit/childproc"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// reportJob is exportJob (profiles, a 404, a search and a song) with the
// followers' profiles, so many accounts get a follower count in each run.
// Every follow list fits its one page but star's 120 followers; tiny's
// lists gain an entry a world day.
const reportJob = exportJob + "  follower_profiles: {}\n"

// chromium finds a headless-capable Chromium: $CHROMIUM, chromium or
// chromium-browser. Without one the test fails in CI (CI=true) and skips
// elsewhere (scripts/ensure-chromium.sh installs it as root).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found (run scripts/ensure-chromium.sh as root, or set CHROMIUM); the browser test never skips in CI")
	}
	t.Skip("chromium not found: run scripts/ensure-chromium.sh (as root) to install it")
	return ""
}

// browser is one headless Chromium, every request it sends going through
// a proxy (loopback included), so any resource a page asks for is seen
// there. It is driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe), so that one start shows every page: a
// Chromium start costs some 2.5 CPU-s, more than rendering a report.
type browser struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr strings.Builder
	in     *os.File      // the browser reads commands here (its fd 3)
	out    *bufio.Reader // and writes answers and events here (its fd 4)
	id     int
	events []cdpMessage // read while waiting for an answer
	sess   string
	cancel context.CancelFunc
}

type cdpMessage struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// newBrowser starts Chromium with a page of width x height pixels.
func newBrowser(t *testing.T, bin, proxy string, width, height int) *browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-default-apps", "--disable-sync",
		"--disable-extensions", "--mute-audio", "--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
		"--proxy-server=" + proxy, "--proxy-bypass-list=<-loopback>", "--remote-debugging-pipe", "about:blank"}
	b := &browser{t: t, cmd: exec.CommandContext(ctx, bin, args...), cancel: cancel}
	b.cmd.Stderr = &b.stderr
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b.cmd.ExtraFiles = []*os.File{cmdR, outW}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdR.Close()
	outW.Close()
	b.in, b.out = cmdW, bufio.NewReader(outR)
	t.Cleanup(b.close)
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.sess = att.SessionID
	b.call(b.sess, "Page.enable", map[string]any{}, nil)
	b.call(b.sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

// read reads the browser's next message.
func (b *browser) read() cdpMessage {
	b.t.Helper()
	line, err := b.out.ReadBytes(0)
	if err != nil {
		b.t.Fatalf("chromium: %v\n%s", err, b.stderr.String())
	}
	var m cdpMessage
	if err := json.Unmarshal(line[:len(line)-1], &m); err != nil {
		b.t.Fatalf("chromium: %v: %s", err, line)
	}
	return m
}

// call sends a command and decodes its answer into result (when not nil).
func (b *browser) call(session, method string, params, result any) {
	b.t.Helper()
	b.id++
	msg := map[string]any{"id": b.id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(data, 0)); err != nil {
		b.t.Fatalf("chromium %s: %v\n%s", method, err, b.stderr.String())
	}
	for {
		m := b.read()
		if m.ID != b.id {
			if m.Method != "" {
				b.events = append(b.events, m)
			}
			continue
		}
		if m.Error != nil {
			b.t.Fatalf("chromium %s: %s", method, m.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				b.t.Fatalf("chromium %s: %v", method, err)
			}
		}
		return
	}
}

// show loads url, waits for its load event and returns its DOM; with png
// set, a screenshot of the page is written there too.
func (b *browser) show(url, png string) string {
	b.t.Helper()
	b.events = nil
	b.call(b.sess, "Page.navigate", map[string]any{"url": url}, nil)
	eval := func(expr string) string {
		var ev struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		b.call(b.sess, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &ev)
		return ev.Result.Value
	}
	// A load event, then the page is url's, loaded (not the one before).
	for shown := false; !shown; {
		loaded := false
		for !loaded {
			for _, e := range b.events {
				loaded = loaded || (e.Method == "Page.loadEventFired" && e.SessionID == b.sess)
			}
			b.events = nil
			if !loaded {
				if m := b.read(); m.Method != "" {
					b.events = append(b.events, m)
				}
			}
		}
		shown = eval(`document.readyState + " " + location.href`) == "complete "+url
	}
	dom := eval("document.documentElement.outerHTML")
	if png != "" {
		var shot struct {
			Data []byte `json:"data"` // base64 in the JSON
		}
		b.call(b.sess, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
		if err := os.WriteFile(png, shot.Data, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	return dom
}

// close ends the browser: Browser.close, then its exit.
func (b *browser) close() {
	defer b.cancel()
	if b.in == nil {
		return
	}
	data, _ := json.Marshal(map[string]any{"id": b.id + 1, "method": "Browser.close"})
	_, _ = b.in.Write(append(data, 0))
	b.in.Close()
	b.in = nil
	_ = b.cmd.Wait()
}

// sandboxProcess serves `crawler sandbox` with args (the crawler binary,
// built without the race detector) on a free port until the test ends, and
// returns its base URL. For tests that reach the sandbox only over HTTP:
// the crawl in a child process and the sandbox in the test's own, under
// the detector, cost more than the sandbox's own process.
func sandboxProcess(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(childproc.Crawler(t), append([]string{"sandbox", "--addr", "127.0.0.1:0", "--api-key", cliKey, "--log-level", "error"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder // read after Wait
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	// Its one line on stdout, once it listens.
	line, err := bufio.NewReader(out).ReadString('\n')
	m := regexp.MustCompile(`serving (http://\S+/api)`).FindStringSubmatch(line)
	if m == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("crawler sandbox %v: %q, %v\n%s", args, line, err, stderr.String())
	}
	return m[1]
}

// browserOwn matches the hosts of Chromium's own background calls
// (component updates, network time, accounts), which no flag silences.
var browserOwn = regexp.MustCompile(`(^|\.)(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)(:\d+)?$`)

// proxyLog records every request a browser sends through it, and answers
// 404.
type proxyLog struct {
	mu   sync.Mutex
	urls []string
}

func (p *proxyLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if browserOwn.MatchString(r.Host) {
		// Chromium's own update, time and account calls, not the page's.
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	p.urls = append(p.urls, r.Method+" "+r.URL.String()+" "+r.Host)
	p.mu.Unlock()
	http.NotFound(w, r)
}

func (p *proxyLog) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.urls...)
}

// chartMarks counts, per chart (svg data-chart=NAME), the data marks the
// browser rendered (rect, path or circle of class "mark"), and returns the
// count each chart declares in data-marks.
func chartMarks(dom string) (got, declared map[string]int) {
	got, declared = map[string]int{}, map[string]int{}
	svgRe := regexp.MustCompile(`(?s)<svg[^>]*data-chart="([^"]+)"[^>]*data-marks="(\d+)"[^>]*>(.*?)</svg>`)
	markRe := regexp.MustCompile(`<(rect|path|circle) class="mark[ "]`)
	for _, m := range svgRe.FindAllStringSubmatch(dom, -1) {
		got[m[1]] = len(markRe.FindAllString(m[3], -1))
		var n int
		fmt.Sscan(m[2], &n)
		declared[m[1]] = n
	}
	return got, declared
}

// artifactDir is where the browser test leaves its screenshots and pages
// (testdata/out, ignored by git).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Two harvests of one job a month apart (in the sandbox's world clock; the
// second under a request quota, so it meets 429s), then crawler report on
// the second: headless Chromium renders the page, every chart has one mark
// per figure of the JSON form (one bar per endpoint used, per table, per
// task state of each kind, per mover; a line and a point per interval of
// each series), no resource is requested from anywhere, and a screenshot is
// left in testdata/out. The first run, without samples or a previous run,
// says so in those sections. Between the runs an account stops following
// small (written in the database: the sandbox's lists only grow), so
// "What changed" of the second run shows each list walked to its end both
// times with the edges it gained (tiny's 30 new followers and 30 new
// followings) and lost (that one), and star's followers, cut by the page
// limit, as not compared.
//
// The two harvests run in the crawler binary (runBin, built without the
// race detector), as TestExportHarvest's nights do: the crawl is raced by
// package pipeline's own tests; the reports stay in process (invoke), so
// the report command still runs under the detector.
func TestReportInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	binEnv := []string{"DATABASE_URL=" + db, "CRAWLER_API_KEY=" + cliKey}
	jobPath := writeJob(t, reportJob)
	// The sandboxes are `crawler sandbox` processes: only the crawls, over
	// HTTP, talk to them, and serving them under the race detector cost
	// some 1.3 CPU-s.
	bases := []string{sandboxProcess(t, "--world-time", "0"), sandboxProcess(t, "--world-time", "30", "--rate", "150", "--burst", "5")}
	// Run 1 records no samples; run 2 one every 50ms.
	for i, sample := range []string{"0", "50ms"} {
		if i == 1 {
			// ghost_gone followed small in run 1 and no more.
			conn := testConn(t, db)
			if _, err := conn.Exec(context.Background(), `
				WITH u AS (INSERT INTO shortvideo.users (unique_id, raw, first_seen_run, last_seen_run)
				           VALUES ('ghost_gone', '{"uniqueId": "ghost_gone"}', 1, 1))
				INSERT INTO shortvideo.follows (follower, followee, raw, first_seen_run, last_seen_run)
				VALUES ('ghost_gone', 'small_f30_g4', '{"uniqueId": "ghost_gone"}', 1, 1)`); err != nil {
				t.Fatal(err)
			}
		}
		r := runBin(t, binEnv, "run", "--base-url", bases[i], "--sample-interval", sample, "--live", "off", "--log-level", "error", jobPath)
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, r.code, r.stderr)
		}
	}
	dir := artifactDir(t)
	proxy := &proxyLog{}
	ps := httptest.NewServer(proxy)
	t.Cleanup(ps.Close)

	// One browser start shows both reports and the control page.
	br := newBrowser(t, bin, ps.URL, 900, 3400)
	for _, run := range []int{1, 2} {
		htmlPath := filepath.Join(dir, fmt.Sprintf("report-run%d.html", run))
		r := invoke(t, env, "report", "--run", fmt.Sprint(run), "--html", htmlPath, "--json")
		if r.code != 0 {
			t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("report --json: %v\n%s", err, r.stdout)
		}
		page, err := os.ReadFile(htmlPath)
		if err != nil {
			t.Fatal(err)
		}
		// Self-contained: nothing that could load from elsewhere.
		for _, bad := range []string{"<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "http://", "https://"} {
			if strings.Contains(strings.ToLower(string(page)), bad) {
				t.Errorf("run %d: the page holds %q", run, bad)
			}
		}
		png := filepath.Join(dir, fmt.Sprintf("report-run%d.png", run))
		_ = os.Remove(png)
		dom := br.show("file://"+htmlPath, png)
		if st, err := os.Stat(png); err != nil || st.Size() < 10_000 {
			t.Errorf("run %d: screenshot %s: %v", run, png, err)
		}
		t.Logf("run %d: report %s, screenshot %s", run, htmlPath, png)

		for _, id := range []string{"credits", "timeline", "tasks", "tables", "changes", "movers"} {
			if !strings.Contains(dom, `<section id="`+id+`">`) {
				t.Errorf("run %d: rendered page lacks section %s", run, id)
			}
		}
		if has := strings.Contains(dom, `<section id="inflight">`); has != (len(rep.Timeline) > 0) {
			t.Errorf("run %d: section inflight shown %v with %d timeline points", run, has, len(rep.Timeline))
		}
		got, declared := chartMarks(dom)
		want := map[string]int{"credits": len(rep.Credits), "tables": len(rep.Tables), "reasons": len(rep.Reasons)}
		for _, k := range rep.Kinds {
			for _, n := range []int64{k.Done, k.Failed, k.Skipped, k.Open} {
				if n > 0 {
					want["tasks"]++
				}
			}
		}
		if len(rep.Timeline) > 0 {
			want["timeline"] = 2 + 2*len(rep.Timeline)
			want["inflight"] = 2 + 2*len(rep.Timeline) // every sample holds the limit
		}
		if len(rep.Followers) > 0 {
			want["followers"] = len(rep.Followers)
		}
		if len(rep.Plays) > 0 {
			want["plays"] = len(rep.Plays)
		}
		if len(rep.FollowerFalls) > 0 {
			want["followerfalls"] = len(rep.FollowerFalls)
		}
		if rep.Changes == nil {
			t.Fatalf("run %d: no what_changed in the JSON", run)
		}
		if len(rep.Changes.Lists) > 0 {
			want["edges"] = 2 * len(rep.Changes.Lists)
		}
		for name, n := range want {
			if got[name] != n || declared[name] != n {
				t.Errorf("run %d: chart %s has %d marks rendered (declares %d), want %d", run, name, got[name], declared[name], n)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("run %d: unexpected chart %s", run, name)
			}
		}
		// The figures themselves.
		if rep.Run.ID != int64(run) || rep.Run.Job != "report-test" || rep.Run.State != "done" || rep.Run.Rows == 0 || rep.Run.RowsCounted != (run == 1) {
			t.Errorf("run %d: header %+v", run, rep.Run)
		}
		endpoints := map[string]bool{}
		var billed int64
		for _, e := range rep.Credits {
			endpoints[e.Endpoint] = true
			billed += e.Billed
		}
		for _, e := range []string{"/shortvideo/profile", "/shortvideo/user/followers", "/shortvideo/user/following", "/shortvideo/search/keyword", "/shortvideo/song", "/shortvideo/song/videos"} {
			if !endpoints[e] {
				t.Errorf("run %d: no credits row for %s: %v", run, e, endpoints)
			}
		}
		if billed != rep.Run.CreditsBilled || billed == 0 {
			t.Errorf("run %d: endpoints billed %d, run %d", run, billed, rep.Run.CreditsBilled)
		}
		var skipped int64
		for _, rc := range rep.Reasons {
			if rc.State == "skipped" {
				skipped += rc.N
			}
		}
		if skipped != 2 {
			t.Errorf("run %d: skipped tasks in the reasons = %d, want 2 (the two missing accounts)", run, skipped)
		}
		// The walks, counted from crawl.tasks (not the views).
		var walked, complete, capped int64
		if err := testConn(t, db).QueryRow(context.Background(), `SELECT count(*),
			count(*) FILTER (WHERE state = 'done' AND reason = 'end'), count(*) FILTER (WHERE reason = 'page_limit')
			FROM crawl.tasks WHERE run_id = $1 AND kind IN ('shortvideo.followers', 'shortvideo.following')`, run).Scan(&walked, &complete, &capped); err != nil {
			t.Fatal(err)
		}
		if ch := rep.Changes; ch.ListsWalked != walked || ch.ListsComplete != complete || ch.Incomplete["page_limit"] != capped || capped == 0 ||
			ch.ListsWalked != ch.ListsComplete+capped {
			t.Errorf("run %d: %d lists walked, %d complete, %d capped; tasks say %d, %d, %d", run, ch.ListsWalked, ch.ListsComplete, ch.Incomplete["page_limit"], walked, complete, capped)
		}
		switch run {
		case 1:
			if len(rep.Timeline) != 0 || rep.Previous != nil || len(rep.Followers) != 0 {
				t.Errorf("run 1: timeline %d points, previous %v, movers %d; want none", len(rep.Timeline), rep.Previous, len(rep.Followers))
			}
			// Everything is new; nothing to compare a list with.
			ch := rep.Changes
			if ch.NewAccounts == 0 || len(ch.NewAccountsTop) != 10 || ch.ListsComplete == 0 || ch.ListsCompared != 0 ||
				ch.Gained != 0 || ch.Lost != 0 || len(ch.Lists) != 0 {
				t.Errorf("run 1: what changed %+v", ch)
			}
			for _, note := range []string{"No progress samples were recorded", "This is the first run of job report-test",
				"No follow list of this run can be compared", fmt.Sprintf("Not walked to the end, so not compared: page_limit %d;", ch.Incomplete["page_limit"])} {
				if !strings.Contains(dom, note) {
					t.Errorf("run 1: the page does not say %q", note)
				}
			}
		case 2:
			if rep.Previous == nil || *rep.Previous != 1 {
				t.Errorf("run 2: previous run %v, want 1", rep.Previous)
			}
			if len(rep.Timeline) < 2 || len(rep.Followers) == 0 || len(rep.Plays) == 0 {
				t.Errorf("run 2: timeline %d points, %d follower movers, %d play movers", len(rep.Timeline), len(rep.Followers), len(rep.Plays))
			}
			var pages float64
			var r429 int64
			for _, p := range rep.Timeline {
				pages += p.PagesPerSec
				r429 += p.RateLimited
			}
			var sum429 int64
			for _, e := range rep.Credits {
				sum429 += e.RateLimited
			}
			if r429 != sum429 {
				t.Errorf("run 2: 429s in the timeline %d, by endpoint %d", r429, sum429)
			}
			for i := 1; i < len(rep.Followers); i++ {
				if rep.Followers[i].Delta > rep.Followers[i-1].Delta {
					t.Errorf("run 2: follower movers not in order: %+v", rep.Followers)
				}
			}
			t.Logf("run 2: %d timeline points, %d 429s, %d follower movers, %d play movers", len(rep.Timeline), r429, len(rep.Followers), len(rep.Plays))
			// What changed: tiny's lists gained 30 entries each, small's
			// followers lost ghost_gone; every other list compared (the
			// following lists of the seeds and of their followers, which
			// do not grow) is unchanged, and not listed.
			ch := rep.Changes
			if ch.Gained != 60 || ch.Lost != 1 || ch.ListsCompared < 5 || len(ch.Lists) != 3 || ch.Changed != 3 || ch.Unchanged != ch.ListsCompared-3 {
				t.Errorf("run 2: what changed %+v", ch)
			}
			wantLists := map[string][4]int64{ // gained, lost, entries seen, counter before
				"tiny_f5_g2_r1 followers": {30, 0, 35, 5}, "tiny_f5_g2_r1 following": {30, 0, 32, 2}, "small_f30_g4 followers": {0, 1, 30, 30},
			}
			for i, l := range ch.Lists {
				w, ok := wantLists[l.Account+" "+l.List]
				if !ok || l.Gained != w[0] || l.Lost != w[1] || l.Seen != w[2] || l.PrevRun != 1 ||
					l.CountAfter == nil || *l.CountAfter != w[2] || l.CountBefore == nil || *l.CountBefore != w[3] {
					t.Errorf("run 2: list %d %s %s: gained %d lost %d seen %d counter %s -> %s; want %v", i, l.Account, l.List, l.Gained, l.Lost, l.Seen,
						report.Opt(l.CountBefore), report.Opt(l.CountAfter), w)
				}
			}
			for _, text := range []string{"What changed", "Follow edges gained and lost", "tiny_f5_g2_r1", "+30",
				fmt.Sprintf("%d compared lists gained and lost no one.", ch.Unchanged),
				fmt.Sprintf("Not walked to the end, so not compared: page_limit %d;", ch.Incomplete["page_limit"])} {
				if !strings.Contains(dom, text) {
					t.Errorf("run 2: the page does not say %q", text)
				}
			}
			var risers int64
			for _, m := range rep.Followers {
				if m.Delta > 0 {
					risers++
				}
			}
			if ch.FollowerRises == 0 || ch.FollowerRises < risers || min(ch.FollowerFalls, runs.ReportMoversLimit) != int64(len(rep.FollowerFalls)) {
				t.Errorf("run 2: follower counts risen %d, fallen %d (%d risers, %d fallers among the movers)", ch.FollowerRises, ch.FollowerFalls, risers, len(rep.FollowerFalls))
			}
		}
	}
	if seen := proxy.seen(); len(seen) != 0 {
		t.Errorf("the browser requested %d resources while showing the reports: %v", len(seen), seen)
	}
	// The proxy does see what a page would fetch: the check above can fail.
	control := filepath.Join(t.TempDir(), "control.html")
	if err := os.WriteFile(control, []byte(`<!DOCTYPE html><img src="http://example.invalid/x.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	br.show("file://"+control, "")
	if seen := proxy.seen(); len(seen) == 0 {
		t.Error("the control page's image never reached the proxy: the no-external-resource check is blind")
	}
}

// crawler replay: a run kept with archive: true replays with exit 0 and
// no request to the sandbox; one without an archive, or no run, exits 2.
// The two runs are in the crawler binary (runBin, no race detector); the
// replays, what the test is about, stay in process under it.
func TestReplayCommand(t *testing.T) {
	t.Parallel()
	sb, base := newSandbox(t)
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	binEnv := []string{"DATABASE_URL=" + db, "CRAWLER_API_KEY=" + cliKey}
	// The run without an archive only has to exist: one small profile.
	plain := writeJob(t, `name: report-test-plain
archive: false
api: {base_url: http://127.0.0.1:1/api, max_retries: 1}
seeds:
  shortvideo:
    profiles: ["@tiny_f5_g2_r1"]
`)
	// The archived run: exportJob (reportJob's seeds and lists, every
	// endpoint it uses, without the followers' profiles, which add some 300
	// pages of the same endpoints to harvest and replay), archived.
	kept := writeJob(t, exportJob+"archive: true\n")
	for _, job := range []string{plain, kept} {
		if r := runBin(t, binEnv, "run", "--base-url", base, "--live", "off", "--log-level", "error", job); r.code != 0 {
			t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
		}
	}
	before := sb.Usage(cliKey)
	r := invoke(t, env, "replay", "--run", "2")
	if r.code != 0 || !regexp.MustCompile(`replayed run 2: \d+ pages, \d+ rows .* 0 requests upstream`).MatchString(r.stdout) {
		t.Errorf("replay of an archived run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Log(strings.ReplaceAll(strings.TrimSpace(r.stdout), "\n", "; "))
	for _, id := range []string{"1", "9"} {
		if r := invoke(t, env, "replay", "--run", id); r.code != exitUsage {
			t.Errorf("replay --run %s: exit %d, want %d\n%s", id, r.code, exitUsage, r.stderr)
		}
	}
	if after := sb.Usage(cliKey); after.Requests != before.Requests || after.Billable != before.Billable {
		t.Errorf("sandbox requests %d -> %d, billable %d -> %d during replays", before.Requests, after.Requests, before.Billable, after.Billable)
	}
}
