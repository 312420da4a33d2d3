package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/testkit/childproc"
)

// smokeGroups split the workloads for TestSmoke's concurrent subtests, each
// a session of its own (its own databases) of about the same length: most
// workloads wait on rate limits and latencies, so three at a time take a
// third of the wall time on two cores. TestSmoke lasts as long as its
// longest group. Filled longest workload first, each into the shortest
// group so far, by the workloads' smoke times in three loaded runs (hostile
// ~78 s, content ~64, history ~62, revisit ~54) and one near quiet (content
// 25, hostile 18, history 14, revisit 11) weighed equally: 62, 52 and 50 s
// near quiet (was 61, 69 and 35).
var smokeGroups = [][]string{
	{"content", "waste", "scaleoutauto", "ceiling", "ratechangeauto", "degrade", "latency"},
	{"hostile", "inflight", "scaleout", "quota", "outage", "knee", "scrapy"},
	{"history", "revisit", "quotaauto", "ratechange", "dbcost", "concurrency", "memory"},
}

// TestSmoke runs every workload in smoke mode (a second or two each, small
// sizes) against DATABASE_URL, or a throwaway cluster when it is unset, and
// checks that each computes its figures and that the report renders them.
func TestSmoke(t *testing.T) {
	want := map[string]int{"quota": 4, "ratechange": 4, "latency": 1, "ceiling": 6, "memory": 7, "waste": 3, "scaleout": 4, "outage": 3, "hostile": 10,
		"quotaauto": 13, "ratechangeauto": 7, "dbcost": 4, "scaleoutauto": 10, "history": 24, "revisit": 6,
		"concurrency": 10, "knee": 3, "degrade": 2, "scrapy": 4, "inflight": 8, "content": 12}
	grouped := map[string]bool{}
	for _, g := range smokeGroups {
		for _, name := range g {
			grouped[name] = true
		}
	}
	for _, name := range Workloads() {
		if _, ok := want[name]; !ok && name != "gobench" {
			t.Errorf("workload %s has no figure count in TestSmoke", name)
		}
		if !grouped[name] && name != "gobench" {
			t.Errorf("workload %s is in no smoke group", name)
		}
	}
	// One crawler binary for the three sessions: each would link its own.
	bin := childproc.PrebuiltCrawler()
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "crawler")
		dir, err := moduleDir("")
		if err != nil {
			t.Fatal(err)
		}
		if err := (&env{cfg: Config{ModuleDir: dir}}).goBuild(t.Context(), bin, "./cmd/crawler"); err != nil {
			t.Fatal(err)
		}
	}
	// The groups' subtests run from goroutines of their own, not with
	// t.Parallel: that allows GOMAXPROCS subtests at once (-parallel), two
	// on two cores, and the third group waited for the first to end.
	var wg sync.WaitGroup
	for i, group := range smokeGroups {
		wg.Go(func() {
			t.Run(fmt.Sprint("group", i), func(t *testing.T) {
				smoke(t, group, want, bin)
			})
		})
	}
	wg.Wait()
}

// smoke runs the workloads of group in one smoke session and checks their
// figures (want: figures per workload) and the report; bin is the crawler
// binary the workloads run as a child process.
func smoke(t *testing.T, group []string, want map[string]int, bin string) {
	begin := time.Now()
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	rep, err := Run(t.Context(), Config{
		Smoke:       true,
		Only:        group,
		DatabaseURL: os.Getenv("DATABASE_URL"),
		Command:     "go test ./testkit/bench -run TestSmoke",
		CrawlerBin:  bin,
		Logger:      slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	for _, w := range rep.Workloads {
		t.Logf("%s: %d figures in %s", w.Name, len(w.Figures), w.Took.Round(time.Millisecond))
		if w.Name == "scrapy" && strings.HasPrefix(w.Err, scrapyMissing) {
			// The peer is a third party's, installed for make bench
			// (scripts/ensure-scrapy.sh), not for make test: its
			// comparison is a benchmark's, not a promise of ours.
			t.Logf("%s: %s (make bench installs it)", w.Name, w.Err)
			ran[w.Name] = true
			continue
		}
		if w.Err != "" {
			t.Errorf("%s: %s", w.Name, w.Err)
		}
		if len(w.Figures) != want[w.Name] {
			t.Errorf("%s: %d figures, want %d", w.Name, len(w.Figures), want[w.Name])
		}
		for _, f := range w.Figures {
			if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) || f.Name == "" || f.Command == "" || f.Detail == "" {
				t.Errorf("%s: figure %+v not computed", w.Name, f)
			}
		}
		ran[w.Name] = true
	}
	for _, name := range group {
		if !ran[name] {
			t.Errorf("workload %s not run", name)
		}
	}
	md, err := rep.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"# Benchmarks", "Smoke mode", "## Machine", "| # | workload | figure | value | aim | met? |", "## Worst gap and why", rep.Machine.Go} {
		if !bytes.Contains(md, []byte(part)) {
			t.Errorf("report lacks %q", part)
		}
	}
	for _, f := range rep.Figures() {
		if !bytes.Contains(md, []byte(cell(f.Name))) {
			t.Errorf("report lacks figure %q", f.Name)
		}
	}
	t.Logf("smoke session took %s", time.Since(begin).Round(time.Millisecond))
}

func TestParseGoBench(t *testing.T) {
	t.Parallel()
	out := `goos: linux
pkg: github.com/socialcrawl/crawler/sinks
cpu: AMD EPYC
BenchmarkWriteFollowersPage/new-2         	     421	   2845672 ns/op	     35141 rows/s	   61234 B/op	     812 allocs/op
BenchmarkWriteFollowersPage/rewrite-2     	     600	   1999999 ns/op	     50000 rows/s
PASS
pkg: github.com/socialcrawl/crawler/sources
BenchmarkDecodeFollowersPage-2   	    4473	    299368 ns/op	  20.34 MB/s	    167018 entries/s	   93842 B/op	     941 allocs/op
ok  	github.com/socialcrawl/crawler/sources	2.490s
`
	got := parseGoBench(out)
	if len(got) != 3 {
		t.Fatalf("%d benchmarks, want 3: %+v", len(got), got)
	}
	b := got[0]
	if b.Name != "BenchmarkWriteFollowersPage/new" || b.N != 421 || b.NsPerOp != 2845672 || b.Dir() != "./sinks/" || len(b.Metrics) != 4 {
		t.Errorf("first: %+v (dir %s)", b, b.Dir())
	}
	if p := b.pattern(); p != "^BenchmarkWriteFollowersPage$/^new$" {
		t.Errorf("pattern %q", p)
	}
	if m, _ := got[2].throughput(); m != "167,018 entries/s" {
		t.Errorf("throughput %q, want the benchmark's own metric before MB/s", m)
	}
}

func TestAims(t *testing.T) {
	t.Parallel()
	cases := []struct {
		aim  Aim
		v    float64
		met  bool
		text string
	}{
		{atLeast(0.95), 0.96, true, "≥ 0.95"},
		{atLeast(0.95), 0.90, false, "≥ 0.95"},
		{atMost(5), 5, true, "≤ 5"},
		{exactly(1), 1, true, "= 1"},
		{exactly(0), 2, false, "= 0"},
		{Aim{}, 3, true, "-"},
	}
	for _, c := range cases {
		if c.aim.Met(c.v) != c.met || c.aim.String() != c.text {
			t.Errorf("%+v with %v: met %v %q", c.aim, c.v, c.aim.Met(c.v), c.aim.String())
		}
		if g := c.aim.Gap(c.v); c.aim.Has() && (g > 0) == c.met {
			t.Errorf("%+v with %v: gap %v", c.aim, c.v, g)
		}
	}
	if s := formatValue(12345.6); s != "12,346" {
		t.Errorf("formatValue = %q", s)
	}
}

func TestPagesNeeded(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]int{"w1_f2000_g400": 1 + 40 + 8, "w6_f3_g3": 3, "plain": 3, "x_f50_g51": 1 + 1 + 2} {
		if got := pagesNeeded(h); got != want {
			t.Errorf("pagesNeeded(%s) = %d, want %d", h, got, want)
		}
	}
}

func TestSettleTime(t *testing.T) {
	t.Parallel()
	tc := time.Unix(1000, 0)
	var oks []time.Time
	// 5/s for 3 s, then 20/s.
	for t := tc; t.Before(tc.Add(3 * time.Second)); t = t.Add(200 * time.Millisecond) {
		oks = append(oks, t)
	}
	for t := tc.Add(3 * time.Second); t.Before(tc.Add(20 * time.Second)); t = t.Add(50 * time.Millisecond) {
		oks = append(oks, t)
	}
	if s, ok := settleTime(oks, tc, tc.Add(20*time.Second), 18, 5*time.Second); !ok || math.Abs(s-3) > 0.15 {
		t.Errorf("settleTime = %v %v, want 3 s", s, ok)
	}
	if s, ok := settleTime(oks, tc, tc.Add(20*time.Second), 30, 5*time.Second); ok || s != 20 {
		t.Errorf("settleTime of a level never reached = %v %v", s, ok)
	}
}

func TestJobYAML(t *testing.T) {
	t.Parallel()
	for _, s := range []jobSpec{
		{name: "a", baseURL: "http://127.0.0.1:1/api", rate: 75, burst: 10, workers: 8, maxRetries: 20, profiles: bigAccounts("s", 2, 1000), followersOnly: true},
		{name: "b", baseURL: "http://127.0.0.1:1/api", workers: 1, maxPages: allPages, secUIDs: []string{secUIDOf("mem_f100_g0")}, expand: "{follower_profiles: {}}"},
		{name: "c", baseURL: "http://127.0.0.1:1/api", workers: 4, maxRetries: 2, leaseTimeout: time.Second, profiles: []string{"w6_f3_g3"}},
	} {
		job, err := s.parse()
		if err != nil {
			t.Errorf("%s: %v\n%s", s.name, err, s.yaml())
			continue
		}
		if job.Limits.Workers != s.workers || job.API.Rate != s.rate {
			t.Errorf("%s: parsed %+v", s.name, job.Limits)
		}
	}
	if !strings.HasPrefix(secUIDOf("a"), "MS4wLjABAAAA") {
		t.Error("secUid prefix")
	}
}

// The key-echoing answer does echo the key, in both spellings keyCount
// looks for, so that the hostile workload's "0 copies" means redacted.
func TestHostileEchoCarriesKey(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/shortvideo/profile?handle="+HostileEcho+"_a", nil)
	req.Header.Set("x-api-key", apiKey)
	HostileHandler(apiKey).ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("echo: HTTP %d, body %s", rec.Code, rec.Body)
	}
	if n := keyCount(rec.Body.String()); n != 2 {
		t.Errorf("echo body holds %d copies of the key, want 2: %s", n, rec.Body)
	}
	if n := keyCount(strings.ReplaceAll(rec.Body.String(), apiKey, "[REDACTED]")); n != 1 {
		t.Errorf("after redacting the raw key: %d copies, want 1 (the escaped one)", n)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
