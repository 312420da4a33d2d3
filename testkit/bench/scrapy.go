package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
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
	if v, err := exec.CommandContext(ctx, scrapyPython, "-c", "import scrapy; print(scrapy.__version__)").Output(); err != nil {
		out.setup += " Scrapy is not installed here (apt-get install python3-scrapy): nothing measured."
		return out, fmt.Errorf("%s: %s -c 'import scrapy': %v", scrapyMissing, scrapyPython, err)
	} else {
		out.setup = strings.Replace(out.setup, scrapyPython, scrapyPython+", Scrapy "+strings.TrimSpace(string(v)), 1)
	}
	dir, err := os.MkdirTemp("", "bench-scrapy-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	spider := filepath.Join(dir, "spider.py")
	if err := os.WriteFile(spider, []byte(scrapySpider), 0o600); err != nil {
		return out, err
	}
	for _, mode := range []string{"defaults", "autothrottle"} {
		up, gate, err := kneeUpstream(k.servers, k.service)
		if err != nil {
			return out, err
		}
		res, t0, err := runSpider(ctx, spider, up, k.lists, d, mode)
		up.close()
		if err != nil {
			return out, err
		}
		from := t0.Add(min(k.warm, d/3))
		f := figuresOf(gate.served(from, t0.Add(d)), t0.Add(d).Sub(from).Seconds())
		knee := float64(k.servers) / f.meanService.Seconds()
		out.figures = append(out.figures, Figure{
			Name: "Scrapy " + mode + ": throughput / the knee's (workload 18's upstream)", Value: f.perSecond / knee,
			Detail: fmt.Sprintf("%.2f answers/s after the first %s, knee %d servers / %s = %.1f/s; median answer time %s; %d pages in all",
				f.perSecond, from.Sub(t0), k.servers, f.meanService.Round(time.Millisecond), knee, f.median.Round(time.Millisecond), res.Pages),
			Why: scrapyWhy(mode, k.service),
		})
	}
	for _, mode := range []string{"defaults", "autothrottle"} {
		lat := e.size.issueLatency
		jitter := 2 * lat / 3
		up, err := newUpstream(sandbox.Config{Rate: issueRate, Burst: quotaB, Faults: sandbox.Faults{Latency: lat - jitter/2, LatencyJitter: jitter}}, false)
		if err != nil {
			return out, err
		}
		res, t0, err := runSpider(ctx, spider, up, k.lists, d, mode)
		arr := up.sb.Arrivals(apiKey)
		up.close()
		if err != nil {
			return out, err
		}
		w := countWindow(arr, t0, t0.Add(d))
		allowed := issueRate*d.Seconds() + quotaB
		out.figures = append(out.figures, Figure{
			Name: fmt.Sprintf("Scrapy %s: fraction of the allowed rate (%s at %g/s)", mode, lat, issueRate), Value: float64(w.ok) / allowed,
			Detail: fmt.Sprintf("%d billable 2xx of %.0f allowed (R·T + B, T = %s); %d 429s", w.ok, allowed, d, res.Throttled),
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

// spiderResult is what the spider prints on its last line.
type spiderResult struct {
	Pages     int `json:"pages"`
	Throttled int `json:"throttled"`
	Errors    int `json:"errors"`
}

// runSpider runs the spider against up for d and returns its counts and
// its first request's time.
func runSpider(ctx context.Context, spider string, up *upstream, lists int, d time.Duration, mode string) (*spiderResult, time.Time, error) {
	cmd := exec.CommandContext(ctx, scrapyPython, spider, up.url, apiKey, fmt.Sprint(lists), fmt.Sprint(int(d.Seconds())), mode)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, time.Time{}, fmt.Errorf("scrapy %s: %v: %s", mode, err, clipOutput(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var res spiderResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return nil, time.Time{}, fmt.Errorf("scrapy %s: %v: %s", mode, err, clipOutput(stdout.String()))
	}
	arr := up.sb.Arrivals(apiKey)
	if len(arr) == 0 {
		return nil, time.Time{}, fmt.Errorf("scrapy %s: no request reached the upstream: %s", mode, clipOutput(stderr.String()))
	}
	return &res, arr[0].Time, nil
}

func clipOutput(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
