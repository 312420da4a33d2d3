package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
)

// okLog records when a process's requests were answered 2xx.
type okLog struct {
	mu  sync.Mutex
	oks []time.Time
}

func (l *okLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && resp.StatusCode/100 == 2 {
		l.mu.Lock()
		l.oks = append(l.oks, time.Now())
		l.mu.Unlock()
	}
	return resp, err
}

// rate is the 2xx per second in the last d.
func (l *okLog) rate(d time.Duration) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	from, n := time.Now().Add(-d), 0
	for _, t := range l.oks {
		if t.After(from) {
			n++
		}
	}
	return float64(n) / d.Seconds()
}

// Two processes on one run, with api.rate unset, against a bucket of 50/s:
// the second joins once the first has measured the quota; together they
// send the quota, in halves, as the shared row says; when one stops, the
// other takes the whole quota within seconds.
func TestSharedQuotaTwoProcesses(t *testing.T) {
	// Not parallel: it measures rates on the wall clock, which the package's
	// parallel tests (a CPU-bound -race run on two cores) skew; Go runs it
	// before them, alone in its package.
	const R, B = 50.0, 10
	// Pages of 2 followers: a page's commit is cheap, so that the first
	// process sends past R even on two loaded cores (at the default 50 a
	// page it could not, never drew a 429 and never measured the quota).
	b := setupWith(t, sandbox.Config{Rate: R, Burst: B, PageSize: 2})
	var seeds []string
	for i := range 16 { // work for both: 8 workers each
		seeds = append(seeds, fmt.Sprintf("sq%02d_f1000000_g0", i))
	}
	job := b.job(t, fmt.Sprintf("limits:\n  workers: 8\n  max_pages: 100000\nseeds:\n  shortvideo:\n    profiles: [%s]\nexpand:\n  followers: {max_pages: 100000}\n",
		strings.Join(seeds, ", ")))
	runID := b.start(t, job)
	logs := [2]*okLog{{}, {}}
	cancels := [2]context.CancelFunc{}
	done := [2]chan error{make(chan error, 1), make(chan error, 1)}
	start := func(i int) {
		opts := b.options(job, testKey)
		opts.Owner = fmt.Sprintf("proc%d:%d", i, runID)
		opts.Client.HTTPClient = &http.Client{Transport: logs[i]}
		opts.Grace = 2 * time.Second
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		go func() {
			_, err := pipeline.Run(ctx, opts, job, runID)
			done[i] <- err
		}()
	}
	stop := func(i int) {
		cancels[i]()
		select {
		case <-done[i]:
		case <-time.After(30 * time.Second):
			t.Fatalf("process %d did not stop", i+1)
		}
	}
	ctx := context.Background()
	// poll calls cond every 100 ms until it is true, failing after d.
	poll := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !cond() {
			if time.Now().After(deadline) {
				// The rates say whether the processes sent enough for a
				// 429 at all (the quota is measured on the first ones).
				t.Fatalf("not within %s: %s (2xx over the last 3 s: %.1f/s and %.1f/s)", d, what, logs[0].rate(3*time.Second), logs[1].rate(3*time.Second))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	shared := func() (rate float64, measured bool, live int) {
		t.Helper()
		err := b.pool.QueryRow(ctx, `SELECT coalesce((SELECT rate FROM crawl.rate_quota WHERE run_id = $1), 0),
			coalesce((SELECT measured FROM crawl.rate_quota WHERE run_id = $1), false),
			(SELECT count(*) FROM crawl.rate_members WHERE run_id = $1 AND heartbeat_at > now() - interval '3 s')`, runID).Scan(&rate, &measured, &live)
		if err != nil {
			t.Fatal(err)
		}
		return rate, measured, live
	}

	start(0)
	defer func() {
		for i := range cancels {
			if cancels[i] != nil {
				cancels[i]()
			}
		}
	}()
	poll("the first process measures the quota", 60*time.Second, func() bool { _, m, _ := shared(); return m })
	start(1)
	poll("two live processes", 20*time.Second, func() bool { _, _, n := shared(); return n == 2 })
	// Converged: each sends about half, together the quota (floors for a
	// -race run sharing two cores with other packages' tests: quiet, it
	// converges in seconds to 0.95 R; what the sandbox admitted is checked
	// exactly next, and bench workload 14 measures the shares).
	poll("shares of the quota", 90*time.Second, func() bool {
		a, c := logs[0].rate(3*time.Second), logs[1].rate(3*time.Second)
		return a+c >= 0.8*R && a >= 0.3*R && c >= 0.3*R
	})
	// The leader's estimate, measured on the wall clock: within 20% (a
	// -race run on two busy cores skews it by up to ~17%); what binds is
	// what the sandbox admitted, checked next.
	rate, _, live := shared()
	if live != 2 || rate < 0.8*R || rate > 1.2*R {
		t.Errorf("shared row: rate %.2f with %d live processes, want %v +- 20%% and 2", rate, live, R)
	}
	// What the sandbox admitted over the last 3 s: the quota, no more.
	var ok int
	for _, a := range b.sandbox.Arrivals(testKey) {
		if a.Status == http.StatusOK && time.Since(a.Time) < 3*time.Second {
			ok++
		}
	}
	// No more than the quota; the floor is loose, as a -race run on two
	// busy cores may starve the senders for a moment.
	if got := float64(ok) / 3; got < 0.7*R || got > R+B/3.0+1 {
		t.Errorf("sandbox admitted %.1f/s over 3 s with two processes, want about %v", got, R)
	}
	a, c := logs[0].rate(3*time.Second), logs[1].rate(3*time.Second)
	t.Logf("two processes: %.1f/s and %.1f/s; shared estimate %.2f; sandbox %d 2xx in 3 s", a, c, rate, ok)

	stop(1)
	stopped := time.Now()
	poll("the remaining process takes the whole quota", 30*time.Second, func() bool {
		return logs[0].rate(2*time.Second) >= 0.85*R
	})
	t.Logf("alone again after %v: %.1f/s", time.Since(stopped).Round(100*time.Millisecond), logs[0].rate(2*time.Second))
	_, _, live = shared()
	if live != 1 {
		t.Errorf("%d live processes after one stopped, want 1", live)
	}
	stop(0)
	var statements, requests int64
	if err := b.pool.QueryRow(ctx, `SELECT sum(statements) FROM crawl.rate_members WHERE run_id = $1`, runID).Scan(&statements); err != nil {
		t.Fatal(err)
	}
	requests = int64(len(b.sandbox.Arrivals(testKey)))
	t.Logf("sharing: %d statements for %d requests (%.3f per request)", statements, requests, float64(statements)/float64(requests))
	if statements == 0 || float64(statements)/float64(requests) > 0.1 {
		t.Errorf("sharing cost %d statements for %d requests, want well under 0.1 per request", statements, requests)
	}
}
