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
	memoryPerRequest  = 40 << 10
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

// memoryLimiter moves the soft memory limit with the requests the client
// holds in flight (its slots of the adaptive limit), seen in each progress
// (about once a second). Bounded by configuration: at most limits.workers,
// else concurrency.HardCeiling, requests are in flight.
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

// Progress sets the limit for the slots held, not for the limit: after
// the limit's ramp the limit may stand well above the requests in flight
// (at 2,048 or 4,096 with some 1,100 in flight in workload 21), and
// unused slots hold no memory; after a cut, the slots still held count.
func (m *memoryLimiter) Progress(p pipeline.Progress) {
	lim := memoryLimit(m.budget, p.Concurrency.InFlight)
	m.mu.Lock()
	defer m.mu.Unlock()
	if lim != m.last {
		m.set(lim)
		m.last = lim
	}
}
