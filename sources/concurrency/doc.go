// Package concurrency is the adaptive limit of one API key's requests in
// flight in a process: a slot taken before each request (Acquire), given
// back with the request's Sample, and a limit that finds the upstream's
// knee with no settings. It works beside package ratecontrol: 429s steer
// the rate, answer times steer the concurrency.
//
// # Why
//
// The real service answers in 2-4 s (5-30 s for transcripts and comments
// with replies) and publishes no limit. A list is walked page after page,
// so throughput comes only from many requests in flight: at 3 s an answer,
// 4 in flight make 1.3 requests/s whatever the quota. Beyond the
// upstream's knee (its servers busy) more requests in flight only wait
// longer: the answer time grows with the load, throughput does not.
//
// # The signal: elasticity
//
// Answer times are noisy (2-4 s uniform is a spread of 0.2 in log time,
// an M/M/c queue's 1.3) and depend on the endpoint, so the minimum answer
// time that TCP Vegas and Netflix's Vegas limit take as the floor is far
// below the typical one, and drifts with the mix; Gradient2's long average
// drifts with the queue it should detect. This controller measures
// instead how the answer time answers the load: the steady phase
// alternates rounds above and below a centre (plus and minus 15%), and
// the elasticity
//
//	eps = 1 - d ln(answer time) / d ln(load)
//
// is the share of a change of load that shows as throughput (Little's law:
// throughput = load / answer time). It is 1 below the knee, 0 beyond it
// (every request added waits for the ones ahead), and needs no floor. A
// round's level is the median of its log answer times less each
// endpoint's typical one (the same norms for the rounds compared, so a
// change of the mix cancels); a round's load is the slots held as its
// requests took theirs (what each met upstream). Three rounds are read
// together, one side around two of the other, all opened since the centre
// last moved: the middle against the mean of the outer two is free of a
// drift of the upstream, and the outer two differing (at one load) says the
// upstream is changing, and the triple is not read. Rounds last at least half an
// answer time and take enough requests for the medians' noise to be about
// a third of the alternation's step; the answers still out when a round
// is read count as slower than any, once even its latest request is out
// longer than its median (so the count is exact).
//
// # The controller
//
//   - Start: 16 requests a second (InitialDefault) until an answer
//     comes (at 20 s answers some 220 by then, rather than 16 for the
//     first answer time: the doubling from 16 to what 100/s needs took
//     seven answer times), then doubled each round (an answer
//     time) while the answer time keeps level (elasticity 0.5 or more),
//     as TCP's slow start. The doubling waits for each round's answers,
//     and hands its new slots out over the answer time rather than at once
//     (an upstream's bucket admits few requests at once: a burst would
//     meet 429s at a fraction of its rate). When a doubling shows a queue,
//     the centre goes where the knee is read between the two loads. Only
//     a step of load of 0.2 e-folds or more is read so: at the ceiling the
//     rounds' loads differ by a few percent, which the noise of short
//     answer times would read as a knee.
//   - Steady: the centre moves by gain x (eps - 0.2), weighted down when
//     the elasticity is noisy (a Wiener-like weight from its standard
//     error), bounded to 0.3 e-folds a move; clear moves up in a row
//     double each, and two rounds at 0.8 or more go back to doubling (the
//     upstream recovered, or was never near its knee), up to twice the
//     latest knee read. At 0.2 the centre sits a little beyond the knee:
//     the round below it still fills the upstream's servers, the one
//     above queues a little. After a move, a triple's first round may be
//     from before it; its middle and latest not.
//   - Cut to the knee: past the knee the answer time grows as the load, so
//     a round's level above a reference round's (the lower load of the
//     latest rounds that showed no queue) says how far: knee = load x
//     exp(-excess). When the rounds show a queue, or the upstream answers
//     slower than the reference by more than the load explains (a
//     degradation: its knee halved), the centre goes there in one move.
//   - Failures: a round whose share of 5xx and timeouts exceeds the
//     background share by 10 points cuts the centre by a fifth, once per
//     round trip; a steady share becomes background (nothing cut for it).
//   - The rate: when the rate control has a bucket (api.rate, or after
//     429s), the centre is held under what the rate needs in flight
//     (Little's law: rate x mean answer time, x1.25 + 8): requests
//     waiting for a token are not upstream queueing, and must neither
//     grow the limit (memory) nor read as a queue. A round whose slots
//     spent more than a tenth of their time waiting to be sent (tokens,
//     429 pauses) is not read at all, so a pause collapses nothing.
//     While the rate control probes above a first estimate that may be
//     a loose lower bound (Config.Loose) and the slots are full, the
//     limit follows the probe's rate at once (followRate): held at what
//     the loose read needs, the requests in flight would hold the probe
//     under the quota, and its 429 would come from a bunch and read
//     low again, held a minute.
//   - Bounds: at least 1, at most Config.Ceiling (limits.workers) and
//     HardCeiling (4096); a round whose slots were not used (fewer lists
//     than the limit) is no reason to grow.
//
// # Watching
//
// Status reports the limit, the slots held, the latest move and why
// (start, latency, rate, errors, ceiling), the moves so far by reason
// and direction, and the slot-seconds held (whose increase over an
// interval is the mean in flight).
//
// # One key, several processes
//
// Each process runs its own limiter: the signal, the answer times, is the
// upstream's and common to all, so processes sharing a key each read the
// same knee, as TCP Vegas flows share a link. The rate each is held
// under is its share of the key's (ratecontrol's SharedQuota).
//
// # Files
//
// limiter.go holds the Limiter and its slots; controller.go the rounds'
// course and the limit they run at; signal.go the reading of the rounds
// (elasticity, knee, failures); round.go a round's figures; status.go
// what watchers read; tuning.go the constants.
package concurrency
