package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/sources/concurrency"
	"github.com/socialcrawl/crawler/testkit/listwalk"
)

// Workload 17: the real service's answer times, a quota, and no settings
// (neither limits.workers nor api.rate). A list is walked page after page,
// so throughput comes only from requests in flight: at 3 s an answer, 20
// requests/s need 60 in flight, 100/s at 20 s need 2,000. Each case walks
// more lists than it needs through one client (the runner's tasks, with
// no database), against a sandbox answering in latency ± a third, with a
// quota of R requests/s (burst 10); the four run side by side, each with
// its own sandbox. The figure is the billable answers over what the quota
// allows in the same run (R x T + B), from the first request: the requests
// sent in T, each counted by its answer, however late it comes.
//
// Then the issue's job end to end: 60 accounts (720 list pages) at 3 s and
// 20/s, pipeline.Run in-process with a job file that sets neither key: the
// runner keeps twice the client's limit of tasks in progress. Its 12 pages
// a list are 36 s walked one after another, about the 36 s of the quota
// the 720 pages take: a figure without an aim. Issue 34's aim (0.9 of the
// allowed rate, start included, for a job of at least ten minutes' work)
// is carried by the same job at 200 accounts of 60 pages (12,000 pages,
// 600 s of the quota), beside it.
type concCase struct {
	latency time.Duration // the middle of the answer times
	rate    float64
	d       time.Duration
	lists   int
}

func (c concCase) label() string { return fmt.Sprintf("%s at %g/s", c.latency, c.rate) }

func runConcurrency(ctx context.Context, e *env) (*outcome, error) {
	cases := e.size.concCases
	out := &outcome{setup: fmt.Sprintf("sources.Client with no settings (default options, max_retries 20) walking follower lists page after page, a goroutine per list, no database; sandbox answers in latency ± a third (uniform), quota R requests/s with burst 10; cases %s, side by side, each with its own sandbox and client. Beside them, the issue's job (%d accounts seeded by secUid, %d followers each: %d list pages) through pipeline.Run in-process, no limits.workers, no api.rate, at %s and %g/s, for up to %s; and the same at ten minutes' work (%d accounts, %d followers each: %d list pages, for up to %s), each on its own sandbox and database.",
		caseList(cases), e.size.issueAccounts, e.size.issueFollowers, e.size.issueAccounts*e.size.issueFollowers/50, e.size.issueLatency, issueRate, e.size.issueT,
		e.size.issueLong.accounts, e.size.issueLong.followers, e.size.issueLong.accounts*e.size.issueLong.followers/50, e.size.issueLong.t)}
	type result struct {
		figs []Figure
		err  error
	}
	results := make([]result, len(cases)+2)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { results[i].figs, results[i].err = concurrencyCase(ctx, c) })
	}
	short := issueJobSize{accounts: e.size.issueAccounts, followers: e.size.issueFollowers, t: e.size.issueT}
	wg.Go(func() { results[len(cases)].figs, results[len(cases)].err = e.issueJob(ctx, "issue", short, false) })
	wg.Go(func() {
		results[len(cases)+1].figs, results[len(cases)+1].err = e.issueJob(ctx, "issuelong", e.size.issueLong, true)
	})
	wg.Wait()
	for _, r := range results {
		out.figures = append(out.figures, r.figs...)
		if r.err != nil {
			return out, r.err
		}
	}
	return out, nil
}

func caseList(cs []concCase) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s at %g/s for %s (%d lists)", c.latency, c.rate, c.d, c.lists)
	}
	return s
}

// concTailMargin is how long past the latest answer time a case waits for
// the answers to its last requests: the sandbox's timers and the client's
// reads are late on a loaded machine.
const concTailMargin = time.Second

// concurrencyCase runs one case and reports its figures.
func concurrencyCase(ctx context.Context, c concCase) ([]Figure, error) {
	jitter := 2 * c.latency / 3
	up, err := newUpstream(sandbox.Config{Rate: c.rate, Burst: quotaB, Faults: sandbox.Faults{Latency: c.latency - jitter/2, LatencyJitter: jitter}}, false)
	if err != nil {
		return nil, err
	}
	defer up.close()
	w, err := listwalk.New(up.url, apiKey, nil)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Walk(rctx, c.lists, "conc")
	}()
	t0, err := up.firstArrival(rctx)
	if err != nil {
		return nil, err
	}
	// The requests sent before T are counted by their answers, which come
	// up to an answer time later (latency + a third): the walk goes on
	// until the last of them is in, with a margin for a loaded machine,
	// and what is sent after T counts nothing. Stopped at T, the answers
	// still out were cut (499s): R x answer time fewer 2xx, 2-7% of the
	// figures (0.883 measured for 0.94 at 20 s and 20/s).
	sleepUntil(rctx, t0.Add(c.d+c.latency+jitter/2+concTailMargin))
	cancel()
	<-done
	arr := up.sb.Arrivals(apiKey)
	win := countWindow(arr, t0, t0.Add(c.d))
	lateOK, cut := 0, 0
	for _, a := range arr {
		if a.Time.Before(t0) || !a.Time.Before(t0.Add(c.d)) {
			continue
		}
		switch {
		case a.Status == sandbox.StatusClientClosed:
			cut++
		case a.Status == http.StatusOK && !a.Answered.Before(t0.Add(c.d)):
			lateOK++
		}
	}
	allowed := c.rate*c.d.Seconds() + quotaB
	need := c.rate * c.latency.Seconds()
	// The start: the doubling from 16 in flight to what the rate needs, an
	// answer time each, and two more (the first answers, the first 429's).
	start := time.Duration((math.Max(math.Log2(need/float64(concurrency.InitialDefault)), 0) + 2) * float64(c.latency))
	after := countWindow(arr, t0.Add(start), t0.Add(c.d))
	lo, hi, inFlight := w.Limits(t0.Add(c.d/2), t0.Add(c.d))
	secs, ok := settleOf(arr, t0, t0.Add(c.d), c.rate)
	detail := fmt.Sprintf("%d billable 2xx of %.0f allowed (R·T + B, T = %s; requests sent in T, %d of them answered after T, %d still out when the walk stopped), %d of %.0f after the first %s; %d 429s in %d requests; in the second half the limit stayed in %d-%d, %.0f in flight on average, for %.0f needed (R x %s)",
		win.ok, allowed, c.d, lateOK, cut, after.ok, c.rate*after.seconds(), start.Round(time.Second), win.limited, win.requests, lo, hi, inFlight, need, c.latency)
	return []Figure{
		{Name: "fraction of the allowed rate after the start, no settings, " + c.label(), Value: float64(after.ok) / (c.rate * after.seconds()), Aim: atLeast(0.9), Detail: detail,
			Why: "once the limit holds what the rate needs (1.25 x rate x answer time + 8), the rate control holds the rate just under the quota, probing above it every minute or two (a pause each), and measures it from the successes counted at their send times, waiting for the answers after each 429."},
		{Name: "fraction of the allowed rate over the whole run, no settings, " + c.label(), Value: float64(win.ok) / allowed, Detail: detail,
			Why: fmt.Sprintf("the start costs a few answer times of the quota: until the first answers come (after %s) requests leave at %d a second, then the limit doubles each answer time from what is in flight to %.0f, handing its new slots out over the answer time; the first 429 comes as the doubling's sends cross the quota, from requests that left under it on average, so its estimate may be loose and is probed within 5 s.",
				c.latency, concurrency.InitialDefault, need)},
		settleFigure("seconds to reach 90% of the allowed rate, "+c.label(), secs, ok, c.rate, settleHold(c.d)),
		{Name: "limit held / needed in flight, " + c.label(), Value: float64(hi) / need, Aim: atMost(1.5), Detail: detail,
			Why: "when the rate binds the limit is held at 1.25 x rate x mean answer time + 8: requests waiting for a token are not the upstream's queue, and more of them would only hold memory."},
	}, nil
}

// issueRate is the issue's upstream quota, requests/s.
const issueRate = 20.0

// issueJob runs a job of the issue's lists (size js, at the issue's
// latency and rate) end to end and reports its rate; aimed, against
// issue 34's aim (0.9 of the allowed rate, start-up included, for a job
// of at least ten minutes' work).
func (e *env) issueJob(ctx context.Context, label string, js issueJobSize, aimed bool) ([]Figure, error) {
	lat := e.size.issueLatency
	jitter := 2 * lat / 3
	up, err := newUpstream(sandbox.Config{Rate: issueRate, Burst: quotaB, Faults: sandbox.Faults{Latency: lat - jitter/2, LatencyJitter: jitter}}, false)
	if err != nil {
		return nil, err
	}
	defer up.close()
	var seeds []string
	for i := range js.accounts {
		seeds = append(seeds, secUIDOf(fmt.Sprintf("%s%03d_f%d_g0", label, i, js.followers)))
	}
	spec := jobSpec{name: "bench-" + label, baseURL: up.url, secUIDs: seeds, followersOnly: true, maxPages: allPages}
	p, err := e.startInProcess(ctx, label, spec)
	if err != nil {
		return nil, err
	}
	defer p.close()
	start := time.Now()
	t0, sum, err := p.runFor(ctx, up, js.t, nil)
	if err != nil {
		return nil, err
	}
	took := time.Since(start)
	arr := up.sb.Arrivals(apiKey)
	var last time.Time
	for _, a := range arr {
		if a.Answered.After(last) {
			last = a.Answered
		}
	}
	w := countWindow(arr, t0, last.Add(time.Nanosecond))
	perList := js.followers / 50
	pages := js.accounts * perList
	rate := float64(w.ok) / last.Sub(t0).Seconds()
	work := float64(pages) / issueRate // seconds of the quota's work
	chain := float64(perList) * lat.Seconds()
	f := Figure{
		Name:  fmt.Sprintf("the issue's job end to end (%d pages at %s, %g/s): billable/s over the allowed", pages, lat, issueRate),
		Value: rate / issueRate,
		Detail: fmt.Sprintf("%d billable 2xx of %d pages in %.1f s from the first request (%s, %d pages committed by this process, %s in all) = %.2f/s; allowed %g/s; %d lists of %d pages",
			w.ok, pages, last.Sub(t0).Seconds(), sum.State, sum.Pages, took.Round(time.Second), rate, issueRate, js.accounts, perList),
	}
	if aimed {
		f.Name = fmt.Sprintf("the issue's job at ten minutes' work, end to end (%d pages at %s, %g/s): billable/s over the allowed", pages, lat, issueRate)
		f.Aim = atLeast(0.9)
		f.Why = fmt.Sprintf("issue 34's aim, start-up included, for a job of at least ten minutes' work: %d pages are %.0f s of the quota at %g/s, and %d lists keep %.0f requests/s going at %s a page (%d needed), so the quota binds, not the lists' chains (%.0f s each); the start (Initial requests a second until the first answers, then a doubling an answer time) and the first 429s' reactions cost a few answer times of it.",
			pages, work, issueRate, js.accounts, float64(js.accounts)/lat.Seconds(), lat, int(issueRate*lat.Seconds()), chain)
	} else {
		f.Why = fmt.Sprintf("not aimed: %d pages are %.0f s of the quota at %g/s, but each list is %d pages walked one after another, %.0f s at %s a page whatever the concurrency, so the job is bound by its chains about as much as by the quota, and the start (a few answer times), the answer times' spread (the slowest of %d chains of %d pages) and the commits weigh in the ratio; issue 34's aim is for a job of at least ten minutes' work, the figure after this one. The runner keeps twice the client's limit of tasks in progress.",
			pages, work, issueRate, perList, chain, lat, js.accounts, perList)
	}
	return []Figure{f}, nil
}
