package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
)

type storedWindowParams struct {
	Kind   string     `db:"kind"`
	Owner  string     `db:"owner"`
	After  *time.Time `db:"after"`
	Before *time.Time `db:"before"`
}

var storedWindowStmt = db.Prepare[storedWindowParams]("StoredWindow")

// planWindows says, for each dated list the job's seeds lead to whose
// edge sets a date window (posted_after, posted_before), what the window
// saves, from the entries earlier runs stored of it: the page its walk
// would end on against its page limit, and the entries outside it, whose
// content is not bought. A list never stored says so.
func planWindows(ctx context.Context, tx pgx.Tx, job *jobfile.Job, entries int64) ([]string, error) {
	var out []string
	for _, seed := range job.SeedTasks() {
		for _, child := range kinds.BoundEdges(seed.Kind) {
			k := kinds.Of(child.Child)
			if !k.Dated || !child.On(job) {
				continue
			}
			e := job.Edge(k.Pages)
			after, before := e.Window()
			if after.IsZero() && before.IsZero() {
				continue
			}
			p := storedWindowParams{Kind: k.Name, Owner: seed.Key}
			if !after.IsZero() {
				p.After = &after
			}
			if !before.IsZero() {
				p.Before = &before
			}
			var total, newer, inside int64
			if err := storedWindowStmt.QueryRow(ctx, tx, p).Scan(&total, &newer, &inside); err != nil {
				return nil, fmt.Errorf("window of %s %s: %w", k.Name, seed.Key, err)
			}
			what := fmt.Sprintf("window expand.%s %s on %s %s:", k.Pages, windowText(after, before), k.Name, seed.Key)
			if total == 0 {
				out = append(out, what+" no earlier run stored the list; entries outside the window are not stored and nothing under them is bought")
				continue
			}
			limit := int64(e.MaxPages)
			walk := min(limit, int64(ceilDiv(total, entries)))
			if !after.IsZero() && newer < total {
				walk = min(walk, newer/entries+1) // the page of its first older entry
			}
			out = append(out, fmt.Sprintf("%s %d of the %d entries stored are in it; its walk ends about page %d (of %d walked without it, %d entries a page), and nothing is bought under the %d outside it",
				what, inside, total, walk, min(limit, int64(ceilDiv(total, entries))), entries, total-inside))
		}
	}
	return out, nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func windowText(after, before time.Time) string {
	switch {
	case before.IsZero():
		return "posted_after " + after.Format(time.RFC3339)
	case after.IsZero():
		return "posted_before " + before.Format(time.RFC3339)
	}
	return "posted_after " + after.Format(time.RFC3339) + ", posted_before " + before.Format(time.RFC3339)
}
