// Package ratecontrol is the per-key gate every request of a
// sources.Client passes: a pause shared by all workers after a 429, then a
// token bucket whose rate and burst adapt to the upstream's quota. With
// api.rate set, the bucket starts at that ceiling and never goes above it;
// without it, there is no bucket until the first 429s have shown where the
// quota is.
//
// # Why not plain AIMD
//
// The upstream's quota is a token bucket too: R requests/s per key, burst B.
// A 429 costs much more than the request it refuses: every worker then waits
// for Retry-After (at least a second in its seconds form), while the upstream
// bucket refills only up to B, so one 429 wastes about R*pause - B requests of
// quota (40 of 50 at R = 50/s, B = 10). A controller that halves on a 429 and
// adds a step per success oscillates around R and pays that price every few
// seconds. This one aims at no 429 at all: it measures R when it meets it,
// settles just under it, and probes above it rarely.
//
// # The algorithm
//
//   - Start at the ceiling (api.rate), or with no bucket at all when there is
//     none. With the quota configured exactly (api.rate = R, api.burst = B)
//     no 429 happens: our bucket never sends more than theirs admits, and it
//     holds a fifth of B (at least 1) less than B, so that requests delayed
//     on their way and arriving together still find tokens upstream (see
//     jitterMargin).
//   - The workers waiting for a token queue first come first served, and
//     only the head sleeps until the next one is due: at long answer
//     times hundreds wait, and woken all at every token they cost most of
//     a core and left late, in bunches the upstream's bucket refused.
//   - On a 429 every worker pauses for Retry-After. All 429s answered while a
//     pause is in effect are one event (requests that were already in
//     flight), and the reaction is computed when the pause ends, once the
//     answers to the requests sent before the 429 have come back.
//   - Answers take time (2-4 s at the real service, up to 30 s), and the
//     upstream's bucket counts a request when it arrives: successes are
//     counted at their requests' send times, and a 429 at its request's.
//     When answers take longer than the pause, the reaction waits after
//     it for as long as the latest answers took (or for a first answer,
//     when none came yet), at an interim rate (the rate held before a probe
//     that met the 429, or from the first estimate, which may be loose, 85%
//     of what left in the second before it if more; a cut of the rate an
//     unexpected one came at; with no estimate yet, half the rate requests
//     left at), halved by each 429
//     meanwhile; the windows then count every success sent before the 429.
//     Burst windows reach back as far again, to the start's full bucket.
//   - A request the 429 refused is retried first when the pause ends
//     (WaitRetry): it borrows its token from our bucket (at most a burst
//     below empty) instead of queueing behind the requests that waited
//     out the pause, so its item resumes within the pause and one round
//     trip. The upstream's bucket refilled during the pause; the rate
//     over a second is unchanged. (Its slot too comes first:
//     concurrency.Limiter.AcquireFirst.)
//   - Measure the quota. In any window [s, t] the upstream admits at most
//     B + R*(t-s) requests, so (n - B)/(t-s), with n the successes in the
//     window, is a lower bound of R; over the window that starts when the
//     upstream bucket was last full and ends at the 429 (bucket empty) it is
//     within 1/(t-s) of R. The estimate is the largest of these bounds over
//     the windows ending at the 429, within the last 10 s, that hold at least
//     10 successes beyond B (so it is within 10% of R, in practice 1-2%).
//   - Measure the burst with it (see measure). Given R, every window of
//     successes bounds B from below by n - R*(t-s); a window in which a full
//     upstream bucket was emptied at once (the workers' first requests, or
//     theirs after a pause) reaches it. On a probe, or a 429 under a guess,
//     the estimate of B starts at api.burst (1 without a ceiling): the largest such bound at the
//     estimated R, rounded up (B is whole; the first answers of a burst are
//     read a few milliseconds apart), and R again at that B, until they
//     agree. Too small a B
//     overestimates R by (B - estimate)/(t-s), too large one underestimates
//     it by as much; our bucket's burst follows the estimate. A window's
//     bound is larger the lower R, so the windows are kept (per 5 ms of
//     length, the one of the most successes) and each probe reads B from
//     them again at the R it reads: a first read's low R (46/s for 100/s
//     at 20 s answers read B 17 for 10) no longer holds every later
//     estimate under R (92.4/s, when B only grew). After a drop only the
//     B read stands for them. The workers' first requests, all sent at
//     once, may arrive spread out (each on a new connection): the burst
//     reads each of their successes as much later than its send time as
//     it came back later than the quickest one, no later than the latest
//     429 among them came back (a 429 is answered at once, so answer
//     times that only vary do not read as a spread); read at their send
//     times they showed B 12-13 for 10, and every estimate after was
//     47/s for 50 (workload 12). When they do
//     not agree (each lower R reads a larger B: successes in bunches under
//     the rate, a 429 of a bunch), nothing is measured: R is guessed from
//     what was admitted and probed at once.
//   - Settle at 99.5% of the estimate (never above the ceiling) and hold.
//   - Without enough successes to measure (the 429 came right after a
//     burst, e.g. at the start with a ceiling far above R, or with no
//     ceiling at all), start from half the rate the 429 came at (without a
//     bucket: the successes sent in the second before the 429 and until it
//     came back, per second) and
//     probe at once, to measure on the way up. Without a ceiling the first
//     such probe triples the rate every second rather than adding 25%, so
//     that an unknown quota is found within a few seconds: at R = 50/s,
//     B = 10 the first estimate comes about 3 s into the run, within 1-2%.
//   - A 429 that comes while at or under a measured estimate (not probing)
//     means the estimate was a little high or the quota dropped (under a
//     guess it only cuts the guess: it is part of finding the quota, and
//     leaves the start's burst to measure B; another process joining with
//     no estimate yet meets one so): the estimate then
//     only counts windows since the last pause (and never again windows
//     before this one), and is capped at 99% of the rate the 429 came at
//     (85% when too few successes measure it). If the quota dropped within
//     the windows, the rate is still above R: our bucket starts the next
//     period empty, leaving the upstream's B tokens as the margin, and the
//     next 429 comes soon and measures R since this pause. A drop is
//     followed within two 429s. For a minute after it (dropWatch) the
//     quota may come back as suddenly: a probe every 5 s jumps straight to
//     the estimate before the drop, which costs one pause at the low rate
//     (about R - B requests of quota) while it is still low, and finds a
//     quota that came back within seconds, without a ramp.
//   - The concurrency limit (package concurrency) sizes the requests in
//     flight on Steady, the rate held, leaving aside an interim's wait;
//     on a probe, the probe's rate, not the bound below; and it follows
//     a probe from the first estimate (Loose) at once, which may be a
//     loose lower bound.
//     A probe's bucket never runs ahead of four times what left in the
//     last second: requests held back by something else (the requests in
//     flight) would pile up behind a pause and leave together, a burst
//     the upstream refuses well under its rate.
//   - After the hold, probe: the rate grows by 25% per second (time-based,
//     not per request, so the speed of discovery does not depend on the
//     number of workers) up to the ceiling, so a raised quota is found within
//     seconds once the probe starts. The next 429 ends the probe and
//     measures R again. A leader of other processes probes at a third of
//     that (sharedProbeGrowth): it counts the followers at their rate, not
//     request by request, and only a longer window reads R as closely.
//   - The hold starts at 60 s and doubles, up to 2 minutes, each time a
//     probe finds the same quota (within 5%); it goes back to its start when
//     the estimate moved. The first estimate measured (requests sent as
//     the concurrency limit's slow start let them, maybe under R, or a
//     probe's held back by the requests in flight) is held only 5 s,
//     however long the answers take: it may be a loose lower bound. Not
//     when our bucket held the requests back all the way from the last
//     pause to the 429 (each left with another waiting for a token): the
//     rate then crossed R from a full upstream bucket and the read is
//     as tight as any later one (its second probe cost a pause, 40
//     requests of 50/s, to find the same). Every probe costs a pause (R*pause - B requests
//     of quota, about 0.7% of it at one every 2 minutes): probing rarely
//     is what lets a run spend 95% of an unknown quota, and a quota raised
//     mid-run is found within the hold, a minute or two: that is the
//     trade-off, since only a 429 says where R is.
//
// A request waiting for a token asks again after napMax at most: the rate
// is set when one asks, and a follower sending 0.5/s took the leader's
// estimate two seconds late.
//
// With a logger (SetLogger), each pause and each reaction to a 429 is
// logged at debug level: the estimate, the burst, the hold.
//
// # One quota, several processes
//
// With a Sharer (package pipeline keeps it in PostgreSQL) the N live
// processes on a key act as one: a 429 of any of them pauses all (so the
// upstream bucket is full when the pause ends, as with one process), and
// one of them, the leader, runs the control above for the whole key. The
// others, followers, hold at their share of base (1/N each when equal;
// SharedQuota.Share) and adopt what the leader publishes (its estimate,
// burst and hold); the leader sends the rest of the target: its share
// while held and all of a probe's growth. Since the followers send at a
// rate it knows, the leader measures the key's quota as (its own
// successes - B)/w + what the followers send, over windows since the last
// pause (during which they were steady). When the leader dies, another
// takes over with the shared estimate. The processes see a change of the
// shares at different instants (a joiner from its heartbeat, the others at
// the notification, up to a heartbeat later), and meanwhile the key is sent
// above its rate: a 429 that comes at or under the estimate within a
// second of a change the leader saw is put down to it (one per 10 s; the
// estimate stands), and a probe whose windows start at a change (the
// upstream's bucket maybe drained) does not lower the estimate.
//
// # Files
//
// controller.go holds the Controller and its gate (Wait, Throttled,
// Success); adjust.go sets the bucket's rate; react.go re-estimates the
// quota after a 429; share.go is the part shared with other processes;
// history.go the successes the estimates are measured from; tuning.go the
// constants.
package ratecontrol
