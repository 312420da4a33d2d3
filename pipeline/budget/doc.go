// Package budget is a run's credit budget (limits.max_credits,
// docs/budget.md): two-phase transfers, as in a ledger (tigerbeetle's
// pending, post and void), with one account per process (a Hold):
//
//   - reserved: each process holds a reservation of the run's budget
//     (crawl.credit_holds.held), granted by crawl.hold_credits under the
//     run's row lock and never more than the budget has left;
//   - billed: an answer that costs credits moves them from the hold to the
//     run's credits_billed (post);
//   - left: max_credits - credits_committed, where credits_committed =
//     credits_billed + the holds of every process. A process gives back
//     what it does not need (void), at its end or when idle.
//
// In the process, a request takes what it is expected to cost (1, or the
// route's Credits) from the hold's spare credits, without a round trip;
// when the spare runs short the process asks for more for all its waiting
// requests at once, plus a block to spare far from the budget. Far from
// the budget the next block is asked for in the background once the spare
// falls under half a block, so no request waits for that round trip. An answer
// returns its request's credits to the spare and notes what it cost; the
// costs are posted by the process's next statement on its hold (at least
// every holdBeat). So the run never commits more than max_credits: an
// answer can take billed above it only when it costs more than its
// request reserved (the upstream charged more than the route's expected
// price) and the process had no spare credit to cover the difference; the
// overspend is at most that difference summed over the requests in flight
// when the budget runs out, each bounded by sources.MaxRequestCredits.
//
// A request whose answer never arrived (a timeout, a reset after sending)
// is taken as not billed: the sandbox charges only the answers it
// delivers, and as far as is known so does the upstream. A process that
// dies keeps its hold: its requests in flight may have been billed, so
// their credits stay spent (with its spare, at most a block far from the
// budget and a quarter of what was left near it), and the resumed run
// never spends more than max_credits at the upstream.
//
// The runner hands the process's Hold to each page's lease: Reserve
// before a request leaves, Settle with its answer, Release when the answer
// never came; Beat posts in the background and Close at the process's
// end. LeftNow is what the adaptive schedule weighs a visit against.
package budget
