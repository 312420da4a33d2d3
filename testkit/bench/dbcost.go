package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 11: latency hiding at a short latency, where the database's share
// of a page shows: every answer takes 50 ms, 16 workers walk 100 follower
// lists. Besides the rate achieved over W / latency it counts what the
// crawler sends to PostgreSQL per page (statements and round trips, from a
// pgx tracer on the run's pool) and the CPU the server spends per 1000
// pages (its processes' utime + stime, when the cluster is the harness's
// own).
const shortLatency = 50 * time.Millisecond

func runDBCost(ctx context.Context, e *env) (*outcome, error) {
	const w, lists = 16, 100
	d := e.size.latencyT
	warm := min(2*time.Second, d/4)
	out := &outcome{setup: fmt.Sprintf("sandbox latency %s on every request, no quota; %d workers, no client ceiling; %d seed accounts of 1,000,000 followers; pipeline in-process; %s, the first %s not counted; statements counted by a pgx tracer on the run's pool, PostgreSQL CPU from /proc of the server's processes when it runs on this machine.",
		shortLatency, w, lists, d, warm)}
	up, err := newUpstream(sandbox.Config{Faults: sandbox.Faults{Latency: shortLatency}}, false)
	if err != nil {
		return out, err
	}
	defer up.close()
	tr := &countingTracer{}
	p, err := e.startInProcessTraced(ctx, "dbcost", jobSpec{
		name: "bench-dbcost", baseURL: up.url, workers: w,
		profiles: bigAccounts("dbc", lists, 1_000_000), followersOnly: true,
	}, tr)
	if err != nil {
		return out, err
	}
	defer p.close()
	var cpu0, cpu1 time.Duration
	var stmts0, trips0, pages0 int64
	cpuOK := true
	t0, _, err := p.runFor(ctx, up, d, func(ctx context.Context, t0 time.Time) {
		if !sleepUntil(ctx, t0.Add(warm)) {
			return
		}
		// The snapshot outlives the run's window: on a loaded machine
		// its queries and /proc scan can last past t0 + d (a smoke's
		// 1.5 s), and the figure they start was then lost.
		ctx = context.WithoutCancel(ctx)
		stmts0, trips0 = tr.statements.Load(), tr.roundTrips.Load()
		pages0 = committedPages(ctx, p.pool, p.runID)
		var cerr error
		if cpu0, cerr = e.serverCPU(ctx); cerr != nil {
			cpuOK = false
		}
	})
	if err != nil {
		return out, err
	}
	// The run ended at t0 + d: what it sent after the warm-up, over the
	// pages it committed meanwhile.
	stmts, trips := tr.statements.Load()-stmts0, tr.roundTrips.Load()-trips0
	pages := committedPages(ctx, p.pool, p.runID) - pages0
	if cpuOK {
		cpu1, err = e.serverCPU(ctx)
		cpuOK = err == nil
	}
	f, _, _, _ := latencyFigure(up.sb.Arrivals(apiKey), t0.Add(warm), t0.Add(d), w, shortLatency, 0.93)
	f.Detail += limitMoves(ctx, p.pool, p.runID)
	f.Why = "a worker's cycle is the latency plus its own work on the page: decoding, then writing the page's commit batch, whose results are read while the next page is fetched (the round trip and PostgreSQL's work on the upserts are hidden behind the latency); the credit reservations are asked for in the background, a block ahead."
	out.figures = append(out.figures, f)
	if pages > 0 {
		out.figures = append(out.figures,
			Figure{Name: "database statements per page", Value: float64(stmts) / float64(pages),
				Detail: fmt.Sprintf("%d statements in %d round trips for %d pages committed after the warm-up", stmts, trips, pages)},
			Figure{Name: "database round trips per page", Value: float64(trips) / float64(pages),
				Detail: fmt.Sprintf("%d round trips (a pgx batch is one) for %d pages", trips, pages)})
		if cpuOK {
			out.figures = append(out.figures, Figure{Name: "PostgreSQL CPU per 1000 pages", Value: (cpu1 - cpu0).Seconds() * 1000 / float64(pages), Unit: "s",
				Detail: fmt.Sprintf("%.2f s of CPU (utime + stime of the cluster's processes) for %d pages", (cpu1 - cpu0).Seconds(), pages)})
		}
	}
	return out, nil
}

// committedPages is the pages the run's tasks recorded.
func committedPages(ctx context.Context, pool *pgxpool.Pool, runID int64) int64 {
	var n int64
	_ = pool.QueryRow(context.WithoutCancel(ctx), `SELECT coalesce(sum(pages), 0) FROM crawl.tasks WHERE run_id = $1`, runID).Scan(&n)
	return n
}

// countingTracer counts what a pool sends: every statement, and the round
// trips (a query alone, or a whole batch).
type countingTracer struct {
	statements, roundTrips atomic.Int64
}

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.statements.Add(1)
	c.roundTrips.Add(1)
	return ctx
}

func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *countingTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *countingTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.statements.Add(1)
}

func (c *countingTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// startInProcessTraced is startInProcess with tr on the run's pool.
func (e *env) startInProcessTraced(ctx context.Context, label string, spec jobSpec, tr *countingTracer) (*inProcess, error) {
	p, err := e.startInProcess(ctx, label, spec)
	if err != nil {
		return nil, err
	}
	cfg := p.pool.Config()
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		p.close()
		return nil, err
	}
	p.pool.Close()
	p.pool = pool
	return p, nil
}

// serverCPU is the CPU time of the PostgreSQL server's processes (the
// postmaster, found as the parent of a backend, and its children) from
// /proc; an error when the server runs elsewhere or /proc cannot tell.
func (e *env) serverCPU(ctx context.Context) (time.Duration, error) {
	var backend int
	if err := e.admin.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, err
	}
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(backend), "stat"))
	if err != nil {
		return 0, fmt.Errorf("server not on this machine: %w", err)
	}
	f := statFields(string(st))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat unreadable", backend)
	}
	pm, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, err
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	const hz = 100 // USER_HZ on Linux
	var ticks int64
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		f := statFields(string(st))
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		if pid != pm && ppid != pm {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		stt, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += ut + stt
	}
	if ticks == 0 {
		return 0, fmt.Errorf("no process of the cluster found in /proc")
	}
	return time.Duration(ticks) * time.Second / hz, nil
}

// statFields are the fields of a /proc/<pid>/stat line after the command
// (which may hold spaces, in parentheses): state, ppid, ... utime is [11],
// stime [12].
func statFields(s string) []string {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
