package bench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/listwalk"
)

// jobSpec is a job file of a workload.
type jobSpec struct {
	name         string
	baseURL      string
	rate         float64 // api.rate, the client's ceiling (0: none)
	burst        int
	workers      int // limits.workers; 0: not set
	maxRetries   int
	leaseTimeout time.Duration
	profiles     []string
	// followersOnly expands profiles to their followers only, walked to the
	// end; otherwise the default expansion (followers and following) with
	// limits.max_pages 1000.
	followersOnly bool
	// secUIDs are seeds known by their secUid: their lists are seed tasks.
	secUIDs []string
	// expand, when set, is the expand section verbatim (YAML flow mapping),
	// and maxPages limits.max_pages.
	expand   string
	maxPages int
}

// allPages is a page limit no list of the workloads reaches.
const allPages = 1_000_000

func (s jobSpec) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\napi:\n  base_url: %s\n  key_env: CRAWLER_API_KEY\n", s.name, s.baseURL)
	if s.maxRetries > 0 {
		fmt.Fprintf(&b, "  max_retries: %d\n", s.maxRetries)
	}
	if s.rate > 0 {
		fmt.Fprintf(&b, "  rate: %g\n  burst: %d\n", s.rate, s.burst)
	}
	if s.leaseTimeout > 0 && s.leaseTimeout < sources.TimeoutDefault {
		// A lease must outlast a request (limits.lease_timeout >= api.timeout).
		fmt.Fprintf(&b, "  timeout: %s\n", s.leaseTimeout)
	}
	b.WriteString("limits:\n")
	if s.workers > 0 {
		fmt.Fprintf(&b, "  workers: %d\n", s.workers)
	}
	fmt.Fprintf(&b, "  max_pages: %d\n", cmp.Or(s.maxPages, 1000))
	if s.leaseTimeout > 0 {
		fmt.Fprintf(&b, "  lease_timeout: %s\n", s.leaseTimeout)
	}
	b.WriteString("seeds:\n  shortvideo:\n")
	if len(s.profiles) > 0 {
		fmt.Fprintf(&b, "    profiles: [%s]\n", strings.Join(s.profiles, ", "))
	}
	if len(s.secUIDs) > 0 {
		fmt.Fprintf(&b, "    sec_uids: [%s]\n", strings.Join(s.secUIDs, ", "))
	}
	switch {
	case s.expand != "":
		fmt.Fprintf(&b, "expand: %s\n", s.expand)
	case s.followersOnly:
		fmt.Fprintf(&b, "expand:\n  followers: {max_pages: %d}\n", allPages)
	}
	return b.String()
}

func (s jobSpec) parse() (*jobfile.Job, error) {
	return jobfile.Parse(s.name+".yaml", []byte(s.yaml()))
}

// write saves the job file in dir.
func (s jobSpec) write(dir string) (string, error) {
	path := filepath.Join(dir, s.name+".yaml")
	return path, os.WriteFile(path, []byte(s.yaml()), 0o600)
}

// secUIDOf is the secUid the sandbox gives handle.
var secUIDOf = listwalk.SecUID

// bigAccounts are n seed handles with f followers each (and none followed).
func bigAccounts(prefix string, n, f int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d_f%d_g0", prefix, i, f)
	}
	return out
}

// inProcess is a run of a job by the pipeline in this process, on a fresh
// database.
type inProcess struct {
	pool  *pgxpool.Pool
	job   *jobfile.Job
	runID int64
}

func (e *env) startInProcess(ctx context.Context, label string, spec jobSpec) (*inProcess, error) {
	job, err := spec.parse()
	if err != nil {
		return nil, err
	}
	dsn, err := e.freshDB(ctx, label)
	if err != nil {
		return nil, err
	}
	pool, err := e.pool(ctx, dsn, job.Limits.Workers)
	if err != nil {
		return nil, err
	}
	runID, err := pipeline.Start(ctx, pool, job)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &inProcess{pool: pool, job: job, runID: runID}, nil
}

// run works the run until ctx ends (or the frontier is empty). A stop by
// ctx is the expected end and is not an error.
func (p *inProcess) run(ctx context.Context) (*pipeline.Summary, error) {
	opts := pipeline.Options{
		Pool:   p.pool,
		Client: p.job.ClientConfig(sources.Secret(apiKey), nil),
		Logger: slog.New(slog.DiscardHandler),
		Grace:  2 * time.Second,
	}
	sum, err := pipeline.Run(ctx, opts, p.job, p.runID)
	if err != nil && ctx.Err() != nil && sum != nil && sum.State == "stopped" {
		err = nil
	}
	return sum, err
}

func (p *inProcess) close() { p.pool.Close() }

// runFor works the run from its first request at the upstream (t0) until
// t0+d. at, when set, is called with t0 first (in its own goroutine, which
// runFor waits for); with d = 0 the run ends when at returns. It returns t0.
func (p *inProcess) runFor(ctx context.Context, up *upstream, d time.Duration, at func(ctx context.Context, t0 time.Time)) (time.Time, *pipeline.Summary, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0c := make(chan time.Time, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		t0, err := up.firstArrival(rctx)
		if err != nil {
			return
		}
		t0c <- t0
		if d == 0 {
			at(rctx, t0) // at decides when the run ends
			cancel()
			return
		}
		if at != nil {
			wg.Go(func() { at(rctx, t0) })
		}
		sleepUntil(rctx, t0.Add(d))
		cancel()
	})
	sum, err := p.run(rctx)
	cancel()
	wg.Wait()
	select {
	case t0 := <-t0c:
		return t0, sum, err
	default:
		if err == nil {
			err = fmt.Errorf("the run ended before any request (%+v)", sum)
		}
		return time.Time{}, sum, err
	}
}

// sleepUntil sleeps until t or until ctx ends; it reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
