package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
)

// ContentList is what crawler plan expects of a kind of content list
// (kinds.ChangeRule) tonight: the lists the job's last completed run
// reached, each judged by the rules a run applies
// (pipeline.PlanContentList) from the counter that run's parent pages
// showed and the list's last walks.
type ContentList struct {
	Kind string `json:"kind"`
	// Lists the last run reached; of them, Unchanged are not bought
	// (counter as at their last walk, within refresh_after), Rise read down
	// to the page that explains their counter's rise, Whole walked whole (a
	// fall, no counter, refresh_after passed, a full walk due), New never
	// walked.
	Lists     int64 `json:"lists"`
	Unchanged int64 `json:"unchanged"`
	Rise      int64 `json:"rise"`
	Whole     int64 `json:"whole"`
	New       int64 `json:"new"`
	// Bought are the credits the last run spent on these lists; Expected
	// what tonight should spend on them (Pages at the page's price).
	Bought   int64 `json:"bought_last_run"`
	Pages    int64 `json:"pages"`
	Expected int64 `json:"expected"`
}

type (
	contentListsParams struct {
		RunID int64    `db:"run_id"`
		Kinds []string `db:"kinds"`
	}
	kindsParams struct {
		Kinds []string `db:"kinds"`
	}
)

var (
	contentListsStmt   = db.Prepare[contentListsParams]("ContentListsOfRun")
	contentPerPageStmt = db.Prepare[kindsParams]("ContentCountPerPage")
)

// content replaces, in the estimate made from the last completed run, what
// that run spent on the content lists the job buys only when changed by
// what tonight should: each list that run reached, at the counter its
// parent page showed then, as a run started now decides it. On a world
// that has not changed since that run, that is what tonight buys of them
// (a rise's pages excepted: where its new entries are is estimated). The
// lists of content new tonight (new videos, new comments) are not known
// yet; the creators' lists that lead to them are in the history's cost.
func (p *Plan) content(ctx context.Context, tx pgx.Tx, job *jobfile.Job) error {
	ks := kinds.ChangedKinds(job)
	if p.HistoryRun == 0 || len(ks) == 0 {
		return nil
	}
	rows, err := contentPerPageStmt.Query(ctx, tx, kindsParams{Kinds: ks})
	if err != nil {
		return fmt.Errorf("content lists' pages: %w", err)
	}
	perPage := map[string]float64{}
	var (
		kind string
		n    float64
	)
	if _, err := pgx.ForEachRow(rows, []any{&kind, &n}, func() error { perPage[kind] = n; return nil }); err != nil {
		return fmt.Errorf("content lists' pages: %w", err)
	}
	rows, err = contentListsStmt.Query(ctx, tx, contentListsParams{RunID: p.HistoryRun, Kinds: ks})
	if err != nil {
		return fmt.Errorf("content lists of run %d: %w", p.HistoryRun, err)
	}
	type row struct {
		Kind      string `db:"kind"`
		Key       string `db:"key"`
		Params    string `db:"params"`
		RefreshUS int64  `db:"refresh_us"`
		MaxPages  int    `db:"max_pages"`
		Pages     int64  `db:"pages"`
	}
	lists, err := pgx.CollectRows(rows, pgx.RowToStructByName[row])
	if err != nil {
		return fmt.Errorf("content lists of run %d: %w", p.HistoryRun, err)
	}
	var bought, expected int64
	var c *ContentList
	flush := func() {
		if c == nil {
			return
		}
		bought, expected = bought+c.Bought, expected+c.Expected
		p.Content = append(p.Content, *c)
		p.Reuse = append(p.Reuse, fmt.Sprintf("content %s: %d lists reached by run %d: %d unchanged (not bought), %d risen (read down to the rise), %d walked whole, %d never walked: about %d pages, %d credits tonight (run %d spent %d)",
			c.Kind, c.Lists, p.HistoryRun, c.Unchanged, c.Rise, c.Whole, c.New, c.Pages, c.Expected, p.HistoryRun, c.Bought))
	}
	for _, l := range lists {
		if c == nil || c.Kind != l.Kind {
			flush()
			c = &ContentList{Kind: l.Kind}
		}
		price := int64(pipeline.PagePrice(job, l.Kind))
		t := &kinds.Task{Kind: l.Kind, Key: l.Key, MaxPages: l.MaxPages, RefreshAfter: time.Duration(l.RefreshUS) * time.Microsecond}
		if err := json.Unmarshal([]byte(l.Params), &t.Params); err != nil {
			return fmt.Errorf("content list %s %s: params: %w", l.Kind, l.Key, err)
		}
		v, err := pipeline.PlanContentList(ctx, tx, job, t, perPage[l.Kind])
		if err != nil {
			return err
		}
		c.Lists++
		switch v.Verdict {
		case pipeline.ContentUnchanged:
			c.Unchanged++
		case pipeline.ContentRise:
			c.Rise++
		case pipeline.ContentNew:
			c.New++
		default:
			c.Whole++
		}
		c.Bought += l.Pages * price
		c.Pages += int64(v.Pages)
		c.Expected += int64(v.Pages) * price
	}
	flush()
	if p.Estimate >= 0 {
		p.Estimate = max(0, p.Estimate-bought+expected)
		if p.MaxCredits != nil {
			p.Estimate = min(p.Estimate, *p.MaxCredits)
		}
	}
	return nil
}
