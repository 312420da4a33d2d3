package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 21: thousands of requests in flight. A sandbox answering in
// 5 s ± a fifth with no quota, so that 2,000 lists walked at once are
// 2,000 requests in flight (400/s). (a) The client alone, as a process of
// its own (tools/benchload: one sources.Client with no settings, a
// goroutine per list): its memory, CPU and connections once the upstream
// sees 90% of the lists in flight. (b) `crawler run` as a child process
// with no limits.workers, on as many seed lists: its PostgreSQL
// connections, memory, CPU and the requests in flight it reaches (the
// runner keeps twice the client's limit of tasks in progress), averaged
// from when its limit's ramp is over.
const (
	inflightMaxMB   = 200
	inflightMaxConn = 10
)

// usage is what a child used over a window: the requests the upstream saw
// in flight (mean), the child's peak RSS and its CPU.
type usage struct {
	inFlight float64
	hwm      int64
	cores    float64
	from, to time.Time
	first    time.Time // the upstream's first request
	pgConns  int       // the most connections to the database, when watched
}

// watch polls the child and the upstream every 250 ms from when the
// upstream sees at least reach requests in flight, or, when settle is not
// 0, from when they stop growing (no new high, by 2%, for settle: the
// ramp of the child's limit is over), until d has passed since its first
// request or the child ends; pool, when set, counts the child's database
// connections.
func watch(ctx context.Context, c *child, up *upstream, reach int64, settle, d time.Duration, pool *pgxpool.Pool, db string) (*usage, error) {
	t0, err := up.firstArrival(ctx)
	if err != nil {
		return nil, err
	}
	u := &usage{first: t0}
	var cpu0, sum float64
	n := 0
	var high int64 // the most in flight so far, and when it was reached
	highAt := t0
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for now := time.Now(); now.Before(t0.Add(d)); now = time.Now() {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.Done():
			return nil, fmt.Errorf("the child exited (code %d): %s", c.Wait(), c.output())
		case <-tick.C:
		}
		active := up.active.Load()
		if pool != nil {
			var conns int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db).Scan(&conns); err == nil {
				u.pgConns = max(u.pgConns, conns)
			}
		}
		if u.from.IsZero() {
			if float64(active) > 1.02*float64(high) {
				high, highAt = active, now
			}
			if active < reach && (settle == 0 || now.Sub(highAt) < settle) {
				continue
			}
			u.from = now
			if cpu0, err = cpuSeconds(c.Pid()); err != nil {
				return nil, err
			}
		}
		sum += float64(active)
		n++
		u.to = now
	}
	if u.from.IsZero() || n == 0 {
		return u, fmt.Errorf("the upstream never saw %d requests in flight within %s (at most %d at the end)", reach, d, up.active.Load())
	}
	cpu1, err := cpuSeconds(c.Pid())
	if err != nil {
		return nil, err
	}
	u.inFlight, u.cores = sum/float64(n), (cpu1-cpu0)/u.to.Sub(u.from).Seconds()
	u.hwm, err = vmHWM(c.Pid())
	return u, err
}

func runInflight(ctx context.Context, e *env) (*outcome, error) {
	lists, d, inflightLatency := e.size.inflightLists, e.size.inflightT, e.size.inflightLatency
	out := &outcome{setup: fmt.Sprintf("sandbox answering in %s ± a fifth, no quota, %d lists walked at once; (a) tools/benchload, one sources.Client with no settings, a goroutine per list, as a child process; (b) `crawler run` as a child process, no limits.workers and no api.rate, the %d lists as secUid seeds; %s each from the first request. Memory (VmHWM), CPU (utime + stime) and the requests in flight the upstream sees read every 250 ms, from when it sees 90%% of the lists in flight, or (b) from when they stop growing (no new high, by 2%%, for two answer times: the limit's ramp, doubling from 16 each answer time, is over); connections counted by the upstream (open at once) and by pg_stat_activity.",
		inflightLatency, lists, lists, d)}
	jitter := 2 * inflightLatency / 5
	cfg := sandbox.Config{Faults: sandbox.Faults{Latency: inflightLatency - jitter/2, LatencyJitter: jitter}}

	// (a) The client alone.
	dir, err := os.MkdirTemp("", "bench-inflight-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	load := filepath.Join(dir, "benchload")
	if err := e.goBuild(ctx, load, "./tools/benchload"); err != nil {
		return out, err
	}
	up, err := newUpstream(cfg, false)
	if err != nil {
		return out, err
	}
	c, err := startChild(ctx, load, "", "-base-url", up.url, "-lists", fmt.Sprint(lists), "-seconds", fmt.Sprint(int(d.Seconds())+10))
	if err != nil {
		up.close()
		return out, err
	}
	u, werr := watch(ctx, c, up, int64(9*lists/10), 0, d, nil, "")
	c.signal(syscall.SIGTERM)
	c.waitTimeout(time.Minute)
	most, opened := up.connections()
	up.close()
	if werr != nil {
		return out, fmt.Errorf("client alone: %w", werr)
	}
	var res map[string]any
	_ = json.Unmarshal(bytes.TrimSpace([]byte(c.Output())), &res)
	detail := fmt.Sprintf("%.0f requests in flight on average at the upstream over %.0f s; client's limit %v-%v; %d connections open at once, %d opened in all",
		u.inFlight, u.to.Sub(u.from).Seconds(), res["limit_min"], res["limit_max"], most, opened)
	out.figures = append(out.figures,
		Figure{Name: fmt.Sprintf("the client alone: requests in flight reached, of %d lists", lists), Value: u.inFlight / float64(lists), Aim: atLeast(0.9), Detail: detail,
			Why: "the limit doubles each answer time from 8 while the answers keep their time; a list has one request out at a time, so the lists bound it."},
		Figure{Name: fmt.Sprintf("the client alone: peak RSS at %.0f requests in flight", u.inFlight), Value: float64(u.hwm) / (1 << 20), Unit: "MB",
			Aim: Aim{Op: "<=", Bound: inflightMaxMB, Text: fmt.Sprintf("≤ %d MB", inflightMaxMB)}, Detail: detail,
			Why: "per request in flight: a goroutine, a connection (HTTP/1.1 to the sandbox; bufio buffers) and, as it is read, a body within the in-flight body budget (8 MB)."},
		Figure{Name: fmt.Sprintf("the client alone: CPU at %.0f requests in flight (%.0f requests/s)", u.inFlight, u.inFlight/inflightLatency.Seconds()), Value: u.cores, Unit: "cores", Detail: detail},
		Figure{Name: "the client alone: connections open at once / requests in flight", Value: float64(most) / u.inFlight, Detail: detail,
			Why: "HTTP/1.1 holds a connection per request in flight; idle ones are kept up to the hard ceiling (4,096), so the limit's moves reuse them rather than open new ones. Over HTTP/2 (the real service, https) requests share connections."},
	)

	// (b) crawler run.
	up, err = newUpstream(cfg, false)
	if err != nil {
		return out, err
	}
	defer up.close()
	var seeds []string
	for i := range lists {
		seeds = append(seeds, secUIDOf(fmt.Sprintf("run%04d_f1000000_g0", i)))
	}
	dsn, err := e.freshDB(ctx, "inflight")
	if err != nil {
		return out, err
	}
	job, err := jobSpec{name: "bench-inflight", baseURL: up.url, secUIDs: seeds, followersOnly: true, maxPages: allPages}.write(dir)
	if err != nil {
		return out, err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return out, err
	}
	defer pool.Close()
	var db string
	if err := pool.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		return out, err
	}
	c, err = e.startCrawler(ctx, dsn, "run", "--live", "off", job)
	if err != nil {
		return out, err
	}
	u, werr = watch(ctx, c, up, int64(9*lists/10), 2*inflightLatency, d, pool, db)
	c.signal(syscall.SIGINT)
	c.waitTimeout(time.Minute)
	if werr != nil {
		return out, fmt.Errorf("crawler run: %w", werr)
	}
	most, _ = up.connections()
	detail = fmt.Sprintf("%.1f requests in flight on average at the upstream over %.0f s (from %.0f s after its first request); %d database connections at most (pg_stat_activity, the harness's own left out); %d upstream connections open at once",
		u.inFlight, u.to.Sub(u.from).Seconds(), u.from.Sub(u.first).Seconds(), u.pgConns, most)
	why := "the runner leases tasks in batches up to twice the client's limit; a request in flight holds no database connection (database.max_conns, default 10), and page commits are grouped."
	out.figures = append(out.figures,
		Figure{Name: fmt.Sprintf("crawler run: requests in flight reached, of %d lists", lists), Value: u.inFlight / float64(lists), Aim: atLeast(0.9), Detail: detail, Why: why},
		Figure{Name: fmt.Sprintf("crawler run: PostgreSQL connections at %.0f requests in flight", u.inFlight), Value: float64(u.pgConns),
			Aim: Aim{Op: "<=", Bound: inflightMaxConn, Text: fmt.Sprintf("≤ %d", inflightMaxConn)}, Detail: detail, Why: why},
		Figure{Name: fmt.Sprintf("crawler run: peak RSS at %.0f requests in flight", u.inFlight), Value: float64(u.hwm) / (1 << 20), Unit: "MB",
			Aim: Aim{Op: "<=", Bound: inflightMaxMB, Text: fmt.Sprintf("≤ %d MB", inflightMaxMB)}, Detail: detail, Why: why},
		Figure{Name: fmt.Sprintf("crawler run: CPU at %.0f requests in flight", u.inFlight), Value: u.cores, Unit: "cores", Detail: detail},
	)
	return out, nil
}

// goBuild builds the package pkg of the module into bin.
func (e *env) goBuild(ctx context.Context, bin, pkg string) error {
	dir, err := moduleDir(e.cfg.ModuleDir)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out.String())
	}
	return nil
}
