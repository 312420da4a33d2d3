package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
)

// gate holds the upstream's requests for a list's next page (those with a
// cursor) until open is closed, counting them on held.
type gate struct {
	next  http.Handler
	held  chan struct{}
	open  chan struct{}
	close sync.Once
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("cursor") != "" {
		g.held <- struct{}{}
		<-g.open
	}
	g.next.ServeHTTP(w, r)
}

func (g *gate) release() { g.close.Do(func() { close(g.open) }) }

// liveHeap is the live heap after two collections (the second empties
// the pools' victim caches).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// A task keeps nothing of a committed page while its next request is in
// flight: with 16 lists each waiting for its second page at the upstream,
// their first pages committed, the live heap holds none of those pages
// (their rows, the commit's columns, their bodies). Each task once kept
// its previous page until its next answer came, an answer time later:
// at 2,000 requests in flight, 2,000 pages outside the in-flight body
// budget (BENCHMARKS.md, workload 21). Not parallel: the heap is this
// test's alone.
func TestTaskKeepsNoCommittedPageWhileFetching(t *testing.T) {
	const lists, pageSize = 16, 1000
	b := setupWith(t, sandbox.Config{PageSize: pageSize})
	g := &gate{next: b.sandbox.Handler(), held: make(chan struct{}, lists), open: make(chan struct{})}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	t.Cleanup(g.release)
	b.baseURL = srv.URL + "/api"
	var profiles []string
	for i := range lists {
		// A second page of one follower: what is measured waits at the
		// gate, and after it the run only has to end.
		profiles = append(profiles, fmt.Sprintf("mem%02d_f%d_g0", i, pageSize+1))
	}
	job := b.job(t, fmt.Sprintf("limits:\n  workers: %d\nseeds:\n  shortvideo:\n    profiles: [%s]\nexpand:\n  followers: {max_pages: 2}\n",
		2*lists, strings.Join(profiles, ", ")))
	// The second requests wait at the gate for as long as the slowest list
	// takes to reach it: on a loaded machine, past the default api.timeout
	// (1m), when the held ones would fail, close the outage gate and keep
	// the last lists from ever asking (a run stopped after the outage
	// window, once under make test beside the simulator).
	job.API.Timeout = jobfile.Duration(10 * time.Minute)
	job.Limits.LeaseTimeout = jobfile.Duration(10 * time.Minute)
	runID := b.start(t, job)
	before := liveHeap()
	type result struct {
		sum *pipeline.Summary
		err error
	}
	done := make(chan result, 1)
	// Every list's second request in flight at once from the start: held at
	// the gate, they take their slots for good, and an adaptive limit still
	// at its start (16) with the lists' first requests in flight would leave
	// lists without their first page.
	opts := b.options(job, testKey)
	opts.Client.InitialInFlight = 2 * lists
	go func() {
		sum, err := pipeline.Run(context.Background(), opts, job, runID)
		done <- result{sum, err}
	}()
	for range lists {
		select {
		case <-g.held:
		case r := <-done:
			t.Fatalf("the run ended before every list asked for its second page: %+v %v", r.sum, r.err)
		}
	}
	// Every second request left after its first page's commit was written;
	// wait for the commits themselves.
	deadline := time.Now().Add(30 * time.Second)
	for b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND kind = 'shortvideo.followers' AND pages = 1`, runID) < lists {
		if time.Now().After(deadline) {
			t.Fatal("the first pages were not committed within 30 s")
		}
		runtime.Gosched()
	}
	held := liveHeap() - before
	rows := b.count(t, `SELECT count(*) FROM shortvideo.follows`)
	g.release()
	r := <-done
	if r.err != nil || r.sum.State != "done" {
		t.Fatalf("run: %+v %v", r.sum, r.err)
	}
	if rows != lists*pageSize {
		t.Fatalf("%d follow edges committed before the second pages, want %d", rows, lists*pageSize)
	}
	// A page of 1,000 followers kept is some 0.9 MB live (its rows, the
	// commit's columns): 21 MB for 24 lists before the fix, 2 MB after;
	// over 8 MB for these 16 with the fix undone in the committer alone.
	t.Logf("live heap with %d lists waiting for their second page: %.1f MB more than before the run", lists, float64(held)/1e6)
	if held > 6<<20 {
		t.Errorf("the live heap holds %.1f MB more while %d lists wait for their second page, their first committed; want under 6 MB (no committed page kept)", float64(held)/1e6, lists)
	}
}
