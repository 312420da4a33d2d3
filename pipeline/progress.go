package pipeline

import (
	"time"
)

// ProgressIntervalDefault is how often a run logs its progress.
const ProgressIntervalDefault = 30 * time.Second

// logProgress logs one progress line: what this process did, and the state
// of the whole run's frontier and credits as of the latest sample.
func (c *crawl) logProgress(p Progress) {
	args := []any{
		"pages", p.Pages, "rows", p.Rows,
		"pages_per_s", float64(int(float64(p.Pages)/p.Elapsed.Seconds()*10)) / 10,
		"tasks_pending", p.Run.Pending, "tasks_leased", p.Run.Leased, "tasks_done", p.Run.Done,
		"tasks_failed", p.Run.Failed, "tasks_skipped", p.Run.Skipped,
		"credits_billed", p.Run.CreditsBilled, "credits_reserved", p.Run.CreditsReserved(),
	}
	if p.Run.MaxCredits != nil {
		args = append(args, "credits_max", *p.Run.MaxCredits)
	}
	args = append(args, "requests", p.Requests, "rate_limited", p.RateLimited,
		"paused_429", p.Pauses.RateLimited.Round(time.Millisecond), "paused_outage", p.Pauses.Outage.Round(time.Millisecond),
		"rate_limit", p.Rate, "in_flight", p.Concurrency.InFlight, "concurrency_limit", p.Concurrency.Limit)
	if m := p.Concurrency.Last; m.Reason != "" {
		args = append(args, "concurrency_move", m.String())
	}
	c.log.Info("progress", args...)
}
