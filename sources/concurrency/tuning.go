package concurrency

import "time"

// HardCeiling bounds the requests in flight of one client whatever the
// job file says: each costs a goroutine, a connection and its buffers
// (some 20-60 KB with TLS) and, as it is read, a body counted against the
// in-flight body budget (sources.Config.MaxInflightBytes), so memory stays
// a function of configuration. 4096 covers 100 requests/s at 30 s an
// answer with room to spare.
const HardCeiling = 4096

// InitialDefault is the limit a run starts from (or the ceiling, when
// lower): as many requests as Scrapy's defaults keep going, doubled each
// round while the answers keep their time.
const InitialDefault = 16

// Tuning of the controller; see the package doc.
const (
	minLimit = 1
	// dither is the half-amplitude of the steady phase's alternation
	// between rounds above and below the centre: the two loads whose answer
	// times are compared.
	dither = 0.15
	// target is the elasticity the steady phase holds: the share of a
	// change of the load that shows as a change of throughput. 1 below the
	// knee (answer times flat), 0 beyond it (every request added queues).
	// Under 0.5 the centre sits a little beyond the knee, so that the round
	// below it still fills the upstream's servers.
	target = 0.2
	// gain is how far the centre moves per round, in e-folds per unit of
	// elasticity off target: the elasticity falls from 1 to 0 over about
	// 0.3 e-folds of load about the knee, so a gain of 0.3 closes the gap
	// in about one move without overshooting it.
	gain = 0.3
	// kneeMargin is where a cut to the knee puts the centre (e-folds
	// above the knee read): where the target elasticity holds it. minCut
	// is the least cut made that way.
	// runGrowth is how much larger each clear move up in a row is than
	// the one before, up to runMax moves: the knee may be far above.
	runGrowth  = 1.5
	runMax     = 4
	kneeMargin = 0.07
	minCut     = 0.1
	// maxStep bounds one move of the centre (e-folds), minStep is the
	// least that counts as one.
	maxStep = 0.3
	minStep = 0.01
	// seRef is the standard error of an elasticity that halves its move.
	seRef = 0.5
	// levelError is the standard error of the difference of two rounds'
	// levels a steady round is sized for: a third of the dither's step.
	levelError = 0.07
	// spreadInitial is the spread assumed before any is measured (log
	// answer times: 2-4 s uniform is 0.2); spreadWeight the weight of a
	// round in its estimate.
	spreadInitial = 0.3
	spreadWeight  = 0.2
	// maxRoundSamples bounds a steady round's size; maxRoundLength its
	// length, in median answer times, when requests come slowly.
	maxRoundSamples = 2000
	maxRoundLength  = 20
	// startExit is the elasticity under which the doubling stops: the
	// answer time grew by more than 2^(1-startExit) when the load doubled.
	startExit = 0.5
	// climbAgain is the elasticity that, held for climbRounds rounds in a
	// row, sends the steady phase back to doubling: the upstream recovered,
	// or was never near its knee.
	climbAgain  = 0.8
	climbRounds = 2
	// kneeReach bounds such a doubling: twice the latest knee read.
	kneeReach = 2
	// appLimited: a round whose slots were never held to this share of
	// its limit did not use the limit; it is no reason to grow.
	appLimited = 0.9
	// minLoadStep is the smallest change of load (e-folds) between two
	// rounds that says anything of the elasticity.
	minLoadStep = 0.05
	// minDoublingStep is the smallest change of load (e-folds) between two
	// rounds that the starting phase reads as a doubling: a doubled limit
	// is 0.69, one capped by the ceiling somewhat less.
	minDoublingStep = 0.2
	// rateBound: a round whose slots spent more than this share of their
	// time waiting to be sent (rate tokens, 429 pauses) is bound by the
	// rate control, and its answer times say nothing of the load.
	rateBound = 0.1
	// rateMargin and rateSlack size the limit when the rate binds: the
	// requests needed in flight at the rate (Little's law: rate x mean
	// answer time), times rateMargin, plus rateSlack; enough for the rate
	// control always to find a request waiting, no more.
	rateMargin     = 1.25
	rateSlack      = 8
	rateHysteresis = 0.1
	// errExcess, errMin, errCut: a round whose share of failed requests
	// (5xx, timeouts) exceeds the background share by errExcess, with at
	// least errMin of them, cuts the centre by errCut.
	errExcess = 0.1
	errMin    = 3
	errCut    = 0.8
	// errMemory is the weight of a round in the background share of
	// failures: a steady share becomes background within some 20 rounds.
	errMemory = 0.1
	// normWeight is the weight of a sample in its endpoint's typical log
	// answer time, which only removes the endpoints' mix from the signal.
	normWeight = 0.02
	// minRoundSamples is the fewest requests a round takes before it
	// closes, minEvalSamples the fewest answers that make it count.
	minRoundSamples = 8
	minEvalSamples  = 4
	// censored is the share of a round's requests that may still be out
	// when it is evaluated (their answer times count as longer than any);
	// evalWait bounds the wait, in median answer times past its end.
	censored = 0.25
	evalWait = 10
	// refMaxAge is how long a reference round is kept: the upstream's
	// floor may move.
	refMaxAge = 2 * time.Minute
	// minRefSamples is the fewest answers of a reference round.
	minRefSamples = 12
	// minRound is the shortest round; roundShare the shortest steady
	// round, in median answer times.
	minRound   = 10 * time.Millisecond
	roundShare = 0.5
)
