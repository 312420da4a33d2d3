package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// Workloads 10-13: the rate workloads again with api.rate unset, the
// default of a new job file, where the rate control must find the quota
// (and its burst) from the first 429s. Their aims: the allowed rate
// achieved >= 0.95, 429s <= 5 per 1000 requests after the first 10 s, no
// page fetched twice.

// autoWorkers is the crawl's concurrency in these workloads: more workers
// than the upstream's burst, so that every pause ends in more requests
// than the upstream admits at once.
const autoWorkers = 16

// autoWarm is the start not counted in the 429s per 1000: the 429s that
// find the quota are the price of leaving api.rate unset.
const autoWarm = 10 * time.Second

// autoLate counts the 429s per 1000 requests in [t0 + autoWarm, to).
func autoLate(arr []sandbox.Arrival, t0, to time.Time) window {
	from := t0.Add(min(autoWarm, to.Sub(t0)/4))
	return countWindow(arr, from, to)
}

// settleOf is how long after t0 the billable rate reached 90% of r and
// stayed there for 5 s (settleHold), from the sorted 200s of arr.
func settleOf(arr []sandbox.Arrival, t0, end time.Time, r float64) (float64, bool) {
	var oks []time.Time
	for _, a := range arr {
		if a.Status == http.StatusOK {
			oks = append(oks, a.Time)
		}
	}
	slices.SortFunc(oks, func(x, y time.Time) int { return x.Compare(y) })
	return settleTime(oks, t0, end, 0.9*r, settleHold(end.Sub(t0)))
}

func settleFigure(name string, secs float64, ok bool, r float64, hold time.Duration) Figure {
	f := Figure{Name: name, Value: secs, Unit: "s",
		Detail: fmt.Sprintf("from the first request, the first instant from which the billable rate stays >= %.0f/s (90%% of R) in every 1 s bin for %s", 0.9*r, hold)}
	if !ok {
		f.Text = fmt.Sprintf("> %.1f s (not within the run)", secs)
	}
	return f
}

func dupFigure(total int, detail []string) Figure {
	return Figure{Name: "pages fetched twice", Value: float64(total), Aim: exactly(0), Detail: strings.Join(detail, "; "),
		Why: "a task is leased by one worker at a time and its page commits with its cursor: a 429 is waited out, never answered 200 twice."}
}

func dupDetail(label string, dups []string, distinct int) string {
	s := fmt.Sprintf("%s: %d of %d distinct pages twice", label, len(dups), distinct)
	if len(dups) > 0 {
		s += " (" + strings.Join(dups[:min(3, len(dups))], ", ") + ")"
	}
	return s
}

// Workload 10: workload 1 without api.rate, with Retry-After in each of
// its forms (whole seconds, an HTTP date, none, garbage: the last two fall
// back on the retry back-off).
func runQuotaAuto(ctx context.Context, e *env) (*outcome, error) {
	d := e.size.autoQuotaT
	out := &outcome{setup: fmt.Sprintf("sandbox bucket R = %g/s, burst %d per key; api.rate unset; %d workers; %d seed accounts of 1,000,000 followers each, followers walked to the end; pipeline in-process; %s for each form of Retry-After the sandbox sends (seconds, date, none, garbage), a fresh sandbox and database each. 429s per 1000 counted after the first %s.",
		quotaR, quotaB, autoWorkers, quotaSeeds, d, autoWarm)}
	var dups []string
	total := 0
	for _, mode := range []string{sandbox.RetryAfterSeconds, sandbox.RetryAfterDate, sandbox.RetryAfterNone, sandbox.RetryAfterGarbage} {
		m, err := measureQuotaWith(ctx, e, quotaSpec{label: "quotaauto", d: d, workers: autoWorkers, retryAfterMode: mode, track: true})
		if err != nil {
			return out, fmt.Errorf("Retry-After %s: %w", mode, err)
		}
		label := "api.rate unset, Retry-After " + mode
		late := autoLate(m.arr, m.t0, m.t0.Add(d))
		detail := fmt.Sprintf("%d billable 2xx of %.0f allowed (R·T + B, T = %.0f s); %d 429s in %d requests, %d of them in %d requests after the first %s; %d pauses",
			m.w.ok, m.allowed, m.w.seconds(), m.w.limited, m.w.requests, late.limited, late.requests, late.from.Sub(m.t0), m.pauses)
		secs, ok := settleOf(m.arr, m.t0, m.t0.Add(d), quotaR)
		out.figures = append(out.figures,
			Figure{Name: "fraction of the allowed rate, " + label, Value: m.fraction(), Aim: atLeast(0.95), Detail: detail,
				Why: "the first 429s cost a pause each until the quota and its burst are measured; then the rate is held at 99.5% of the estimate and probes above it rarely (one pause per probe)."},
			Figure{Name: "429s per 1000 requests after the first 10 s, " + label, Value: late.per1000(), Aim: atMost(5), Detail: detail,
				Why: "one 429 event per probe (a hold of 60 s doubling to 2 minutes while the quota stays): the requests in flight when the first 429 was answered meet it too."},
			settleFigure("seconds to reach 90% of R, "+label, secs, ok, quotaR, settleHold(d)),
		)
		total += len(m.dups)
		dups = append(dups, dupDetail("Retry-After "+mode, m.dups, m.distinct))
	}
	out.figures = append(out.figures, dupFigure(total, dups))
	return out, nil
}

// Workload 11: workload 2 without api.rate.
func runRateChangeAuto(ctx context.Context, e *env) (*outcome, error) {
	phase := e.size.changePhase
	out := &outcome{setup: fmt.Sprintf("as workload 2 (R = 50 -> 20 -> 50 requests/s, burst %d, %s each) with api.rate unset and %d workers; the fraction of the allowed rate counts the whole run (R·phase summed over the phases + B).",
		quotaB, phase, autoWorkers)}
	cr, err := rateChange(ctx, e, out, "ratechangeauto", 0, autoWorkers, true)
	if err != nil {
		return out, err
	}
	end := cr.changes[len(cr.changes)-1].Add(phase)
	w := countWindow(cr.arr, cr.t0, end)
	allowed := float64(quotaB)
	starts := append([]time.Time{cr.t0}, cr.changes...)
	for i, r := range cr.rates {
		to := end
		if i+1 < len(starts) {
			to = starts[i+1]
		}
		allowed += r * to.Sub(starts[i]).Seconds()
	}
	late := autoLate(cr.arr, cr.t0, end)
	detail := fmt.Sprintf("%d billable 2xx of %.0f allowed in %.0f s; %d 429s in %d requests, %d in %d after the first %s",
		w.ok, allowed, w.seconds(), w.limited, w.requests, late.limited, late.requests, late.from.Sub(cr.t0))
	out.figures = append(out.figures,
		Figure{Name: "fraction of the allowed rate, api.rate unset", Value: float64(w.ok) / allowed, Aim: atLeast(0.95), Detail: detail,
			Why: "the start finds the quota from nothing (two pauses); a drop costs two or three 429 pauses at the lower rate, and the probes that watch for its return one pause at that rate every 5 s or so; the rise is found by the next of them and measured by one more pause."},
		Figure{Name: "429s per 1000 requests after the first 10 s, api.rate unset", Value: late.per1000(), Aim: atMost(5), Detail: detail,
			Why: "each change of the quota costs a few 429 events: a drop until the estimate is under the new rate, a rise at the probe that finds it."},
		dupFigure(len(cr.dups), []string{dupDetail("the run", cr.dups, cr.distinct)}),
	)
	return out, nil
}

// Workload 14: workload 7 without api.rate, as long as workload 11: the processes share
// one view of the key's quota through the database (package pipeline/quota).
func runScaleOutAuto(ctx context.Context, e *env) (*outcome, error) {
	d := e.size.autoScaleT
	out := &outcome{setup: fmt.Sprintf("as workload 7 (1, 2 and 3 crawler processes on one run and one key, sandbox bucket R = %g/s, burst %d, %d workers each, %d seed lists, processes 2 and 3 joining at the first request, %s each) with api.rate unset: the processes share the quota through PostgreSQL (a leader measures it, each process sends its part by the tasks it holds, a 429 pauses all). 429s per 1000 counted after the first %s.",
		quotaR, quotaB, quotaWorkers, quotaSeeds, d, autoWarm)}
	dir, err := os.MkdirTemp("", "bench-scaleoutauto-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	var dups []string
	total := 0
	for n := 1; n <= 3; n++ {
		r, err := e.scaleRun(ctx, dir, n, d, 0)
		if err != nil {
			return out, fmt.Errorf("%d processes: %w", n, err)
		}
		detail := fmt.Sprintf("%d billable 2xx of %.0f allowed in %.0f s; %d 429s in %d requests, %d in %d after the first %s; %d pauses with no 2xx at the upstream",
			r.w.ok, r.allowed, r.w.seconds(), r.w.limited, r.w.requests, r.late.limited, r.late.requests, autoWarm, r.pauses)
		perReq := 0.0
		if r.w.requests > 0 {
			perReq = float64(r.statements) / float64(r.w.requests)
		}
		out.figures = append(out.figures,
			Figure{Name: fmt.Sprintf("total billable / allowed by the bucket, %d process(es), api.rate unset", n), Value: float64(r.w.ok) / r.allowed, Aim: atLeast(0.95), Detail: detail,
				Why: "one process finds the quota from its first 429s; the others join its estimate through the database and send their part of it; a 429 of any pauses all, so the upstream bucket is full when they resume, as with one process."},
			Figure{Name: fmt.Sprintf("429s per 1000 requests after the first 10 s, %d process(es), api.rate unset", n), Value: r.late.per1000(), Aim: atMost(5), Detail: detail},
			Figure{Name: fmt.Sprintf("database statements per request for sharing the quota, %d process(es)", n), Value: perReq,
				Detail: fmt.Sprintf("%d statements (heartbeats once a second per process, publications, pause notifications) for %d requests", r.statements, r.w.requests),
				Why:    "the cost follows time and 429 events, not requests: one heartbeat per process per second."},
		)
		total += len(r.dups)
		dups = append(dups, dupDetail(fmt.Sprintf("%d process(es)", n), r.dups, r.distinct))
	}
	out.figures = append(out.figures, dupFigure(total, dups))
	return out, nil
}
