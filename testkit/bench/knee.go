package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/listwalk"
)

// Workloads 18 and 19: an upstream that saturates. Its servers take c
// requests at once, first come first served (an M/G/c queue in front of
// the sandbox, whose answer time is the service time): beyond c requests
// in flight the answers only wait longer. Its knee's throughput is c over
// the mean service time, measured in the same run from the requests it
// served; the answer time's floor is the median service time. No quota,
// no settings; a client walks more lists than the knee needs (package listwalk).

// kneeUpstream serves a sandbox answering in svc ± a fifth behind c servers.
func kneeUpstream(c int, svc time.Duration) (*upstream, *serverGate, error) {
	gate := newServerGate(c)
	jitter := 2 * svc / 5
	up, err := newGatedUpstream(sandbox.Config{Faults: sandbox.Faults{Latency: svc - jitter/2, LatencyJitter: jitter}}, false, gate)
	return up, gate, err
}

// kneeRun walks lists through a client with no settings against up for d
// from its first request, calling at(elapsed) once a second; it returns
// the first request's time.
func kneeRun(ctx context.Context, up *upstream, lists int, d time.Duration, at func(time.Duration)) (time.Time, *listwalk.Walker, error) {
	w, err := listwalk.New(up.url, apiKey, nil)
	if err != nil {
		return time.Time{}, nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Walk(rctx, lists, "knee")
	}()
	t0, err := up.firstArrival(rctx)
	if err != nil {
		return time.Time{}, nil, err
	}
	for s := time.Second; s <= d; s += time.Second {
		if !sleepUntil(rctx, t0.Add(s)) {
			break
		}
		if at != nil {
			at(s)
		}
	}
	cancel()
	<-done
	return t0, w, nil
}

func runKnee(ctx context.Context, e *env) (*outcome, error) {
	k := e.size.knee
	out := &outcome{setup: fmt.Sprintf("an upstream of %d servers taking requests first come first served in front of the sandbox, each answer taking %s ± a fifth (uniform); no quota; sources.Client with no settings walking %d lists page after page (a goroutine each, no database); %s, the first %s not counted.",
		k.servers, k.service, k.lists, k.d, k.warm)}
	up, gate, err := kneeUpstream(k.servers, k.service)
	if err != nil {
		return out, err
	}
	defer up.close()
	t0, w, err := kneeRun(ctx, up, k.lists, k.d, nil)
	if err != nil {
		return out, err
	}
	from, to := t0.Add(k.warm), t0.Add(k.d)
	served := gate.served(from, to)
	f := figuresOf(served, to.Sub(from).Seconds())
	knee := float64(k.servers) / f.meanService.Seconds()
	mean := meanAnswer(served)
	lo, hi, inFlight := w.Limits(from, to)
	detail := fmt.Sprintf("%d answers in %.0f s = %.1f/s; knee %d servers / %s mean service = %.1f/s; median answer time %s (queue and service), median service %s; mean answer time %s; the limit stayed in %d-%d, %.1f in flight on average",
		f.n, to.Sub(from).Seconds(), f.perSecond, k.servers, f.meanService.Round(time.Millisecond), knee, f.median.Round(time.Millisecond), f.medianService.Round(time.Millisecond), mean.Round(time.Millisecond), lo, hi, inFlight)
	return out, addFigures(out,
		Figure{Name: "throughput / the knee's, no settings", Value: f.perSecond / knee, Aim: atLeast(0.9), Detail: detail,
			Why: "the steady phase alternates rounds 15% above and below a centre and holds the elasticity of the answer time to the load at 0.3: the round below the centre still fills the servers, the one above queues."},
		Figure{Name: "median answer time / its floor (the median service time), no settings", Value: f.median.Seconds() / f.medianService.Seconds(), Aim: atMost(1.5), Detail: detail,
			Why: "the queue the round above the centre builds (up to about a quarter of the servers' work), and the median's share of it."},
		// Issue 34's aim is on the mean, which the queue's tail weighs more.
		Figure{Name: "mean answer time / its floor (the mean service time), no settings", Value: mean.Seconds() / f.meanService.Seconds(), Aim: atMost(1.5), Detail: detail,
			Why: "the queue the round above the centre builds, over every answer: the requests beyond the servers wait a service time each."},
	)
}

// meanAnswer is the mean answer time (queue and service) of the visits.
func meanAnswer(vs []visit) time.Duration {
	if len(vs) == 0 {
		return 0
	}
	var sum time.Duration
	for _, v := range vs {
		sum += v.ended.Sub(v.arrived)
	}
	return sum / time.Duration(len(vs))
}

// addFigures appends figs to out's figures (nil error: a workload's
// figures added last).
func addFigures(out *outcome, figs ...Figure) error {
	out.figures = append(out.figures, figs...)
	return nil
}

func runDegrade(ctx context.Context, e *env) (*outcome, error) {
	k := e.size.knee
	down, back, end := k.phase, 2*k.phase, 3*k.phase
	out := &outcome{setup: fmt.Sprintf("as workload 18 (%d servers, answers in %s ± a fifth, no quota, no settings, %d lists), the servers halved to %d from %s to %s, then back, for %s in all.",
		k.servers, k.service, k.lists, k.servers/2, down, back, end)}
	up, gate, err := kneeUpstream(k.servers, k.service)
	if err != nil {
		return out, err
	}
	defer up.close()
	t0, w, err := kneeRun(ctx, up, k.lists, end, func(el time.Duration) {
		switch el {
		case down:
			gate.resize(k.servers / 2)
		case back:
			gate.resize(k.servers)
		}
	})
	if err != nil {
		return out, err
	}
	// Down: from the first instant after the change from which the
	// requests at the upstream (queued or served) stay within 1.5 x the
	// servers left, until the recovery.
	var ts []time.Time
	for t := t0.Add(down); t.Before(t0.Add(back)); t = t.Add(250 * time.Millisecond) {
		ts = append(ts, t)
	}
	counts := gate.inSystem(ts)
	followDown, settled := time.Duration(0), false
	for i, n := range counts {
		if float64(n) > 1.5*float64(k.servers/2) {
			settled = false
		} else if !settled {
			followDown, settled = ts[i].Sub(t0.Add(down)), true
		}
	}
	// Up: the first 5 s window after the recovery at 90% of the knee's
	// throughput (its mean service time as measured before the change).
	f := figuresOf(gate.served(t0.Add(down/2), t0.Add(down)), (down / 2).Seconds())
	knee := float64(k.servers) / f.meanService.Seconds()
	followUp, up90 := time.Duration(0), false
	win := min(5*time.Second, k.phase/2)
	for s := t0.Add(back); !s.Add(win).After(t0.Add(end)); s = s.Add(250 * time.Millisecond) {
		if figuresOf(gate.served(s, s.Add(win)), win.Seconds()).perSecond >= 0.9*knee {
			followUp, up90 = s.Sub(t0.Add(back)), true
			break
		}
	}
	during := figuresOf(gate.served(t0.Add(down+k.phase/2), t0.Add(back)), (k.phase / 2).Seconds())
	lo, hi, _ := w.Limits(t0.Add(down+k.phase/2), t0.Add(back))
	detail := fmt.Sprintf("knee %.1f/s before the change (%d servers / %s mean service); in the second half of the degradation %.1f answers/s (%.2f of its knee), median answer time %s, the limit in %d-%d",
		knee, k.servers, f.meanService.Round(time.Millisecond), during.perSecond, during.perSecond/(knee/2), during.median.Round(time.Millisecond), lo, hi)
	downFig := Figure{Name: "seconds to follow the knee down (requests at the upstream within 1.5 x its servers)", Value: followDown.Seconds(), Unit: "s", Aim: atMost(30), Detail: detail,
		Why: "the triple of rounds after the change reads the answer times' excess over the reference round's (which answered at the floor) and cuts to the knee it shows in one move: about three rounds of half an answer time, and their answers."}
	if !settled {
		downFig.Value, downFig.Text = k.phase.Seconds(), fmt.Sprintf("> %.0f s (not within the degradation)", k.phase.Seconds())
	}
	upFig := Figure{Name: "seconds to follow the knee back up (throughput at 90% of the knee's over 5 s)", Value: followUp.Seconds(), Unit: "s", Aim: atMost(30), Detail: detail,
		Why: "no queue shows once the servers are back (elasticity 1): moves up grow half again each time, and two clear rounds in a row go back to doubling."}
	if !up90 {
		upFig.Value, upFig.Text = k.phase.Seconds(), fmt.Sprintf("> %.0f s (not within the run)", k.phase.Seconds())
	}
	return out, addFigures(out, downFig, upFig)
}
