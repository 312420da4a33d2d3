package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 6: requests bought for nothing. A clean run of a job whose page
// count is known from the sandbox's rules, then runs killed with SIGKILL
// when the sandbox sees their n-th request (n drawn with a fixed seed) and
// resumed with `crawler run --resume 1`: the billable requests beyond the
// clean run's, per kill.
const (
	wasteWorkers = 4
	wasteSeed    = 2026
)

func runWaste(ctx context.Context, e *env) (*outcome, error) {
	seeds := e.size.wasteSeeds
	need := 0
	for _, s := range seeds {
		need += pagesNeeded(s)
	}
	out := &outcome{setup: fmt.Sprintf("the crawler binary as a child process, %d workers, lease_timeout 1s; seeds %s with followers and following walked to the end: %d pages by the sandbox's rules (a list of N costs max(1, ⌈N/50⌉)). "+
		"A clean run, then %d runs killed (SIGKILL) when the sandbox sees request n (n uniform in 1..%d, seed %d) and resumed with `crawler run --resume 1 job.yaml`; a fresh sandbox and database each.",
		wasteWorkers, strings.Join(seeds, ", "), need, e.size.wasteKills, need, wasteSeed)}
	dir, err := os.MkdirTemp("", "bench-waste-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)

	clean, err := e.wasteRun(ctx, dir, seeds, 0)
	if err != nil {
		return out, fmt.Errorf("clean run: %w", err)
	}
	out.figures = append(out.figures, Figure{
		Name: "billable requests / distinct pages needed, clean run", Value: float64(clean.billable) / float64(need), Text: fmt.Sprintf("%.3f", float64(clean.billable)/float64(need)),
		Aim:    exactly(1),
		Detail: fmt.Sprintf("%d billable, %d pages needed, %d distinct requests answered 200, %d answered 200 twice", clean.billable, need, clean.distinct, clean.dups),
		Why:    "every page commits with its cursor in one transaction, and a task is leased by one worker at a time.",
	})

	rng := rand.New(rand.NewPCG(wasteSeed, wasteSeed))
	var extras []string
	total, worst := int64(0), int64(0)
	for range e.size.wasteKills {
		at := 1 + rng.Int64N(int64(need))
		r, err := e.wasteRun(ctx, dir, seeds, at)
		if err != nil {
			return out, fmt.Errorf("kill at request %d: %w", at, err)
		}
		extra := r.billable - int64(need)
		total += extra
		worst = max(worst, extra)
		extras = append(extras, fmt.Sprintf("%d->%+d", at, extra))
	}
	detail := fmt.Sprintf("kill at request n -> extra billable: %s", strings.Join(extras, ", "))
	why := fmt.Sprintf("a killed process's in-flight requests were answered (and billed) but never committed; their tasks are taken over when the %s lease expires and those pages are bought again: at most one per worker. A worker's next request leaves while its page's commit is read, so at a kill most workers have one in flight.", "1s")
	out.figures = append(out.figures,
		Figure{Name: "extra billable requests per kill -9, mean", Value: float64(total) / float64(e.size.wasteKills), Detail: detail, Why: why},
		Figure{Name: "extra billable requests per kill -9, max", Value: float64(worst),
			Aim: Aim{Op: "<=", Bound: wasteWorkers, Text: fmt.Sprintf("≤ workers (%d)", wasteWorkers)}, Detail: detail, Why: why},
	)
	return out, nil
}

type wasteResult struct {
	billable int64
	distinct int
	dups     int
}

// wasteRun runs the job to its end; with killAt > 0, the first process is
// killed when request killAt arrives and a second one resumes the run.
func (e *env) wasteRun(ctx context.Context, dir string, seeds []string, killAt int64) (*wasteResult, error) {
	up, err := newUpstream(sandbox.Config{}, true)
	if err != nil {
		return nil, err
	}
	defer up.close()
	dsn, err := e.freshDB(ctx, "waste")
	if err != nil {
		return nil, err
	}
	job, err := jobSpec{name: "bench-waste", baseURL: up.url, workers: wasteWorkers, maxRetries: 2,
		leaseTimeout: time.Second, profiles: seeds}.write(dir)
	if err != nil {
		return nil, err
	}
	var victim atomic.Pointer[child]
	if killAt > 0 {
		up.setTrigger(func(n int64) {
			if n == killAt {
				if c := victim.Load(); c != nil {
					c.signal(syscall.SIGKILL)
				}
			}
		})
	}
	c, err := e.startCrawler(ctx, dsn, "run", job)
	if err != nil {
		return nil, err
	}
	victim.Store(c)
	code := c.waitTimeout(5 * time.Minute)
	if killAt == 0 && code != 0 {
		return nil, fmt.Errorf("exit %d: %s", code, c.output())
	}
	if killAt > 0 {
		if code != -int(syscall.SIGKILL) {
			return nil, fmt.Errorf("exit %d, want SIGKILL: %s", code, c.output())
		}
		up.setTrigger(nil)
		r, err := e.startCrawler(ctx, dsn, "run", "--resume", "1", job)
		if err != nil {
			return nil, err
		}
		if code := r.waitTimeout(5 * time.Minute); code != 0 {
			return nil, fmt.Errorf("resume exit %d: %s", code, r.output())
		}
	}
	dups, distinct := up.duplicates()
	return &wasteResult{billable: up.sb.Usage(apiKey).Billable, distinct: distinct, dups: len(dups)}, nil
}

var countTokenRe = regexp.MustCompile(`^([fg])(\d{1,15})$`)

// pagesNeeded is what a profile seed costs with followers and following
// walked to the end: the profile, and max(1, ⌈N/50⌉) per list.
func pagesNeeded(handle string) int {
	f, g := 0, 0
	for _, tok := range strings.Split(handle, "_") {
		if m := countTokenRe.FindStringSubmatch(tok); m != nil {
			n, _ := strconv.Atoi(m[2])
			if m[1] == "f" {
				f = n
			} else {
				g = n
			}
		}
	}
	pages := func(n int) int { return max(1, (n+49)/50) }
	return 1 + pages(f) + pages(g)
}
