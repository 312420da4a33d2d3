package pipeline_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
)

// During a database outage longer than lease_timeout the heartbeat cannot
// renew the lease of a task whose page is being fetched, so when the
// database is back that lease has expired although the task is still in
// flight in this process. An idle worker of the same process must not
// rescue it: it would buy the page again. The request holds until a second
// request for the page arrives (the bug) or the idle worker has had ample
// time to try (polling every 20 ms, for a second).
func TestIdleWorkerDoesNotRescueOwnInFlightTask(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64
	again := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/profile") {
			switch seen.Add(1) {
			case 1:
				// The lease as an outage longer than lease_timeout leaves it.
				if _, err := pool.Exec(r.Context(), `UPDATE crawl.tasks SET lease_expires_at = now() - interval '1 second' WHERE state = 'leased'`); err != nil {
					t.Error(err)
				}
				select {
				case <-again:
				case <-time.After(time.Second):
				}
			case 2:
				close(again)
			}
		}
		sb.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b := &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL + "/api"}
	job := b.job(t, "limits: {workers: 2, lease_timeout: 1m}\nexpand: {}\nseeds: {shortvideo: {profiles: [inflight_f0_g0]}}\n")
	runID := b.start(t, job)
	sum, err := pipeline.Run(context.Background(), b.options(job, testKey), job, runID)
	if err != nil || sum.State != "done" {
		t.Fatalf("run: %v %+v", err, sum)
	}
	if n := seen.Load(); n != 1 {
		t.Errorf("the profile was requested %d times, want 1", n)
	}
	if u := sb.Usage(testKey); u.Billable != 1 {
		t.Errorf("billable = %d, want 1", u.Billable)
	}
}

// The process's one heartbeat statement renews every lease it holds; a
// lease it finds taken over (another owner's token) cancels that task's
// request at once: the page is discarded, never committed over its new
// owner's, and the task is bought once more only as its new owner's. Here
// the takeover is a token bumped while the first request is held; the
// request must end by the client giving up (its context cancelled), not by
// its answer.
func TestHeartbeatCancelsTheRequestOfALostLease(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64
	cancelled := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/profile") && seen.Add(1) == 1 {
			// Taken over: the lease's token is another's, and it expires
			// at once so that the task comes back to the frontier.
			if _, err := pool.Exec(r.Context(), `UPDATE crawl.tasks SET lease_token = lease_token + 1000, lease_expires_at = now() WHERE state = 'leased'`); err != nil {
				t.Error(err)
			}
			select {
			case <-r.Context().Done():
				cancelled <- true
			case <-time.After(30 * time.Second):
				cancelled <- false
			}
			return
		}
		sb.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b := &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL + "/api"}
	job := b.job(t, "  timeout: 1m\nlimits: {workers: 1, lease_timeout: 1m}\nexpand: {}\nseeds: {shortvideo: {profiles: [taken_f0_g0]}}\n")
	job.Limits.LeaseTimeout = jobfile.Duration(300 * time.Millisecond) // a heartbeat every 100 ms
	runID := b.start(t, job)
	sum, err := pipeline.Run(context.Background(), b.options(job, testKey), job, runID)
	if err != nil || sum.State != "done" {
		t.Fatalf("run: %v %+v", err, sum)
	}
	if !<-cancelled {
		t.Error("the request of the lost lease was not called off")
	}
	if n, u := seen.Load(), sb.Usage(testKey); n != 2 || u.Billable != 1 {
		t.Errorf("profile requested %d times, %d billable; want the lost one and one bought", n, u.Billable)
	}
	if got := b.count(t, `SELECT pages FROM crawl.tasks WHERE run_id = $1`, runID); got != 1 {
		t.Errorf("pages committed %d, want 1", got)
	}
}
