package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
)

// Adaptive revisits as a run records them (package pipeline/adaptive):
// crawl.runs.revisit.

// RevisitTotals is what crawl.runs.revisit holds: the schedule's totals
// at the run's start ("planned"), what the run captured on the items it
// revisited, added up as its visits are recorded ("captured"), and
// whether they all are ("recorded": the run ended; absent in runs
// recorded at their end only, by earlier versions).
type RevisitTotals struct {
	Planned  *RevisitPlanned  `json:"planned,omitempty"`
	Captured *RevisitCaptured `json:"captured,omitempty"`
	Recorded *bool            `json:"recorded,omitempty"`
}

type RevisitPlanned struct {
	Visit         int     `json:"visit"`
	Skip          int     `json:"skip"`
	Cost          float64 `json:"cost"`
	Yield         float64 `json:"yield"`
	StalenessLeft float64 `json:"staleness_left"`
	Budget        float64 `json:"budget"`
}

type RevisitCaptured struct {
	// Items revisited (known before the run), the events they showed
	// (new entries, counters changed) and the pages bought for them.
	Items   int     `json:"items"`
	Events  float64 `json:"events"`
	Credits int64   `json:"credits"`
	// New items visited for the first time, and their pages.
	NewItems   int   `json:"new_items"`
	NewCredits int64 `json:"new_credits"`
}

var runRevisit = db.Prepare[db.RunArg]("RunRevisit")

// LoadRunRevisit reads what crawl.runs.revisit says of run runID: the
// schedule's totals and what the run captured; nil when the run was not
// adaptive.
func LoadRunRevisit(ctx context.Context, q db.Querier, runID int64) (*RunRevisit, error) {
	var raw []byte
	err := runRevisit.QueryRow(ctx, q, db.RunArg{RunID: runID}).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run %d revisits: %w", runID, err)
	}
	var t RevisitTotals
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("run %d revisits: %w", runID, err)
	}
	r := &RunRevisit{}
	if p := t.Planned; p != nil {
		r.Planned, r.Visit, r.Skip, r.ExpectedCost, r.ExpectedYield, r.StalenessLeft, r.Budget = true, p.Visit, p.Skip, p.Cost, p.Yield, p.StalenessLeft, p.Budget
	}
	if c := t.Captured; c != nil {
		r.Revisited, r.Captured, r.CapturedCredits, r.NewItems, r.NewCredits = c.Items, c.Events, c.Credits, c.NewItems, c.NewCredits
	}
	r.Ended = t.Captured != nil
	if t.Recorded != nil {
		r.Ended = *t.Recorded
	}
	return r, nil
}

// RunRevisit is an adaptive run's schedule against what it captured.
type RunRevisit struct {
	Planned                     bool
	Visit, Skip                 int
	ExpectedCost, ExpectedYield float64
	StalenessLeft, Budget       float64
	Ended                       bool
	Revisited                   int
	Captured                    float64
	CapturedCredits             int64
	NewItems                    int
	NewCredits                  int64
}

// ExpectedPerCredit and CapturedPerCredit are the yield per credit the
// schedule expected of its revisits and the one they showed.
func (r *RunRevisit) ExpectedPerCredit() float64 { return ratio(r.ExpectedYield, r.ExpectedCost) }
func (r *RunRevisit) CapturedPerCredit() float64 {
	return ratio(r.Captured, float64(r.CapturedCredits))
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
