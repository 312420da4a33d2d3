package bench

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 3: every answer takes 200 ms and there is no quota. W workers
// can keep at most W requests in flight, so the limit is W / 0.2 s; the
// figure is the request rate achieved over it.
const upstreamLatency = 200 * time.Millisecond

func runLatency(ctx context.Context, e *env) (*outcome, error) {
	w, seeds := e.size.latencyWorkers, 2*e.size.latencyWorkers
	d := e.size.latencyT
	warm := min(2*time.Second, d/4)
	out := &outcome{setup: fmt.Sprintf("sandbox latency %s on every request, no quota; %d workers, no client ceiling; %d seed accounts of 1,000,000 followers (more lists than workers); pipeline in-process; %s, the first %s not counted.",
		upstreamLatency, w, seeds, d, warm)}
	up, err := newUpstream(sandbox.Config{Faults: sandbox.Faults{Latency: upstreamLatency}}, false)
	if err != nil {
		return out, err
	}
	defer up.close()
	p, err := e.startInProcess(ctx, "latency", jobSpec{
		name: "bench-latency", baseURL: up.url, workers: w,
		profiles: bigAccounts("lat", seeds, 1_000_000), followersOnly: true,
	})
	if err != nil {
		return out, err
	}
	defer p.close()
	t0, _, err := p.runFor(ctx, up, d, nil)
	if err != nil {
		return out, err
	}
	f, mean, median, overhead := latencyFigure(up.sb.Arrivals(apiKey), t0.Add(warm), t0.Add(d), w, upstreamLatency, 0.95)
	f.Detail += limitMoves(ctx, p.pool, p.runID)
	f.Why = fmt.Sprintf("a worker walks its list page by page, and between the answer to a page and the request for the next it spends %s on average (median %s): decoding the page and writing its commit batch (whose results are read while the next page is fetched: the server commits a batch it has whole even if the process dies, so a crash still loses at most the request in flight), the credit reservations being asked for in the background, a block ahead. Per worker that is %s / (%s + %s) = %.3f of the latency-bound rate.",
		mean.Round(100*time.Microsecond), median.Round(100*time.Microsecond), upstreamLatency, upstreamLatency, overhead.Round(100*time.Microsecond),
		upstreamLatency.Seconds()/(upstreamLatency+overhead).Seconds())
	out.figures = append(out.figures, f)
	return out, nil
}

// latencyFigure is the request rate w workers achieved between from and to
// against an upstream answering after latency, over the latency-bound rate
// W / latency, with the time between the answer to a list page and the
// request for the next (mean, median) and each worker's own time per page
// beyond the latency.
func latencyFigure(arr []sandbox.Arrival, from, to time.Time, w int, latency time.Duration, aim float64) (f Figure, mean, median, overhead time.Duration) {
	win := countWindow(arr, from, to)
	achieved := float64(win.requests) / win.seconds()
	ideal := float64(w) / latency.Seconds()
	// Each worker's cycle is the latency plus its own work on the page.
	overhead = time.Duration(float64(w)/achieved*float64(time.Second)) - latency
	mean, median = pageGaps(arr, from)
	return Figure{
		Name: fmt.Sprintf("achieved requests/s / (W / %g s), W = %d", latency.Seconds(), w), Value: achieved / ideal, Aim: atLeast(aim),
		Detail: fmt.Sprintf("%d requests in %.1f s = %.1f/s; W / latency = %.0f/s; between the answer to a page and the request for the next page of the same list: %s on average, median %s; %s per page beyond the latency",
			win.requests, win.seconds(), achieved, ideal, mean.Round(100*time.Microsecond), median.Round(100*time.Microsecond), overhead.Round(100*time.Microsecond)),
	}, mean, median, overhead
}

// limitMoves tells how the adaptive limit of requests in flight ended the
// run and how it moved, from the run's latest sample ("" without one): a
// limit under the workers costs the latency-bound rate its share.
func limitMoves(ctx context.Context, pool *pgxpool.Pool, runID int64) string {
	var limit *int
	var moves map[string]int64
	err := pool.QueryRow(context.WithoutCancel(ctx), `SELECT concurrency_limit, concurrency_moves FROM crawl.run_samples
		WHERE run_id = $1 AND concurrency_limit IS NOT NULL ORDER BY id DESC LIMIT 1`, runID).Scan(&limit, &moves)
	if err != nil || limit == nil {
		return ""
	}
	names := slices.Sorted(maps.Keys(moves))
	parts := make([]string, len(names))
	for i, m := range names {
		parts[i] = fmt.Sprintf("%s %d", m, moves[m])
	}
	return fmt.Sprintf("; the limit of requests in flight ended at %d (moves: %s)", *limit, strings.Join(parts, ", "))
}

// pageGaps is the time from the answer to a list page to the arrival of
// the request for the next page of the same list, over the lists' pages
// requested after from: mean and median.
func pageGaps(arr []sandbox.Arrival, from time.Time) (mean, median time.Duration) {
	byList := map[string][]sandbox.Arrival{}
	for _, a := range arr {
		if a.Status != http.StatusOK || !strings.HasSuffix(a.Endpoint, "/followers") {
			continue
		}
		q, err := url.ParseQuery(a.Query)
		if err != nil {
			continue
		}
		byList[q.Get("secUid")] = append(byList[q.Get("secUid")], a)
	}
	var gaps []time.Duration
	for _, l := range byList {
		slices.SortFunc(l, func(x, y sandbox.Arrival) int { return x.Time.Compare(y.Time) })
		for i := 1; i < len(l); i++ {
			if l[i-1].Answered.After(from) {
				gaps = append(gaps, l[i].Time.Sub(l[i-1].Answered))
			}
		}
	}
	if len(gaps) == 0 {
		return 0, 0
	}
	var sum time.Duration
	for _, g := range gaps {
		sum += g
	}
	slices.Sort(gaps)
	return sum / time.Duration(len(gaps)), gaps[len(gaps)/2]
}
