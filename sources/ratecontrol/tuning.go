package ratecontrol

import "time"

// Tuning of the Controller; see the package doc.
const (
	rateFloor       = 0.5                 // requests per second: the lowest rate the control sets
	settleFraction  = 0.995               // of the estimate
	dropCap         = 0.85                // of the rate an unexpected 429 came at, unmeasured
	slightCap       = 0.99                // of the rate an unexpected 429 came at, measured
	maxRate         = 1e6                 // requests per second: a probe without a ceiling stops here
	probeGrowth     = 0.22314355131420976 // ln(1.25): +25% per second
	discoveryGrowth = 1.0986122886681098  // ln(3): x3 per second, before any estimate without a ceiling
	// sharedProbeGrowth is a third of probeGrowth (+7.7% per second),
	// for a leader of several processes: it reads the key's rate as its
	// own successes plus the followers' rate, and over a probe's window
	// (from where the upstream's bucket was last full to the 429) each
	// follower's count is a request more or less than that rate says.
	// At +25% per second the window was 1.3 s and the read 1-3% under R
	// at three processes (48.4/s for 50, held two minutes: 0.941 of the
	// quota). Three times as long, the simulation's three processes over
	// 120 s (20 joins in the first 60 ms, 20 from 0.1 to 2 s, at 5 and
	// 50 ms answers) read 0.953-0.968 on average, 6 of 80 under 0.95
	// (the code before: 0.947-0.957, 34 of 80).
	sharedProbeGrowth = probeGrowth / 3
	// probeLead bounds a probe to this many times the requests that left
	// in the last second.
	probeLead = 4
	holdMin   = 60 * time.Second
	// maxLag bounds the wait of a 429's reaction for the answers to the
	// requests sent before it.
	maxLag  = time.Minute
	holdMax = 120 * time.Second
	// holdAfterDrop is the hold for dropWatch after a drop: the quota may
	// come back, and a probe straight to the rate before the drop costs
	// only a pause at the low rate (about R - B requests of quota).
	holdAfterDrop = 5 * time.Second
	dropWatch     = 60 * time.Second
	// holdFirstRead is the hold of the first estimate measured (see
	// nextHold).
	holdFirstRead = 5 * time.Second
	// shareSettle is how long after a 429 this process may see the shares
	// change that sent the key above its rate (shareMoved): the others see
	// a change within a heartbeat (a second), or a notification's round
	// trip.
	shareSettle = time.Second
	// returnConfirm is how long a probe after a drop runs at the rate
	// before the drop, without a 429, to show the quota came back.
	returnConfirm   = time.Second
	sameQuota       = 0.05 // relative change of the estimate still "the same quota"
	estimateHorizon = 10 * time.Second
	// minWindow is the shortest window the rate is measured over: shorter,
	// answers read together and an uncertain burst weigh too much.
	minWindow = 250 * time.Millisecond
	// estimateLift places the estimate inside the interval the 429 leaves
	// R in: [(n - B)/w, (n - B + 1)/w) for the window since the upstream
	// bucket was last full (it was empty at the 429, with less than a token).
	estimateLift = 0.5
	// burstSlack: B is a whole number of tokens at least the bound
	// n - R*w, which the few milliseconds between the first answers of a
	// burst lower by R*w (a third of a token at 7 ms and 50/s): the bound
	// is rounded up, less this slack for an estimate of R a little low.
	burstSlack = 0.25
	// burstSpan is the longest window the burst is measured over.
	burstSpan = 250 * time.Millisecond
	// napMax bounds the sleep of a request waiting for a token: the
	// rate is set at each turn (adjust), and at 0.5/s a follower that
	// slept for its next token (2 s) took the leader's estimate that
	// late, sending a fiftieth of its part while the leader counted it
	// whole: the leader read 63/s for 50, and two pauses followed (bench
	// workload 14, three processes).
	napMax = 100 * time.Millisecond
	// minExcess is the fewest successes beyond the burst a window needs
	// for its bound (n - B)/w to be within 1/minExcess of R.
	minExcess = 10
)
