package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/netfault"
)

// Workload 9: upstream outages. The crawler binary runs a job whose page
// count is known; when the sandbox sees a third of its requests the
// upstream stops listening (connections refused) for a while, then listens
// again on the same address. What the outage cost: the exit code, failed
// tasks and the billable requests beyond the pages needed.
const outageWorkers = 4

func runOutage(ctx context.Context, e *env) (*outcome, error) {
	seeds := e.size.wasteSeeds
	need := 0
	for _, s := range seeds {
		need += pagesNeeded(s)
	}
	at := int64(need / 3)
	var names []string
	for _, d := range e.size.outages {
		names = append(names, d.String())
	}
	out := &outcome{setup: fmt.Sprintf("the crawler binary as a child process, %d workers, default api settings (max_retries 5, retry_max 30s: the longest probe interval, outage_window 10m); seeds %s with followers and following walked to the end: %d pages. "+
		"At request %d the upstream stops listening (connections refused) for %s, then listens again on the same address; a fresh sandbox and database each.",
		outageWorkers, strings.Join(seeds, ", "), need, at, strings.Join(names, " and "))}
	dir, err := os.MkdirTemp("", "bench-outage-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	for _, d := range e.size.outages {
		r, err := e.outageRun(ctx, dir, seeds, at, d)
		if err != nil {
			return out, fmt.Errorf("outage of %s: %w", d, err)
		}
		detail := fmt.Sprintf("exit %d, %d billable for %d pages, %d requests answered 200 twice, %d failed tasks; the run took %s%s with an outage of %s, %d failed probes",
			r.code, r.billable, need, r.dups, r.failed, r.took.Round(100*time.Millisecond), r.ended, d, r.probes)
		why := "connection-level failures close the client's outage gate: no worker sends, one probe goes on back-off, and the first answer reopens it; outage failures spend no retry."
		out.figures = append(out.figures,
			Figure{Name: fmt.Sprintf("extra billable requests, %s outage", d), Value: float64(r.billable - int64(need)), Aim: exactly(0), Detail: detail, Why: why},
			Figure{Name: fmt.Sprintf("failed tasks, %s outage", d), Value: float64(r.failed), Aim: exactly(0), Detail: detail, Why: why},
			Figure{Name: fmt.Sprintf("exit code, %s outage", d), Value: float64(r.code), Aim: exactly(0), Detail: detail, Why: why},
		)
	}
	return out, nil
}

type outageResult struct {
	code     int
	billable int64
	dups     int
	failed   int64
	probes   int // failed probes the crawler logged
	took     time.Duration
	ended    string // when the run ended before the upstream came back
}

// outageRun runs the job to its end with the upstream down for d from
// request at.
func (e *env) outageRun(ctx context.Context, dir string, seeds []string, at int64, d time.Duration) (*outageResult, error) {
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{apiKey}})
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	var n atomic.Int64
	var mu sync.Mutex
	seen := map[string]int{}
	var srv *netfault.Server
	var upErr error
	upped := make(chan struct{})
	srv, err = netfault.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == at {
			srv.Down()
			time.AfterFunc(d, func() {
				upErr = srv.Up()
				close(upped)
			})
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		sb.Handler().ServeHTTP(rec, r)
		if rec.status == http.StatusOK {
			mu.Lock()
			seen[r.URL.Path+"?"+r.URL.RawQuery]++
			mu.Unlock()
		}
	}))
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	dsn, err := e.freshDB(ctx, "outage")
	if err != nil {
		return nil, err
	}
	job, err := jobSpec{name: "bench-outage", baseURL: srv.URL + "/api", workers: outageWorkers, profiles: seeds}.write(dir)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	c, err := e.startCrawler(ctx, dsn, "run", job)
	if err != nil {
		return nil, err
	}
	r := &outageResult{code: c.waitTimeout(d + 5*time.Minute), took: time.Since(start)}
	select {
	case <-upped:
		if upErr != nil {
			return nil, upErr
		}
	default:
		r.ended = " (it ended during the outage)"
	}
	r.billable = sb.Usage(apiKey).Billable
	mu.Lock()
	for _, k := range seen {
		if k > 1 {
			r.dups++
		}
	}
	mu.Unlock()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM crawl.tasks WHERE state = 'failed'`).Scan(&r.failed); err != nil {
		return nil, err
	}
	r.probes = strings.Count(c.Output(), "upstream still unreachable")
	return r, nil
}
