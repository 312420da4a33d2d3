package pipeline_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
)

// heapAt samples the live heap, after a collection, when the run commits
// its from-th and to-th pages.
type heapAt struct {
	from, to int64
	pages    atomic.Int64
	heap     [2]uint64
}

func (h *heapAt) Request(sources.Outcome)    {}
func (h *heapAt) Progress(pipeline.Progress) {}
func (h *heapAt) PageCommitted(int, time.Duration) {
	n := h.pages.Add(1)
	if n != h.from && n != h.to {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.heap[min(n/h.to, 1)] = ms.HeapAlloc
}

// A list walked page by page keeps none of the pages it committed: the live
// heap is the same after 50 pages of one followers list as after 250. A
// page's lease once kept the previous page's commit, which kept its lease,
// and so on: every page of the list stayed live until the list ended (1.3 GB
// at a million followers; 24.6 MB over 500 pages in this test before the
// fix, so some 10 MB over these 200, over twice the bound). Not parallel:
// the heap is this test's alone.
func TestLongListKeepsNoCommittedPage(t *testing.T) {
	b := setupWith(t, sandbox.Config{PageSize: 50})
	job := b.job(t, "limits:\n  workers: 1\n  max_pages: 100000\nseeds:\n  shortvideo:\n    profiles: [heap_f30000_g0]\nexpand:\n  followers: {max_pages: 260}\n")
	h := &heapAt{from: 50, to: 250}
	opts := b.options(job, testKey)
	opts.Observers = []pipeline.Observer{h}
	if _, err := pipeline.Run(context.Background(), opts, job, b.start(t, job)); err != nil {
		t.Fatal(err)
	}
	if h.pages.Load() < h.to || h.heap[0] == 0 {
		t.Fatalf("%d pages committed, heap sampled %v", h.pages.Load(), h.heap)
	}
	growth := int64(h.heap[1]) - int64(h.heap[0])
	t.Logf("live heap after %d pages %.1f MB, after %d pages %.1f MB", h.from, float64(h.heap[0])/1e6, h.to, float64(h.heap[1])/1e6)
	if growth > 4<<20 {
		t.Errorf("the live heap grew by %.1f MB over %d pages of one list; want it flat (under 4 MB)", float64(growth)/1e6, h.to-h.from)
	}
}
