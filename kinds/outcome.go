package kinds

import (
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

// Outcome is how a task ended, as SQL reads it (crawl.tasks.outcome, the
// enum crawl.task_outcome of migrations 00030 and 00036, whose column comment
// describes each value): reuse, retention, revisits, the report and the
// views decide on it. The task's reason says the same, with detail, for
// people, and no statement matches its text. Each value starts with the
// state it ends the task in.
type Outcome string

// The outcomes, in the enum's order.
const (
	OutcomeDone           Outcome = "done"              // an object fetched
	OutcomeDoneEnd        Outcome = "done_end"          // a list walked to its end
	OutcomeDonePageLimit  Outcome = "done_page_limit"   // a list cut by its page limit
	OutcomeDoneStopAtSeen Outcome = "done_stop_at_seen" // a list cut by stop_at_seen
	OutcomeDoneGuard      Outcome = "done_guard"        // a list stopped by a loop guard
	OutcomeDoneWindow     Outcome = "done_window"       // a list ended by its date window (posted_after)

	OutcomeSkippedFresh    Outcome = "skipped_fresh"    // refresh_after: an earlier fetch is fresh
	OutcomeSkippedAdaptive Outcome = "skipped_adaptive" // the adaptive schedule did not revisit it
	OutcomeSkippedBudget   Outcome = "skipped_budget"   // the schedule wanted it; the night's credits left did not cover it
	// OutcomeSkippedUnchanged: a content list whose counter shows no change
	// since its last walk (ChangeRule).
	OutcomeSkippedUnchanged Outcome = "skipped_unchanged"
	OutcomeSkippedNotFound  Outcome = "skipped_not_found" // the upstream has no such item
	OutcomeSkippedRetired   Outcome = "skipped_retired"   // the endpoint is retired in the job's dialect

	OutcomeFailed           Outcome = "failed"            // an upstream error retries did not get past
	OutcomeFailedBlocked    Outcome = "failed_blocked"    // the platform blocks the item
	OutcomeFailedUnstorable Outcome = "failed_unstorable" // the task or what it fetched cannot be stored
)

// Outcomes lists every outcome, in the enum's order.
func Outcomes() []Outcome {
	return []Outcome{
		OutcomeDone, OutcomeDoneEnd, OutcomeDonePageLimit, OutcomeDoneStopAtSeen, OutcomeDoneGuard, OutcomeDoneWindow,
		OutcomeSkippedFresh, OutcomeSkippedAdaptive, OutcomeSkippedBudget, OutcomeSkippedUnchanged, OutcomeSkippedNotFound, OutcomeSkippedRetired,
		OutcomeFailed, OutcomeFailedBlocked, OutcomeFailedUnstorable,
	}
}

// State is the crawl.tasks.state a task ending with o takes: done, skipped
// or failed, the outcome's first word.
func (o Outcome) State() string {
	state, _, _ := strings.Cut(string(o), "_")
	return state
}

// OrDone is o, or OutcomeDone when o is empty: a page that ends its task
// without naming an outcome is an object's, fetched.
func (o Outcome) OrDone() Outcome {
	if o == "" {
		return OutcomeDone
	}
	return o
}

// listOutcome is how a list ends when the loop's protections (sources.NextStep)
// stop it; "" while it goes on.
func listOutcome(s sources.StopReason) Outcome {
	switch s {
	case "":
		return ""
	case sources.StopEnd, sources.StopEmptyPage:
		return OutcomeDoneEnd
	case sources.StopPageLimit:
		return OutcomeDonePageLimit
	default: // StopRepeatedCursor, StopEmptyWithHasMore
		return OutcomeDoneGuard
	}
}
