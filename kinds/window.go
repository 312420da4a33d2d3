package kinds

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/sources"
)

// Date windows (issue 32): posted_after and posted_before on the edge of a
// list returned newest first whose entries carry the time they were
// posted. A walk ends on the page whose last entry is older than
// posted_after (every later page is older still: none is bought), and an
// entry outside the window is neither stored nor followed (its comments
// and transcript are not bought). A backfill of "Q1 2026" buys the pages
// that reach into Q1 2026 and nothing past them.

// WindowKeys are the expand keys whose lists take posted_after and
// posted_before: the kinds that declare Dated. Sorted, for messages.
func WindowKeys() []string {
	var keys []string
	for _, k := range registry {
		if k.Dated && k.Pages != "" {
			keys = append(keys, k.Pages)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// dateLayout is the form of an absolute date: a day, in UTC.
const dateLayout = "2006-01-02"

// ParseWhen reads a window bound: a date (2026-01-01, midnight UTC), a
// time (RFC 3339), or a duration back from now (90d, 36h).
func ParseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(dateLayout, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	d, err := yamlstrict.ParseDuration(s)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("%s is not a date (2026-01-01), a time (2026-01-01T12:00:00Z) or a positive duration back from now (90d, 36h)", yamlstrict.QuoteShort(s))
	}
	return now.Add(-d).UTC().Truncate(time.Second), nil
}

// ResolveWindow reads the edge's posted_after and posted_before against
// now (the moment a duration counts back from); it returns the problem
// of each key that has one, by key.
func (e *Edge) ResolveWindow(now time.Time) map[string]string {
	probs := map[string]string{}
	for _, b := range []struct {
		key  string
		text string
		to   *time.Time
	}{{"posted_after", e.PostedAfter, &e.after}, {"posted_before", e.PostedBefore, &e.before}} {
		if b.text == "" {
			continue
		}
		t, err := ParseWhen(b.text, now)
		if err != nil {
			probs[b.key] = err.Error()
			continue
		}
		*b.to = t
	}
	if len(probs) == 0 && !e.after.IsZero() && !e.before.IsZero() && !e.before.After(e.after) {
		probs["posted_before"] = fmt.Sprintf("%s is not after posted_after (%s): the window is empty",
			e.before.Format(time.RFC3339), e.after.Format(time.RFC3339))
	}
	return probs
}

// Window is the edge's date window: entries posted at or after after and
// before before (a zero bound: none).
func (e *Edge) Window() (after, before time.Time) {
	if e == nil {
		return time.Time{}, time.Time{}
	}
	return e.after, e.before
}

// window keeps a list page's entries inside its task's date window and
// notes whether the page reaches past posted_after.
type window struct {
	after, before time.Time
	outside       int  // entries of the page left out
	last          bool // a dated entry was seen; old: the last one is older than after
	old           bool
}

// dateWindow is the window of t's list: its kind's edge's.
func (m *mapper) dateWindow(t *Task) *window {
	k := named(t.Kind)
	if !k.Dated || k.Pages == "" {
		return &window{}
	}
	after, before := m.job.Edge(k.Pages).Window()
	return &window{after: after, before: before}
}

// keep reports whether an entry posted at posted (Unix seconds; invalid:
// unknown, kept) is inside the window.
func (w *window) keep(posted sources.Int64) bool {
	if !posted.Valid || (w.after.IsZero() && w.before.IsZero()) {
		return true
	}
	at := time.Unix(posted.V, 0)
	w.last = true
	w.old = !w.after.IsZero() && at.Before(w.after)
	if w.old || (!w.before.IsZero() && !at.Before(w.before)) {
		w.outside++
		return false
	}
	return true
}

// end ends the list at this page when its last dated entry is older than
// posted_after (the list would otherwise go on, or was cut by its page
// limit on this very page: nothing past it is inside the window).
func (w *window) end(t *Task, res *Result) {
	if !w.last || !w.old {
		return
	}
	if res.Stop != "" && res.Outcome != OutcomeDonePageLimit {
		return
	}
	res.Stop = fmt.Sprintf("posted_after: page %d reached entries posted before %s (%d outside the window not stored)",
		t.Pages+1, w.after.Format(time.RFC3339), w.outside)
	res.Outcome = OutcomeDoneWindow
	res.Next = ""
}
