package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 1: a large follower crawl against a quota of R requests/s per
// key (burst B) for T. The allowed total is R*T + B (the bucket starts
// full); the figure is the billable answers over it, and the 429s per 1000
// requests.
const (
	quotaR       = 50.0
	quotaB       = 10
	quotaWorkers = 8
	quotaSeeds   = 16
)

func runQuota(ctx context.Context, e *env) (*outcome, error) {
	out := &outcome{setup: fmt.Sprintf("sandbox bucket R = %g/s, burst %d per key; %d workers; %d seed accounts of 1,000,000 followers each, followers walked to the end; pipeline in-process. Ceiling 1.5 R for %s (the AIMD must find R), then ceiling = R for %s.",
		quotaR, quotaB, quotaWorkers, quotaSeeds, e.size.quotaT, e.size.quotaEqualT)}
	for _, c := range []struct {
		ceiling float64
		d       time.Duration
		label   string
	}{
		{1.5 * quotaR, e.size.quotaT, "ceiling 1.5 R"},
		{quotaR, e.size.quotaEqualT, "ceiling = R"},
	} {
		m, err := measureQuota(ctx, e, "quota", c.ceiling, c.d)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.label, err)
		}
		out.figures = append(out.figures, m.figures(c.label)...)
	}
	return out, nil
}

// quotaRun is what one saturation run measured.
type quotaRun struct {
	ceiling  float64
	w        window
	allowed  float64
	pauses   int
	lostIdle float64 // quota lost while nothing was sent (429 pauses)
	arr      []sandbox.Arrival
	t0       time.Time
	dups     []string // pages answered 200 twice, when tracked
	distinct int
}

func measureQuota(ctx context.Context, e *env, label string, ceiling float64, d time.Duration) (*quotaRun, error) {
	return measureQuotaWith(ctx, e, quotaSpec{label: label, ceiling: ceiling, d: d, workers: quotaWorkers})
}

// quotaSpec is one saturation run: the client's ceiling (0: none), how the
// sandbox's 429s announce their delay, and whether pages answered twice
// are tracked.
type quotaSpec struct {
	label          string
	ceiling        float64
	d              time.Duration
	workers        int
	retryAfterMode string
	track          bool
}

func measureQuotaWith(ctx context.Context, e *env, q quotaSpec) (*quotaRun, error) {
	ceiling, d := q.ceiling, q.d
	up, err := newUpstream(sandbox.Config{Rate: quotaR, Burst: quotaB, RetryAfterMode: q.retryAfterMode}, q.track)
	if err != nil {
		return nil, err
	}
	defer up.close()
	p, err := e.startInProcess(ctx, q.label, jobSpec{
		name: "bench-" + q.label, baseURL: up.url, rate: ceiling, burst: quotaB, workers: q.workers,
		maxRetries: 20, profiles: bigAccounts("sat", quotaSeeds, 1_000_000), followersOnly: true,
	})
	if err != nil {
		return nil, err
	}
	defer p.close()
	t0, _, err := p.runFor(ctx, up, d, nil)
	if err != nil {
		return nil, err
	}
	arr := up.sb.Arrivals(apiKey)
	m := &quotaRun{ceiling: ceiling, w: countWindow(arr, t0, t0.Add(d)), allowed: quotaR*d.Seconds() + quotaB}
	m.pauses, m.lostIdle = idleLoss(arr, t0, t0.Add(d), quotaR, quotaB)
	m.arr, m.t0 = arr, t0
	if q.track {
		m.dups, m.distinct = up.duplicates()
	}
	return m, nil
}

func (m *quotaRun) fraction() float64 { return float64(m.w.ok) / m.allowed }

func (m *quotaRun) figures(label string) []Figure {
	detail := fmt.Sprintf("%d billable 2xx of %.0f allowed (R·T + B, T = %.0f s); %d 429s in %d requests",
		m.w.ok, m.allowed, m.w.seconds(), m.w.limited, m.w.requests)
	missed := m.allowed - float64(m.w.ok)
	why := fmt.Sprintf("%.0f requests of quota unused (%.1f%%): %d pauses after a 429 left the quota idle for %.0f of them "+
		"(every worker waits Retry-After, >= 1 s, while the upstream bucket refills only to B = %d); the other %.0f are the rate held just under the estimate of R, the climb back after each pause, and the start before the first 429.",
		missed, 100*missed/m.allowed, m.pauses, m.lostIdle, quotaB, missed-m.lostIdle)
	return []Figure{
		{Name: "fraction of the allowed rate, " + label, Value: m.fraction(), Aim: atLeast(0.95), Detail: detail, Why: why},
		{Name: "429s per 1000 requests, " + label, Value: m.w.per1000(), Aim: atMost(5), Detail: detail,
			Why: fmt.Sprintf("%d 429s in %d pauses: the requests already in flight when the first 429 of a pause was answered meet it too.", m.w.limited, m.pauses)},
	}
}

// idleLoss finds the pauses (no 200 for over 0.5 s) in [from, to) and the
// quota they left unused: R per second of pause, less the B tokens the
// upstream bucket keeps for after it.
func idleLoss(arr []sandbox.Arrival, from, to time.Time, r float64, b int) (pauses int, lost float64) {
	var oks []time.Time
	for _, a := range arr {
		if a.Status == http.StatusOK && !a.Time.Before(from) && a.Time.Before(to) {
			oks = append(oks, a.Time)
		}
	}
	slices.SortFunc(oks, func(x, y time.Time) int { return x.Compare(y) })
	for i := 1; i < len(oks); i++ {
		if gap := oks[i].Sub(oks[i-1]); gap > 500*time.Millisecond {
			pauses++
			lost += max(0, gap.Seconds()*r-float64(b))
		}
	}
	return pauses, lost
}
