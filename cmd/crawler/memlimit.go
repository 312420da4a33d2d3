package main

import (
	"sync"
	"time"

	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/sources"
)

// The documented bound of a run's memory (docs/how-a-run-works.md#memory):
// about memoryBase + memoryPerBodyByte × the body budget + memoryPerRequest
// × the requests in flight.
const (
	memoryBase        = 20 << 20
	memoryPerBodyByte = 9
	memoryPerRequest  = 34 << 10 // 40 KiB before the client's connections kept 1 KiB buffers, not 4 KiB each
)

// memoryLimit is the soft memory limit of a run whose client has a body
// budget of budget bytes and may have inFlight requests in flight: the
// documented bound, never below memoryLimitDefault. A fixed limit under
// that bound would keep the collector running back to back with
// thousands of requests in flight, its CPU then capping the requests in
// flight (workload 21 of BENCHMARKS.md).
func memoryLimit(budget int64, inFlight int) int64 {
	return max(memoryLimitDefault, memoryBase+memoryPerBodyByte*budget+memoryPerRequest*int64(inFlight))
}

// memoryLimiter moves the soft memory limit with the client's adaptive
// limit of requests in flight, seen in each progress (about once a
// second). Bounded by configuration: the limit is at most limits.workers,
// else concurrency.HardCeiling.
type memoryLimiter struct {
	budget int64
	set    func(int64) int64 // debug.SetMemoryLimit

	mu   sync.Mutex
	last int64
}

// newMemoryLimiter is nil (the limit left alone) when GOMEMLIMIT is set
// or the process's limit is not ours to set (tests running commands in
// their own process).
func newMemoryLimiter(env *cliEnv, cfg sources.Config) *memoryLimiter {
	if env.setMemoryLimit == nil || env.getenv("GOMEMLIMIT") != "" {
		return nil
	}
	return &memoryLimiter{budget: cfg.BodyBudget(), set: env.setMemoryLimit}
}

func (m *memoryLimiter) Request(sources.Outcome)          {}
func (m *memoryLimiter) PageCommitted(int, time.Duration) {}

// Progress sets the limit for the larger of the adaptive limit and the
// slots held (a cut leaves its excess in flight until those requests
// end). The limit, not the slots held: the process keeps twice the limit
// of tasks in progress (pipeline's target), and their goroutines and
// pages hold memory while they wait for a slot. Following the slots held
// instead, workload 21 (2,000 lists) ran at 349 in flight with a peak RSS
// of 173 MB, the limit near 100 MiB and the collector as busy as before.
func (m *memoryLimiter) Progress(p pipeline.Progress) {
	lim := memoryLimit(m.budget, max(p.Concurrency.Limit, p.Concurrency.InFlight))
	m.mu.Lock()
	defer m.mu.Unlock()
	if lim != m.last {
		m.set(lim)
		m.last = lim
	}
}
