package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// families parses the text exposition format.
func families(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	return mf
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Errorf("scrape: %v", err)
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("scrape: %s", resp.Status)
	}
	return families(t, resp.Body)
}

// value sums the samples of metric name whose labels include want.
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf, ok := mfs[name]
	if !ok {
		return 0, false
	}
	sum, found := 0.0, false
next:
	for _, m := range mf.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// A crawl against the sandbox serves /metrics over real HTTP while it
// works, and its final figures, scraped before the server closes and
// written to the textfile, are exact: pages committed, billed requests and
// the run's credits all equal the sandbox's billable count.
func TestMetricsScrapedDuringAndAfterRun(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	textfile := filepath.Join(t.TempDir(), "crawler.prom")
	var mu sync.Mutex
	var url string
	var midRun map[string]*dto.MetricFamily
	up.setTrigger(func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		if n == 10 && url != "" {
			midRun = scrape(t, url)
		}
	})
	var final map[string]*dto.MetricFamily
	var out, errb bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
		return map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}[k]
	}, metricsServing: func(u string) { mu.Lock(); url = u; mu.Unlock() },
		afterRun: func(u string) { final = scrape(t, u) }}
	code := runEnv(context.Background(), []string{"run", "--metrics-addr", "127.0.0.1:0", "--metrics-textfile", textfile,
		"--sample-interval", "100ms", crashJob(t, up.url)}, env)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	billable := float64(up.sb.Usage(cliKey).Billable)
	if billable != cleanPages {
		t.Fatalf("billable = %v, want %d", billable, cleanPages)
	}
	if midRun == nil {
		t.Fatal("no scrape while the run worked")
	}
	if v, _ := value(midRun, "crawler_requests_total", nil); v < 1 || v >= billable {
		t.Errorf("mid-run requests = %v, want between 1 and %v", v, billable)
	}
	m := regexp.MustCompile(`(\d+) pages, (\d+) rows written, (\d+) credits billed`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("summary: %s", out.String())
	}
	rows, _ := strconv.ParseFloat(m[2], 64)
	var tasks float64
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM crawl.tasks WHERE state = 'done'`).Scan(&tasks); err != nil {
		t.Fatal(err)
	}
	run := map[string]string{"run_id": "1", "job": "crash-test"}
	want := []struct {
		name   string
		labels map[string]string
		v      float64
	}{
		{"crawler_pages_committed_total", run, billable},
		{"crawler_credits_billed_total", run, billable},
		{"crawler_requests_total", map[string]string{"run_id": "1", "outcome": "billed", "endpoint": "/shortvideo/user/followers"}, 8 + 2 + 1},
		{"crawler_requests_total", map[string]string{"outcome": "billed"}, billable},
		{"crawler_requests_total", nil, billable}, // no 429, no error
		{"crawler_rate_limited_total", run, 0},
		{"crawler_run_credits_billed", run, billable},
		{"crawler_run_credits_reserved", run, 0},
		{"crawler_run_tasks", map[string]string{"state": "done"}, tasks},
		{"crawler_run_tasks", map[string]string{"state": "pending"}, 0},
		{"crawler_run_tasks", map[string]string{"state": "failed"}, 0},
		{"crawler_rows_committed_total", run, rows},
		{"crawler_page_commit_seconds", run, billable}, // the histogram's count
		{"crawler_pause_seconds_total", map[string]string{"reason": "rate_limit"}, 0},
		{"crawler_build_info", run, 1},
		{"crawler_requests_in_flight", run, 0}, // the run is over
		{"crawler_concurrency_moves_total", map[string]string{"reason": "errors", "direction": "down"}, 0},
	}
	text, err := os.ReadFile(textfile)
	if err != nil {
		t.Fatal(err)
	}
	fromFile := families(t, bytes.NewReader(text))
	for src, mfs := range map[string]map[string]*dto.MetricFamily{"scrape": final, "textfile": fromFile} {
		for _, w := range want {
			got, ok := value(mfs, w.name, w.labels)
			if !ok || got != w.v {
				t.Errorf("%s: %s%v = %v (present %v), want %v", src, w.name, w.labels, got, ok, w.v)
			}
		}
	}
	if _, ok := value(fromFile, "crawler_run_credits_max", nil); ok {
		t.Error("crawler_run_credits_max present without a budget")
	}
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(textfile), "*")); len(matches) != 1 {
		t.Errorf("textfile directory holds %v, want the file alone (no temp file left)", matches)
	}

	// The run's samples and its process row agree with the metrics.
	var samples, lastPages, procRows int64
	var version, state string
	err = conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM crawl.run_samples WHERE run_id = 1),
		(SELECT pages FROM crawl.run_samples WHERE run_id = 1 ORDER BY at DESC LIMIT 1),
		p.rows_written, p.crawler_version, p.state FROM crawl.run_processes p WHERE p.run_id = 1`).Scan(&samples, &lastPages, &procRows, &version, &state)
	if err != nil {
		t.Fatal(err)
	}
	if samples < 2 || lastPages != cleanPages || float64(procRows) != rows || version == "" || state != "done" {
		t.Errorf("samples %d, last sample's pages %d, process rows %d (want %v), version %q, state %q", samples, lastPages, procRows, rows, version, state)
	}
	// Every sample holds the limit of requests in flight and the mean in
	// flight since the one before: never above the workers that send
	// them, above 0 while pages came; the gauge and the samples agree.
	var unset, busy int64
	var most, limit float64
	err = conn.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE in_flight IS NULL OR concurrency_limit IS NULL OR concurrency_limit < 1 OR concurrency_moves IS NULL),
		count(*) FILTER (WHERE in_flight > 0), max(in_flight),
		(SELECT concurrency_limit FROM crawl.run_processes WHERE run_id = 1)
		FROM crawl.run_samples WHERE run_id = 1`).Scan(&unset, &busy, &most, &limit)
	if err != nil {
		t.Fatal(err)
	}
	if unset != 0 || busy == 0 || most > crashWorkers+1e-9 {
		t.Errorf("samples: %d without the limit's figures, %d with requests in flight, at most %.2f in flight (workers %d)", unset, busy, most, crashWorkers)
	}
	if got, ok := value(final, "crawler_concurrency_limit", run); !ok || got != limit || got < 1 {
		t.Errorf("crawler_concurrency_limit %v (present %v), the process's row %v", got, ok, limit)
	}
}

// crawler runs and crawler status --json give this run's figures, and
// status never migrates: on a schema behind the binary it exits 1 saying so.
func TestRunsAndStatusJSON(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}
	job := crashJob(t, up.url)
	if r := invoke(t, env, "run", job); r.code != 0 {
		t.Fatalf("run: %+v", r)
	}
	if r := invoke(t, env, "run", "--max-credits", "3", job); r.code != exitSpent {
		t.Fatalf("run 2: exit %d, want 5: %s", r.code, r.stderr)
	}
	r := invoke(t, env, "status", "--json", "--run", "1")
	if r.code != 0 {
		t.Fatalf("status: %+v", r)
	}
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if st.ID != 1 || st.State != "done" || st.Pages != cleanPages || st.CreditsBilled != cleanPages || st.Rows == 0 ||
		len(st.Processes) != 1 || st.Processes[0].Pages != cleanPages || st.Processes[0].Rows != st.Rows || st.Tasks["pending"] != 0 {
		t.Errorf("status --json: %s", r.stdout)
	}
	if p := st.Processes[0]; p.ConcurrencyLimit == nil || *p.ConcurrencyLimit < 1 || p.InFlight == nil {
		t.Errorf("status --json: the process's limit of requests in flight missing: %s", r.stdout)
	}
	if r := invoke(t, env, "status", "--run", "1"); r.code != 0 || !regexp.MustCompile(`429s; [0-9.]+ in flight of [0-9]+`).MatchString(r.stdout) {
		t.Errorf("status: no requests in flight against the limit: %s", r.stdout)
	}
	r = invoke(t, env, "runs", "--json")
	if r.code != 0 {
		t.Fatalf("runs: %+v", r)
	}
	var runs []struct {
		ID            int64    `json:"id"`
		Job           string   `json:"job"`
		State         string   `json:"state"`
		StopReason    string   `json:"stop_reason"`
		CreditsBilled int64    `json:"credits_billed"`
		CreditsSaved  int64    `json:"credits_saved"`
		Pages         int64    `json:"pages"`
		FailedTasks   int64    `json:"failed_tasks"`
		Versions      []string `json:"crawler_versions"`
		Seconds       float64  `json:"duration_seconds"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(runs) != 2 || runs[0].ID != 2 || runs[0].State != "stopped" || runs[0].StopReason == "" || runs[0].CreditsBilled != 3 || runs[0].Pages != 3 ||
		runs[1].ID != 1 || runs[1].State != "done" || runs[1].CreditsBilled != cleanPages || runs[1].Pages != cleanPages ||
		runs[1].StopReason != "" || runs[1].FailedTasks != 0 || len(runs[1].Versions) != 1 || runs[1].Seconds <= 0 {
		t.Errorf("runs --json: %s", r.stdout)
	}
	r = invoke(t, env, "runs")
	if r.code != 0 || !strings.Contains(r.stdout, "CREDITS SAVED") || !strings.Contains(r.stdout, "crash-test") {
		t.Errorf("runs: %+v", r)
	}

	// A schema behind the binary: status and runs refuse, and change nothing.
	conn := testConn(t, db)
	defer conn.Close(context.Background())
	var latest int64
	if err := conn.QueryRow(context.Background(), `SELECT max(version_id) FROM goose_db_version`).Scan(&latest); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `DELETE FROM goose_db_version WHERE version_id = $1`, latest); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"status", "runs"} {
		r = invoke(t, env, cmd)
		want := fmt.Sprintf("behind this crawler's %d; this command only reads and does not migrate: run crawler migrate", latest)
		if r.code != exitFailure || !strings.Contains(r.stderr, want) {
			t.Errorf("%s on an old schema: exit %d, stderr %q", cmd, r.code, r.stderr)
		}
	}
	var back bool
	if err := conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM goose_db_version WHERE version_id = $1)`, latest).Scan(&back); err != nil || back {
		t.Errorf("status migrated: version %d applied again (%v)", latest, err)
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := invoke(t, nil, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "crawler ") || !strings.Contains(r.stdout, "go1.") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	for _, args := range [][]string{{"runs", "--help"}, {"status", "--help"}, {"version", "--help"}} {
		if r := invoke(t, nil, args...); r.code != 0 || !strings.Contains(r.stdout, "Usage") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	r := invoke(t, nil, "run", "--help")
	for _, flag := range []string{"-metrics-addr", "-metrics-textfile", "-sample-interval", "-live"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("run --help lacks %s", flag)
		}
	}
}

// On a terminal, run draws the live line (redrawn in place, ending with
// the run's final figures and a newline) instead of progress log lines.
func TestRunDrawsLiveLineOnTerminal(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	db := pgtest.DB(t)
	var out, errb bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
		return map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}[k]
	}, terminal: func(io.Writer) (bool, func() int) { return true, func() int { return 300 } }}
	var limitsMu sync.Mutex
	var limits []int64
	env.setMemoryLimit = func(n int64) int64 { limitsMu.Lock(); limits = append(limits, n); limitsMu.Unlock(); return 0 }
	if code := runEnv(context.Background(), []string{"run", crashJob(t, up.url)}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// The run moved the soft memory limit with its requests in flight
	// (TestMemoryLimitFollowsRequestsInFlight), from its first progress.
	limitsMu.Lock()
	if len(limits) == 0 || limits[0] < memoryLimitDefault || slices.Max(limits) > memoryLimit(sources.MaxInflightBytesDefault, concurrency.HardCeiling) {
		t.Errorf("soft memory limits set: %v", limits)
	}
	limits = nil
	limitsMu.Unlock()
	s := errb.String()
	final := fmt.Sprintf("\r\x1b[Krun 1 done | credits %d (no cap) |", cleanPages)
	if !strings.Contains(s, final) || !strings.HasSuffix(s, "\n") || strings.Count(s, "\r\x1b[K") < 2 {
		t.Errorf("stderr lacks the live line %q:\n%q", final, s)
	}
	if strings.Contains(s, "msg=progress") {
		t.Errorf("progress log lines on a terminal:\n%s", s)
	}
	// Off a terminal (the other tests), the progress lines stay.
	errb.Reset()
	env.terminal = nil
	env.getenv = func(k string) string { // GOMEMLIMIT set: the run leaves the limit alone
		return map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey, "GOMEMLIMIT": "300MiB"}[k]
	}
	if code := runEnv(context.Background(), []string{"run", "--progress", "10ms", crashJob(t, up.url)}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	limitsMu.Lock()
	if len(limits) != 0 {
		t.Errorf("GOMEMLIMIT set, yet the run set the limit: %v", limits)
	}
	limitsMu.Unlock()
	if s := errb.String(); strings.Contains(s, "\x1b[K") || !strings.Contains(s, "msg=progress") || !strings.Contains(s, "credits_billed=") {
		t.Errorf("off a terminal:\n%s", s)
	}
}

// 429s reach the metrics: as many as the sandbox answered, with the time
// paused, and the pages committed still equal the billable answers.
func TestMetricsCount429sAndPauses(t *testing.T) {
	t.Parallel()
	up := newUpstreamWith(t, sandbox.Config{Rate: 15, Burst: 2, RetryAfterMode: sandbox.RetryAfterNone})
	db := pgtest.DB(t)
	textfile := filepath.Join(t.TempDir(), "crawler.prom")
	job := writeJob(t, fmt.Sprintf(`name: limited
api: {base_url: %s, max_retries: 2, timeout: 1m, retry_initial: 100ms, retry_max: 200ms}
limits: {workers: 4}
seeds:
  shortvideo:
    profiles: [big_f400_g120, mid_f100_g50, small_f3_g3]
`, up.url))
	r := invoke(t, map[string]string{"DATABASE_URL": db, "CRAWLER_API_KEY": cliKey}, "run", "--metrics-textfile", textfile, job)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	u := up.sb.Usage(cliKey)
	if u.RateLimited == 0 {
		t.Fatal("the sandbox answered no 429: the test proves nothing")
	}
	f, err := os.Open(textfile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mfs := families(t, f)
	for _, w := range []struct {
		name   string
		labels map[string]string
		v      float64
	}{
		{"crawler_rate_limited_total", nil, float64(u.RateLimited)},
		{"crawler_requests_total", map[string]string{"outcome": "rate_limited"}, float64(u.RateLimited)},
		{"crawler_pages_committed_total", nil, float64(u.Billable)},
		{"crawler_run_credits_billed", nil, float64(u.Billable)},
	} {
		if got, _ := value(mfs, w.name, w.labels); got != w.v {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.v)
		}
	}
	if got, _ := value(mfs, "crawler_pause_seconds_total", map[string]string{"reason": "rate_limit"}); got <= 0 {
		t.Errorf("pause seconds = %v, want > 0", got)
	}
}
