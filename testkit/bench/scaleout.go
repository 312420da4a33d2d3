package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 7: 1, 2 and 3 crawler processes on one run, sharing one key's
// quota. Processes 2 and 3 join with `crawler run --resume 1` as soon as
// the first has sent its first request.
func runScaleOut(ctx context.Context, e *env) (*outcome, error) {
	d := e.size.scaleT
	out := &outcome{setup: fmt.Sprintf("crawler binaries as child processes on one run and one key: sandbox bucket R = %g/s, burst %d; each process with the job of workload 1 (%d workers, ceiling 1.5 R, its own AIMD); processes 2 and 3 join with `crawler run --resume 1 job.yaml` at the first request; %s each, counted from the first request; a fresh sandbox and database each.",
		quotaR, quotaB, quotaWorkers, d)}
	dir, err := os.MkdirTemp("", "bench-scaleout-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	var dupDetail []string
	dupTotal := 0
	for n := 1; n <= 3; n++ {
		r, err := e.scaleRun(ctx, dir, n, d, 1.5*quotaR)
		if err != nil {
			return out, fmt.Errorf("%d processes: %w", n, err)
		}
		out.figures = append(out.figures, Figure{
			Name:  fmt.Sprintf("total billable / allowed by the bucket, %d process(es)", n),
			Value: float64(r.w.ok) / r.allowed,
			Detail: fmt.Sprintf("%d billable 2xx of %.0f allowed in %.0f s; %d 429s in %d requests",
				r.w.ok, r.allowed, r.w.seconds(), r.w.limited, r.w.requests),
			Why: fmt.Sprintf("each process runs its own rate control: it measures the quota from its own successes, a share of the whole, and the 429 of one pauses only its own workers (%d pauses with no 2xx at all at the upstream, costing %.0f requests of quota).",
				r.pauses, r.lost),
		})
		dupTotal += len(r.dups)
		s := fmt.Sprintf("%d process(es): %d of %d distinct pages twice", n, len(r.dups), r.distinct)
		if len(r.dups) > 0 {
			s += " (" + strings.Join(r.dups[:min(3, len(r.dups))], ", ") + ")"
		}
		dupDetail = append(dupDetail, s)
	}
	out.figures = append(out.figures, Figure{
		Name: "pages fetched twice (1, 2 and 3 processes)", Value: float64(dupTotal), Aim: exactly(0),
		Detail: strings.Join(dupDetail, "; "),
		Why:    "processes lease tasks with FOR UPDATE SKIP LOCKED and commit a page with a fencing token: a task is worked by one process at a time.",
	})
	return out, nil
}

type scaleResult struct {
	w    window
	late window // after the first autoWarm
	// statements is what sharing the quota cost in database statements,
	// all processes together (crawl.rate_members.statements).
	statements int64
	allowed    float64
	pauses     int
	lost       float64
	dups       []string
	distinct   int
}

// scaleRun runs n processes with the client ceiling rate (0: none).
func (e *env) scaleRun(ctx context.Context, dir string, n int, d time.Duration, rate float64) (*scaleResult, error) {
	up, err := newUpstream(sandbox.Config{Rate: quotaR, Burst: quotaB}, true)
	if err != nil {
		return nil, err
	}
	defer up.close()
	dsn, err := e.freshDB(ctx, "scaleout")
	if err != nil {
		return nil, err
	}
	job, err := jobSpec{name: "bench-scaleout", baseURL: up.url, rate: rate, burst: quotaB, workers: quotaWorkers,
		maxRetries: 20, profiles: bigAccounts("sco", quotaSeeds, 1_000_000), followersOnly: true}.write(dir)
	if err != nil {
		return nil, err
	}
	first, err := e.startCrawler(ctx, dsn, "run", job)
	if err != nil {
		return nil, err
	}
	procs := []*child{first}
	defer func() {
		for _, p := range procs {
			p.signal(syscall.SIGKILL)
			p.Wait()
		}
	}()
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	t0, err := up.firstArrival(fctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("no request from the first process: %v: %s", err, first.output())
	}
	for range n - 1 {
		p, err := e.startCrawler(ctx, dsn, "run", "--resume", "1", job)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	sleepUntil(ctx, t0.Add(d))
	for _, p := range procs {
		p.signal(syscall.SIGINT)
	}
	for i, p := range procs {
		// 0 or 3: the run's end or a stop (a joiner still starting, from
		// its connection to its first lease, stops too: the crawler exits
		// 3). A joiner the signal finds still in the Go runtime's start,
		// before the crawler's handler (a loaded machine, a short smoke
		// window), dies of the default SIGINT having done nothing: -2.
		code := p.waitTimeout(time.Minute)
		if code != 3 && code != 0 && (i == 0 || code != -int(syscall.SIGINT)) {
			return nil, fmt.Errorf("process %d exit %d: %s", i+1, code, p.output())
		}
	}
	arr := up.sb.Arrivals(apiKey)
	r := &scaleResult{w: countWindow(arr, t0, t0.Add(d)), late: autoLate(arr, t0, t0.Add(d)), allowed: quotaR*d.Seconds() + quotaB}
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		err = conn.QueryRow(ctx, `SELECT coalesce(sum(statements), 0) FROM crawl.rate_members`).Scan(&r.statements)
		conn.Close(ctx)
		if err != nil {
			return nil, fmt.Errorf("statements of the shared quota: %w", err)
		}
	}
	r.pauses, r.lost = idleLoss(arr, t0, t0.Add(d), quotaR, quotaB)
	r.dups, r.distinct = up.duplicates()
	return r, nil
}
