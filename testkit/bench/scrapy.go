package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 20: the peer, Scrapy, with its defaults (16 requests at once,
// 8 per host) and with AutoThrottle (which aims at 1 request in flight per
// host), on the saturating upstream of workload 18 and on the quota of
// workload 17's first case (3 s at 20/s), each figure its throughput over
// the limit measured in the same run; the crawler's own figures on the
// same upstreams are workloads 18 and 17's. Scrapy is Debian's
// python3-scrapy (apt-get install python3-scrapy; PyPI is not needed); the
// workload reports why when it is missing.

//go:embed scrapy_spider.py
var scrapySpider string

// scrapyPython is the interpreter Debian's python3-scrapy is for.
const scrapyPython = "/usr/bin/python3"

// scrapyMissing begins the workload's error when Scrapy is not installed.
const scrapyMissing = "scrapy unavailable"

func runScrapy(ctx context.Context, e *env) (*outcome, error) {
	k, d := e.size.knee, e.size.scrapyT
	out := &outcome{setup: fmt.Sprintf("Scrapy (Debian's python3-scrapy, %s) walking %d follower lists page after page, a 429 or 5xx asked again; with its defaults, and with AUTOTHROTTLE_ENABLED; %s each, (a) on workload 18's upstream (%d servers first come first served, answers in %s ± a fifth, no quota), (b) on a quota of %g/s with answers in %s ± a third.",
		scrapyPython, k.lists, d, k.servers, k.service, issueRate, e.size.issueLatency)}
	dir, err := os.MkdirTemp("", "bench-scrapy-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	spider := filepath.Join(dir, "spider.py")
	if err := os.WriteFile(spider, []byte(scrapySpider), 0o600); err != nil {
		return out, err
	}
	// Every upstream is up before the first crawl: an upstream waits idle
	// until its crawl, and each crawl's window begins at its upstream's
	// first request.
	modes := []string{"defaults", "autothrottle"}
	var ups []*upstream
	defer func() {
		for _, up := range ups {
			up.close()
		}
	}()
	var gates []*serverGate
	for range modes {
		up, gate, err := kneeUpstream(k.servers, k.service)
		if err != nil {
			return out, err
		}
		ups, gates = append(ups, up), append(gates, gate)
	}
	lat := e.size.issueLatency
	jitter := 2 * lat / 3
	for range modes {
		up, err := newUpstream(sandbox.Config{Rate: issueRate, Burst: quotaB, Faults: sandbox.Faults{Latency: lat - jitter/2, LatencyJitter: jitter}}, false)
		if err != nil {
			return out, err
		}
		ups = append(ups, up)
	}
	res, err := runSpiders(ctx, spider, ups, k.lists, d, append(modes, modes...), e.cfg.Smoke)
	if err != nil {
		if errors.Is(err, errScrapyMissing) {
			out.setup += " Scrapy is not installed here (apt-get install python3-scrapy): nothing measured."
		}
		return out, err
	}
	out.setup = strings.Replace(out.setup, scrapyPython, scrapyPython+", Scrapy "+res.Version, 1)
	for i, mode := range modes {
		r, t0 := res.Runs[i], res.t0[i]
		from := t0.Add(min(k.warm, d/3))
		f := figuresOf(gates[i].served(from, t0.Add(d)), t0.Add(d).Sub(from).Seconds())
		knee := float64(k.servers) / f.meanService.Seconds()
		out.figures = append(out.figures, Figure{
			Name: "Scrapy " + mode + ": throughput / the knee's (workload 18's upstream)", Value: f.perSecond / knee,
			Detail: fmt.Sprintf("%.2f answers/s after the first %s, knee %d servers / %s = %.1f/s; median answer time %s; %d pages in all",
				f.perSecond, from.Sub(t0), k.servers, f.meanService.Round(time.Millisecond), knee, f.median.Round(time.Millisecond), r.Pages),
			Why: scrapyWhy(mode, k.service),
		})
	}
	for i, mode := range modes {
		j := len(modes) + i
		r, t0 := res.Runs[j], res.t0[j]
		w := countWindow(ups[j].sb.Arrivals(apiKey), t0, t0.Add(d))
		allowed := issueRate*d.Seconds() + quotaB
		out.figures = append(out.figures, Figure{
			Name: fmt.Sprintf("Scrapy %s: fraction of the allowed rate (%s at %g/s)", mode, lat, issueRate), Value: float64(w.ok) / allowed,
			Detail: fmt.Sprintf("%d billable 2xx of %.0f allowed (R·T + B, T = %s); %d 429s", w.ok, allowed, d, r.Throttled),
			Why:    scrapyWhy(mode, lat),
		})
	}
	return out, nil
}

func scrapyWhy(mode string, lat time.Duration) string {
	if mode == "autothrottle" {
		return fmt.Sprintf("AutoThrottle sets the delay between requests to a host at the answer time over AUTOTHROTTLE_TARGET_CONCURRENCY (1.0): about one request in flight, %.2f/s at %s.", 1/lat.Seconds(), lat)
	}
	return fmt.Sprintf("Scrapy's defaults keep at most 8 requests in flight per host (CONCURRENT_REQUESTS_PER_DOMAIN): %.1f/s at %s, whatever the upstream admits.", 8/lat.Seconds(), lat)
}

// spiderRun is what the spider prints of a crawl.
type spiderRun struct {
	Pages     int `json:"pages"`
	Throttled int `json:"throttled"`
	Errors    int `json:"errors"`
}

// spiderResult is what the spider prints on its last line, and each
// crawl's first request's time.
type spiderResult struct {
	Version string      `json:"version"`
	Runs    []spiderRun `json:"runs"`
	t0      []time.Time
}

// errScrapyMissing: the interpreter or Scrapy is not installed.
var errScrapyMissing = errors.New(scrapyMissing)

// runSpiders runs the crawls of ups and modes (see runSpider) one after
// the other: in smoke mode all in one Scrapy process (an interpreter and
// Scrapy's imports cost a CPU-second or two each time, most of the
// smoke's), else each in a process of its own, as first measured.
func runSpiders(ctx context.Context, spider string, ups []*upstream, lists int, d time.Duration, modes []string, smoke bool) (*spiderResult, error) {
	if smoke {
		return runSpider(ctx, spider, ups, lists, d, modes)
	}
	all := &spiderResult{}
	for i := range ups {
		res, err := runSpider(ctx, spider, ups[i:i+1], lists, d, modes[i:i+1])
		if err != nil {
			return nil, err
		}
		all.Version = res.Version
		all.Runs, all.t0 = append(all.Runs, res.Runs...), append(all.t0, res.t0...)
	}
	return all, nil
}

// runSpider runs the spider once, crawling ups[i] with modes[i] for d
// each, one after the other, and returns its counts and each crawl's
// first request's time.
func runSpider(ctx context.Context, spider string, ups []*upstream, lists int, d time.Duration, modes []string) (*spiderResult, error) {
	args := []string{spider, apiKey, fmt.Sprint(lists), fmt.Sprint(int(d.Seconds()))}
	for i, up := range ups {
		args = append(args, up.url, modes[i])
	}
	cmd := exec.CommandContext(ctx, scrapyPython, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 || errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: %v: %s", errScrapyMissing, scrapyPython, err, clipOutput(stderr.String()))
		}
		return nil, fmt.Errorf("scrapy: %v: %s", err, clipOutput(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var res spiderResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return nil, fmt.Errorf("scrapy: %v: %s", err, clipOutput(stdout.String()))
	}
	if len(res.Runs) != len(ups) {
		return nil, fmt.Errorf("scrapy: %d crawls reported, want %d: %s", len(res.Runs), len(ups), clipOutput(stdout.String()))
	}
	for i, up := range ups {
		arr := up.sb.Arrivals(apiKey)
		if len(arr) == 0 {
			return nil, fmt.Errorf("scrapy %s: no request reached the upstream: %s", modes[i], clipOutput(stderr.String()))
		}
		res.t0 = append(res.t0, arr[0].Time)
	}
	return &res, nil
}

func clipOutput(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
