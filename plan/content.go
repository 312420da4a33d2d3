package plan

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
)

// ContentList is what crawler plan expects of a kind of content list
// (kinds.ChangeRule) tonight, from the job's last completed run and the
// lists' last walks: bought again only where the counter on its parent
// page moved, at the rate that run found.
type ContentList struct {
	Kind string `json:"kind"`
	// WalkedKnown and Skipped: the lists the last run walked again (their
	// counter moved, or refresh_after passed) and skipped unchanged, among
	// those an earlier run had walked; Rate is WalkedKnown over both (0
	// when that run had none: a first night).
	WalkedKnown int64   `json:"walked_known"`
	Skipped     int64   `json:"skipped"`
	Rate        float64 `json:"rate"`
	// Bought are the credits the last run spent on these lists; Known the
	// credits their latest walks took (all of them bought again);
	// Expected what tonight should spend on them (Known x Rate).
	Bought   int64 `json:"bought_last_run"`
	Known    int64 `json:"known"`
	Expected int64 `json:"expected"`
}

type contentListsParams struct {
	RunID int64    `db:"run_id"`
	Kinds []string `db:"kinds"`
}

var contentListsStmt = db.Prepare[contentListsParams]("ContentListsOfRun")

// content replaces, in the estimate made from the last completed run, what
// that run spent on the content lists the job buys only when changed by
// what tonight should: the lists known at the rate of change that run
// found. The lists of content new tonight (new videos, new comments with
// replies) are not known yet; the creators' lists that lead to them are
// in the history's cost.
func (p *Plan) content(ctx context.Context, tx pgx.Tx, job *jobfile.Job) error {
	ks := kinds.ChangedKinds(job)
	if p.HistoryRun == 0 || len(ks) == 0 {
		return nil
	}
	rows, err := contentListsStmt.Query(ctx, tx, contentListsParams{RunID: p.HistoryRun, Kinds: ks})
	if err != nil {
		return fmt.Errorf("content lists of run %d: %w", p.HistoryRun, err)
	}
	type row struct {
		Kind        string `db:"kind"`
		WalkedKnown int64  `db:"walked_known"`
		Skipped     int64  `db:"skipped"`
		PagesBought int64  `db:"pages_bought"`
		PagesKnown  int64  `db:"pages_known"`
	}
	lists, err := pgx.CollectRows(rows, pgx.RowToStructByName[row])
	if err != nil {
		return fmt.Errorf("content lists of run %d: %w", p.HistoryRun, err)
	}
	var bought, expected int64
	for _, l := range lists {
		price := int64(1)
		if r, ok := job.API.Route(l.Kind); ok {
			price = int64(max(r.Credits, 1))
		}
		c := ContentList{Kind: l.Kind, WalkedKnown: l.WalkedKnown, Skipped: l.Skipped, Bought: l.PagesBought * price, Known: l.PagesKnown * price}
		if n := l.WalkedKnown + l.Skipped; n > 0 {
			c.Rate = float64(l.WalkedKnown) / float64(n)
		}
		c.Expected = int64(math.Round(float64(c.Known) * c.Rate))
		bought, expected = bought+c.Bought, expected+c.Expected
		p.Content = append(p.Content, c)
		p.Reuse = append(p.Reuse, fmt.Sprintf("content %s: %d credits at their last walks; run %d walked %d of %d known again (%.0f%%): about %d credits tonight (run %d spent %d)",
			c.Kind, c.Known, p.HistoryRun, c.WalkedKnown, c.WalkedKnown+c.Skipped, 100*c.Rate, c.Expected, p.HistoryRun, c.Bought))
	}
	if p.Estimate >= 0 {
		p.Estimate = max(0, p.Estimate-bought+expected)
		if p.MaxCredits != nil {
			p.Estimate = min(p.Estimate, *p.MaxCredits)
		}
	}
	return nil
}
