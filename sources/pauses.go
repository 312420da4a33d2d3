package sources

import (
	"sync"
	"time"
)

// Pauses is how long a Client has held every worker back, for progress
// reports and metrics: the 429 pauses (the union of their windows, so that
// 429s answered during one pause count once) and the outages (the outage
// gate closed).
type Pauses struct {
	RateLimited time.Duration // total time paused by 429s so far
	Outage      time.Duration // total time the upstream was unreachable so far
	// Now: whether a pause of either kind is in force.
	RateLimitedNow, OutageNow bool
}

// Pauses reports the client's pauses so far.
func (c *Client) Pauses() Pauses {
	now := time.Now()
	p := Pauses{}
	p.RateLimited, p.RateLimitedNow = c.pauses.elapsed(now)
	p.Outage, p.OutageNow = c.gate.downtime(now)
	return p
}

// pauseClock adds up the 429 pauses as the union of their windows.
type pauseClock struct {
	mu    sync.Mutex
	until time.Time     // the end of the latest pause
	total time.Duration // the union of the windows, including the part of the current one still ahead
}

// pause records a pause of d from now.
func (p *pauseClock) pause(now time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	end := now.Add(d)
	if !end.After(p.until) {
		return
	}
	start := now
	if p.until.After(start) {
		start = p.until
	}
	p.total += end.Sub(start)
	p.until = end
}

// elapsed is the time paused up to now, and whether a pause is in force.
func (p *pauseClock) elapsed(now time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ahead := p.until.Sub(now); ahead > 0 {
		return p.total - ahead, true
	}
	return p.total, false
}
