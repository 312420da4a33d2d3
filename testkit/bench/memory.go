package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 5: one account with a huge follower list, crawled to its end by
// the crawler binary, every follower becoming a profile task (the frontier
// grows by a row per follower). The account is seeded by its secUid and
// follower_profiles is the only edge, so the profiles found add no lists of
// their own. One worker: it walks the list (depth 0, leased first) to its
// end before any profile; more workers would fetch profiles meanwhile and
// slow the list down on this 2-core machine without changing what is
// measured (a page in flight per worker). The crawler's peak RSS is read
// from /proc as the committed followers pass each checkpoint.
const (
	memoryWorkers = 1
	memoryMaxMB   = 150
	memoryFlat    = 1.25 // the last checkpoint's peak over the first's
)

func runMemory(ctx context.Context, e *env) (*outcome, error) {
	marks := e.size.memFollowers
	n := marks[len(marks)-1]
	out := &outcome{setup: fmt.Sprintf("the crawler binary (`crawler run`) as a child process, %d worker; one account with %s followers seeded by its secUid, its followers list walked to the end, each follower becoming a profile task one hop deeper (follower_profiles, the only edge), so the frontier gains a row per follower; sandbox served by the harness. VmHWM of the child read from /proc/<pid>/status when the committed followers reach each checkpoint; then SIGINT.",
		memoryWorkers, thousands(int64(n)))}
	up, err := newUpstream(sandbox.Config{}, false)
	if err != nil {
		return out, err
	}
	defer up.close()
	dsn, err := e.freshDB(ctx, "memory")
	if err != nil {
		return out, err
	}
	dir, err := os.MkdirTemp("", "bench-memory-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	job, err := jobSpec{name: "bench-memory", baseURL: up.url, workers: memoryWorkers, maxPages: allPages,
		secUIDs: []string{secUIDOf(fmt.Sprintf("mem_f%d_g0", n))}, expand: "{follower_profiles: {}}"}.write(dir)
	if err != nil {
		return out, err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return out, err
	}
	defer pool.Close()

	c, err := e.startCrawler(ctx, dsn, "run", job)
	if err != nil {
		return out, err
	}
	defer func() {
		c.signal(syscall.SIGKILL)
		c.Wait()
	}()
	begin := time.Now()
	type mark struct {
		followers int64
		hwm       int64
		at        time.Duration
	}
	var got []mark
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(got) < len(marks) {
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-c.Done():
			return out, fmt.Errorf("crawler exited (code %d) at %d of %d checkpoints: %s", c.Wait(), len(got), len(marks), c.output())
		case <-tick.C:
		}
		var items int64
		err := pool.QueryRow(ctx, `SELECT items FROM crawl.tasks WHERE id = 1`).Scan(&items)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return out, err
		}
		for len(got) < len(marks) && items >= int64(marks[len(got)]) {
			hwm, err := vmHWM(c.Pid())
			if err != nil {
				return out, err
			}
			got = append(got, mark{followers: items, hwm: hwm, at: time.Since(begin)})
			e.log.Info("memory checkpoint", "followers", items, "vmhwm_mb", hwm>>20, "after", time.Since(begin).Round(time.Millisecond))
		}
	}
	// The whole-process peak: VmHWM polled until the exit. (The exited
	// child's ru_maxrss can't be used: Linux folds the high-water mark of
	// the address space the child had before exec into it, and Go starts
	// children vfork-style in the harness's own address space, so it reads
	// the harness's RSS.)
	peak, err := vmHWM(c.Pid())
	if err != nil {
		return out, err
	}
	c.signal(syscall.SIGINT)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for exited := false; !exited; {
		select {
		case <-c.Done():
			exited = true
		case <-poll.C:
			if hwm, err := vmHWM(c.Pid()); err == nil {
				peak = max(peak, hwm)
			}
		case <-deadline.C:
			exited = true // waitTimeout below kills it
		}
	}
	if code := c.waitTimeout(time.Minute); code != 3 && code != 0 {
		return out, fmt.Errorf("crawler exit %d after SIGINT: %s", code, c.output())
	}
	var rows, bytes, profiles int64
	err = pool.QueryRow(ctx, `SELECT count(*), pg_total_relation_size('crawl.tasks'),
		count(*) FILTER (WHERE kind = 'shortvideo.profile' AND state = 'done') FROM crawl.tasks`).Scan(&rows, &bytes, &profiles)
	if err != nil {
		return out, err
	}
	for i, m := range got {
		out.figures = append(out.figures, Figure{
			Name: fmt.Sprintf("peak RSS at %s followers", thousands(int64(marks[i]))), Value: float64(m.hwm) / (1 << 20), Unit: "MB",
			Aim:    Aim{Op: "<=", Bound: memoryMaxMB, Text: fmt.Sprintf("≤ %d MB", memoryMaxMB)},
			Detail: fmt.Sprintf("VmHWM when %d followers were committed, %.1f s into the run", m.followers, m.at.Seconds()),
			Why:    "the crawler holds up to two pages per worker (one whose commit is read while the next is fetched), within the in-flight body budget; the frontier, the rows and the dedup live in PostgreSQL.",
		})
	}
	growth := float64(got[len(got)-1].hwm) / float64(got[0].hwm)
	out.figures = append(out.figures,
		Figure{
			Name: fmt.Sprintf("peak RSS growth, %s -> %s followers", thousands(int64(marks[0])), thousands(int64(n))), Value: growth, Unit: "x",
			Aim:    Aim{Op: "<=", Bound: memoryFlat, Text: fmt.Sprintf("flat (≤ %gx)", memoryFlat)},
			Detail: fmt.Sprintf("%.1f MB -> %.1f MB", float64(got[0].hwm)/(1<<20), float64(got[len(got)-1].hwm)/(1<<20)),
			Why:    "Go's heap grows to its GC target with the live set of in-flight pages; nothing grows with the list or the frontier.",
		},
		Figure{
			Name: "peak RSS of the whole process (to its exit after SIGINT)", Value: float64(peak) / (1 << 20), Unit: "MB",
			Aim:    Aim{Op: "<=", Bound: memoryMaxMB, Text: fmt.Sprintf("≤ %d MB", memoryMaxMB)},
			Detail: "VmHWM of the child polled every 20 ms until it exited: covers the start (migrations), the profiles fetched after the list ended and the wind-down after SIGINT, but for its last 20 ms",
		},
		Figure{Name: "frontier rows (crawl.tasks)", Value: float64(rows),
			Detail: fmt.Sprintf("the followers and following lists of the seed, and a profile task per follower (%d of them fetched by the SIGINT)", profiles)},
		Figure{Name: "frontier bytes per row", Value: float64(bytes) / float64(max(rows, 1)), Unit: "B",
			Detail: fmt.Sprintf("pg_total_relation_size('crawl.tasks') = %.1f MB (table, indexes, TOAST) / %d rows", float64(bytes)/(1<<20), rows)},
	)
	return out, nil
}
