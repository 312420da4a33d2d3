package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline/frontier"
	"github.com/socialcrawl/crawler/sinks"
)

// Content bought again only when it changed (docs/reuse.md, "Content
// lists"; kinds.ChangeRule): a content list found along an edge whose
// changed_only is on carries the counter its parent page showed; it is
// walked when no walk of it is recorded, when the recorded walk saw
// another counter, or when its edge's refresh_after has passed since.
// Otherwise it ends skipped_unchanged without a request. No request is
// made to read a counter: the parent page, bought anyway, carries it.

// ContentWalk is the latest recorded walk of a content list.
type ContentWalk struct {
	Found bool
	// Count is the counter its parent page showed (Counted false: none).
	Count   int64
	Counted bool
	Run     int64
	Pages   int
	At      time.Time
	Age     time.Duration
}

type contentListParams struct {
	Kind string `db:"kind"`
	Key  string `db:"key"`
}

var lastContentWalk = db.Prepare[contentListParams]("LastContentWalk")

// contentWalk reads the latest walk of list (kind, key).
func contentWalk(ctx context.Context, q db.Querier, kind, key string) (ContentWalk, error) {
	var (
		w     ContentWalk
		count *int64
		ageUS int64
	)
	err := lastContentWalk.QueryRow(ctx, q, contentListParams{Kind: kind, Key: key}).Scan(&count, &w.Run, &w.Pages, &w.At, &ageUS)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return w, nil
	case err != nil:
		return w, fmt.Errorf("last walk of %s %s: %w", kind, key, err)
	}
	w.Found, w.Age = true, time.Duration(ageUS)*time.Microsecond
	if count != nil {
		w.Count, w.Counted = *count, true
	}
	return w, nil
}

// unchanged says why list t need not be bought again ("" when it must
// be), given its latest walk w: the counter t carries is w's, and its
// refresh_after (t.RefreshAfter, 0: none) has not passed since.
func unchanged(t *kinds.Task, w ContentWalk) string {
	count, ok := t.Count()
	switch {
	case !ok || !w.Found || !w.Counted || count != w.Count:
		return ""
	case t.RefreshAfter > 0 && w.Age >= t.RefreshAfter:
		return ""
	}
	return fmt.Sprintf("unchanged: counter as at its last walk: %d (run %d, %s, %d pages)", count, w.Run, w.At.UTC().Format(time.RFC3339), w.Pages)
}

// skipUnchanged ends t skipped_unchanged when its counter shows no change
// since its last walk (unchanged); it reports whether it did. Nothing is
// bought; the credits its last walk cost are recorded as saved.
func (c *crawl) skipUnchanged(ctx context.Context, log *slog.Logger, k *kinds.Kind, t *task) (bool, error) {
	if k.Change == nil || t.Pages > 0 {
		return false, nil
	}
	if _, ok := t.Count(); !ok {
		return false, nil
	}
	var w ContentWalk
	err := c.retryDB(ctx, func(ctx context.Context) (err error) {
		w, err = contentWalk(ctx, c.opts.Pool, t.Kind, t.Key)
		return err
	})
	reason := ""
	var children []kinds.NewTask
	if err == nil {
		reason = unchanged(&t.Task.Task, w)
	}
	if reason != "" && k.Change.Expand != nil {
		// Its stored comments still lead to their replies lists, each
		// deciding by its own counter and walk.
		err = c.retryDB(ctx, func(ctx context.Context) error {
			all, err := k.Change.Expand(ctx, c.opts.Pool, c.job, &t.Task.Task)
			children = children[:0]
			for _, ch := range all {
				if ch.Depth <= c.job.Limits.MaxDepth && sinks.CheckKey(ch.Kind+" task key", ch.Key) == nil {
					children = append(children, ch)
				}
			}
			return err
		})
	}
	if reason == "" && err == nil && k.Change.Explain != nil && w.Found && w.Counted {
		if n, _ := t.Count(); n > w.Count {
			t.rise = &rise{of: n - w.Count, since: w.Count}
		}
	}
	if reason != "" && err == nil {
		saved := w.Pages * PagePrice(c.job, t.Kind)
		err = c.retryDB(context.WithoutCancel(c.work), func(ctx context.Context) error {
			return c.frontier.EndFresh(ctx, c.runID, t.Task, kinds.OutcomeSkippedUnchanged, reason, saved, children)
		})
	}
	switch {
	case errors.Is(err, frontier.ErrLeaseLost):
		return true, nil
	case err != nil && ctx.Err() != nil:
		_ = c.release(t.Task)
		return true, nil
	case err != nil:
		return true, c.abandon(t, "changed_only", err)
	case reason != "":
		log.Debug("unchanged; not fetched", "task_id", t.ID, "kind", t.Kind, "key", t.Key, "walked_by_run", w.Run)
		if len(children) > 0 {
			c.wakeOthers()
		}
	}
	return reason != "", nil
}

// walkEnd is the record of list t's walk ending with res (kinds with a
// ChangeRule; nil for others or while it goes on): a walk to the list's
// end also marks the stored entries it did not find.
func walkEnd(k *kinds.Kind, t *kinds.Task, res *kinds.Result) *frontier.ContentWalk {
	if k.Change == nil || res.Stop == "" {
		return nil
	}
	w := &frontier.ContentWalk{Kind: t.Kind, Key: t.Key, Pages: t.Pages + 1, Outcome: res.Outcome.OrDone()}
	if n, ok := t.Count(); ok {
		w.Count = &n
	}
	if res.Outcome == kinds.OutcomeDoneEnd {
		g := k.Change.Gone(t)
		if g.Owner != "" {
			w.Gone = &g
		}
	}
	return w
}

// rise is a content list's counter's rise since its last walk (of, from
// since) and how much of it the pages read so far explain.
type rise struct {
	of, since, explained int64
}

// stopExplained ends a walk of a content list whose counter rose (t.rise)
// at the page where the pages read explain the rise
// (kinds.ChangeRule.Explain: new entries, each with its replies, and the
// moves of stored comments' reply counts), unless a full walk is due
// (reuse.full_walk_every, full_walk_after, as for stop_at_seen). Only a
// walk begun in this lease is cut (a walk resumed after a kill goes to
// the end); a fall, or a rise the pages overshoot (deletions among
// them), is walked whole, and the end marks the deleted entries. The
// walk is cut short like one stop_at_seen cuts (done_stop_at_seen).
func (c *crawl) stopExplained(ctx context.Context, k *kinds.Kind, t *task, res *kinds.Result) error {
	x := t.rise
	if x == nil || k.Change == nil || k.Change.Explain == nil || res.Stop != "" {
		return nil
	}
	var n int64
	if err := c.retryDB(ctx, func(ctx context.Context) (err error) {
		n, err = k.Change.Explain(ctx, c.opts.Pool, c.runID, &t.Task.Task, res)
		return err
	}); err != nil {
		return err
	}
	x.explained += n
	if x.explained != x.of {
		return nil
	}
	w, err := c.listWalkOf(ctx, t)
	if err != nil {
		return err
	}
	if w.FullDue {
		t.rise = nil // this walk goes to the end
		return nil
	}
	walked := t.Pages + 1
	full := w.Pages
	if t.MaxPages > 0 {
		full = min(full, t.MaxPages)
	}
	res.Stop = fmt.Sprintf("explained: page %d accounts for the counter's rise of %d since its last walk (%d to %d; last full walk: run %d, %d pages)", walked, x.of, x.since, x.since+x.of, w.Run, w.Pages)
	res.Outcome = kinds.OutcomeDoneStopAtSeen
	res.Saved = max(0, full-walked) * PagePrice(c.job, t.Kind)
	return nil
}

// PagePrice is what a page of a list of kind costs in job's dialect (its
// route's credits: 15 for a post's comments with replies at the real
// service's prices), so that what reuse saves, and what crawler plan
// expects, is counted in credits, as the budget reserves them, not in
// pages.
func PagePrice(job *jobfile.Job, kind string) int {
	return max(job.Route(kind).Credits, 1)
}

// ContentPlan is what a run started now should buy of a content list, by
// the rules a run applies (skipUnchanged, stopExplained), from what is
// stored: the counter the latest run's task of it carried, its last walk
// (crawl.content_walks) and its last full walk. crawler plan sums them.
type ContentPlan struct {
	// Verdict: ContentUnchanged (not bought), ContentRise (read down to
	// the page that explains the rise), ContentWhole (walked whole: a
	// fall, no counter, refresh_after with the counter unchanged, or a
	// full walk due) or ContentNew (never walked: its pages are estimated
	// from its counter).
	Verdict string
	Pages   int // pages expected (0: not bought)
}

// ContentPlan verdicts.
const (
	ContentUnchanged = "unchanged"
	ContentRise      = "rise"
	ContentWhole     = "whole"
	ContentNew       = "new"
)

// PlanContentList applies the rules of a content list's walk to t (kind,
// key, the counter its parent page showed, its refresh_after and page
// limit) as a run started now would. perPage is the counter's mass a page
// of such lists holds (crawl.content_walks: count over pages; 0: unknown,
// 1 assumed): a list never walked is expected to take count/perPage pages,
// a rise rise/perPage of its last walk (at least 1, at most its whole
// walk), the page where the new entries at its head end. Where the new
// entries are is not known before the walk: that part is an estimate; an
// unchanged counter, a fall and a whole walk are what the run does.
func PlanContentList(ctx context.Context, q db.Querier, job *jobfile.Job, t *kinds.Task, perPage float64) (ContentPlan, error) {
	k := kinds.Of(t.Kind)
	if k == nil || k.Change == nil {
		return ContentPlan{}, fmt.Errorf("%s is not a content list", t.Kind)
	}
	w, err := contentWalk(ctx, q, t.Kind, t.Key)
	if err != nil {
		return ContentPlan{}, err
	}
	if unchanged(t, w) != "" {
		return ContentPlan{Verdict: ContentUnchanged}, nil
	}
	count, counted := t.Count()
	capped := func(pages int) int {
		pages = max(pages, 1)
		if t.MaxPages > 0 {
			pages = min(pages, t.MaxPages)
		}
		return pages
	}
	if !w.Found {
		pages := 1
		if counted && perPage > 0 {
			pages = int(math.Ceil(float64(count) / perPage))
		}
		return ContentPlan{Verdict: ContentNew, Pages: capped(pages)}, nil
	}
	full, err := listWalk(ctx, q, job, t.Kind, t.Key, 0)
	if err != nil {
		return ContentPlan{}, err
	}
	whole := w.Pages
	if full.Found {
		whole = max(whole, full.Pages)
	}
	whole = capped(whole)
	if counted && w.Counted && count > w.Count && k.Change.Explain != nil && !full.FullDue {
		mass := perPage
		if w.Count > 0 && w.Pages > 0 {
			mass = float64(w.Count) / float64(w.Pages)
		}
		mass = max(mass, 1)
		return ContentPlan{Verdict: ContentRise, Pages: min(whole, capped(int(math.Ceil(float64(count-w.Count)/mass))))}, nil
	}
	return ContentPlan{Verdict: ContentWhole, Pages: whole}, nil
}
