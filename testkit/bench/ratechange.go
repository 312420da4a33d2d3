package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workload 2: the quota moves under a running crawl, R = 50 -> 20 -> 50
// (sandbox SetRate), each for one phase. Around each change: the 429s it
// caused, and how long until the billable rate is at 90% of the new R and
// stays there.
func runRateChange(ctx context.Context, e *env) (*outcome, error) {
	ceiling := 1.5 * quotaR
	out := &outcome{setup: fmt.Sprintf("as workload 1 with ceiling 1.5 R = %g/s; R = 50 -> 20 -> 50 requests/s (SetRate, burst %d), %s each. "+
		"\"Reach 90%%\" is the first instant from which the billable rate, in 1 s bins, stays at or above 90%% of the new R for 5 s (%s in smoke mode).",
		ceiling, quotaB, e.size.changePhase, settleHold(e.size.changePhase))}
	_, err := rateChange(ctx, e, out, "ratechange", ceiling, quotaWorkers, false)
	return out, err
}

// rateChange runs the crawl of workload 2 with the client's ceiling (0:
// none) and adds its figures to out; it returns the sandbox's arrivals and
// when the run started. track records the pages answered twice.
func rateChange(ctx context.Context, e *env, out *outcome, label string, ceiling float64, workers int, track bool) (*changeRun, error) {
	rates := []float64{quotaR, 20, quotaR}
	phase := e.size.changePhase
	up, err := newUpstream(sandbox.Config{Rate: rates[0], Burst: quotaB}, track)
	if err != nil {
		return nil, err
	}
	defer up.close()
	p, err := e.startInProcess(ctx, label, jobSpec{
		name: "bench-" + label, baseURL: up.url, rate: ceiling, burst: quotaB, workers: workers,
		maxRetries: 20, profiles: bigAccounts("chg", quotaSeeds, 1_000_000), followersOnly: true,
	})
	if err != nil {
		return nil, err
	}
	defer p.close()
	changes := make(chan time.Time, len(rates))
	// The run ends a whole phase after the last change, however late a
	// loaded machine made it.
	t0, _, err := p.runFor(ctx, up, 0, func(ctx context.Context, t0 time.Time) {
		last := t0
		for i, r := range rates[1:] {
			if !sleepUntil(ctx, t0.Add(time.Duration(i+1)*phase)) {
				return
			}
			if err := up.sb.SetRate(r, quotaB); err != nil {
				e.log.Error("set rate", "err", err)
				return
			}
			last = time.Now()
			changes <- last
		}
		sleepUntil(ctx, last.Add(phase))
	})
	if err != nil {
		return nil, err
	}
	close(changes)
	arr := up.sb.Arrivals(apiKey)
	cr := &changeRun{arr: arr, t0: t0, rates: rates, phase: phase}
	if track {
		cr.dups, cr.distinct = up.duplicates()
	}
	var oks []time.Time
	for _, a := range arr {
		if a.Status == http.StatusOK {
			oks = append(oks, a.Time)
		}
	}
	slices.SortFunc(oks, func(x, y time.Time) int { return x.Compare(y) })
	i := 0
	for tc := range changes {
		cr.changes = append(cr.changes, tc)
		i++
		from, to := rates[i-1], rates[i]
		end := tc.Add(phase)
		near := countWindow(arr, tc, minTime(end, tc.Add(20*time.Second)))
		label := fmt.Sprintf("%g -> %g/s", from, to)
		out.figures = append(out.figures, Figure{
			Name: "429s after the change " + label, Value: float64(near.limited),
			Detail: fmt.Sprintf("429s in the %.0f s after SetRate; %d requests, %d billable in that time", near.seconds(), near.requests, near.ok),
		})
		secs, ok := settleTime(oks, tc, end, 0.9*to, settleHold(phase))
		f := Figure{
			Name: "seconds to reach 90% of the new rate " + label, Value: secs, Unit: "s",
			Detail: fmt.Sprintf("billable rate >= %.0f/s in every 1 s bin for %s from then on", 0.9*to, settleHold(phase)),
		}
		if !ok {
			f.Text = fmt.Sprintf("> %.1f s (not within the phase)", secs)
		}
		out.figures = append(out.figures, f)
	}
	if i != len(rates)-1 {
		return cr, fmt.Errorf("the run ended after %d of %d rate changes", i, len(rates)-1)
	}
	return cr, nil
}

// changeRun is what the crawl of workload 2 saw at the sandbox.
type changeRun struct {
	arr      []sandbox.Arrival
	t0       time.Time
	rates    []float64
	phase    time.Duration
	changes  []time.Time
	dups     []string
	distinct int
}

// settleHold is how long the rate must stay at its new level to count.
func settleHold(phase time.Duration) time.Duration { return min(5*time.Second, phase/4) }

// settleTime is the first t - tc (t from tc in steps of 100 ms, t + hold
// before end) from which every bin of min(1 s, hold) in [t, t+hold) has at
// least level per second of the sorted times oks. ok is false (and the
// result end - tc) when there is none.
func settleTime(oks []time.Time, tc, end time.Time, level float64, hold time.Duration) (float64, bool) {
	bin := min(time.Second, hold)
	need := level * bin.Seconds()
	count := func(from, to time.Time) int {
		lo, _ := slices.BinarySearchFunc(oks, from, func(x, t time.Time) int { return x.Compare(t) })
		hi, _ := slices.BinarySearchFunc(oks, to, func(x, t time.Time) int { return x.Compare(t) })
		return hi - lo
	}
	for t := tc; !t.Add(hold).After(end); t = t.Add(100 * time.Millisecond) {
		good := true
		for b := t; b.Before(t.Add(hold)); b = b.Add(bin) {
			if float64(count(b, b.Add(bin))) < need {
				good = false
				break
			}
		}
		if good {
			return t.Sub(tc).Seconds(), true
		}
	}
	return end.Sub(tc).Seconds(), false
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
