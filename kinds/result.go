package kinds

import (
	"encoding/json"
	"fmt"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
)

// Result is what one fetch produced: rows, discovered tasks, and how the
// task goes on (Next cursor, or Stop reason and Outcome when it ends).
type Result struct {
	Batch    sinks.Batch
	Children []NewTask
	Items    int
	Next     string
	Stop     string
	// Outcome is how the task ends when Stop is set: a list's, from the
	// stop (listResult); empty for an object's page (Outcome.OrDone).
	Outcome Outcome
	Drops   Drops // entries received but not stored
	Saved   int   // credits saved by reuse (stop_at_seen's pages not walked, at their price)
	// New counts the page's entries no earlier run stored, when Counted
	// (stop_at_seen or adaptive revisits read them): crawl.tasks.new_items.
	New     int
	Counted bool
}

// Drop counts an entry of the page that is not stored, and why.
func (r *Result) Drop(reason string) {
	r.Drops.N++
	r.Drops.Reason = reason
}

// UnstorableError is a single-object answer whose key the database cannot
// hold: the task fails with it as the reason (the object is not a page that
// could be split).
type UnstorableError struct {
	endpoint string // e.g. shortvideo/profile
	err      error
}

func (e *UnstorableError) Error() string { return e.endpoint + ": " + e.err.Error() }

// checkObjectKeys returns an *UnstorableError for the first of keys (field
// name, value pairs) that is too long to be a key.
func checkObjectKeys(endpoint string, keys ...string) error {
	for i := 0; i+1 < len(keys); i += 2 {
		if err := sinks.CheckKey(keys[i], keys[i+1]); err != nil {
			return &UnstorableError{endpoint: endpoint, err: err}
		}
	}
	return nil
}

// entryProblem returns why a list entry cannot be stored, "" when it can:
// keys are (field name, value) pairs; the first must be the entry's
// identifier, which must not be empty.
func entryProblem(list string, pos int, keys ...string) string {
	if len(keys) >= 2 && keys[1] == "" {
		return fmt.Sprintf("%s[%d]: no %s", list, pos, keys[0])
	}
	return keyProblem(list, pos, keys...)
}

// keyProblem is entryProblem without a required identifier: only the caps.
func keyProblem(list string, pos int, keys ...string) string {
	for i := 0; i+1 < len(keys); i += 2 {
		if err := sinks.CheckKey(keys[i], keys[i+1]); err != nil {
			return fmt.Sprintf("%s[%d]: %v", list, pos, err)
		}
	}
	return ""
}

// StopDone ends an object task (not a list).
const StopDone = "done"

// listResult starts the Result of a list page and decides, with the shared
// loop protections, whether the list goes on.
func listResult[T any](t *Task, p *sources.Page[T]) *Result {
	stop := sources.NextStep(t.Cursor, p.Info(), t.Pages+1, t.MaxPages)
	return &Result{
		Items:   p.Info().Items,
		Next:    p.Cursor,
		Stop:    string(stop),
		Outcome: listOutcome(stop),
		Drops:   Drops{N: p.Dropped, Reason: p.DropReason},
	}
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func textPtr(s sources.Text) *string { return strPtr(string(s)) }

func nullTextPtr(s sources.NullText) *string {
	if !s.Valid {
		return nil
	}
	return &s.V
}

func flagPtr(f sources.Flag) *bool {
	if !f.Valid {
		return nil
	}
	return &f.V
}

func intPtr(n sources.Int64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.V
}

// stubJSON is the raw JSON of a row known only by its key.
func stubJSON(field, value string) []byte {
	b, _ := json.Marshal(map[string]string{field: value})
	return b
}
