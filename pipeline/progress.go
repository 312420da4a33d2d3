package pipeline

import (
	"context"
	"time"
)

// ProgressIntervalDefault is how often a run logs its progress.
const ProgressIntervalDefault = 30 * time.Second

// reportProgress logs one line per interval until ctx ends: what this
// process did, and the state of the whole run's frontier.
func (c *crawl) reportProgress(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var pending, leased, done, ended, billed int64
		if err := progress.QueryRow(ctx, c.opts.Pool, runArg{c.runID}).Scan(&pending, &leased, &done, &ended, &billed); err != nil {
			continue // the database may be away; the workers say so
		}
		pages := c.pages.Load()
		c.log.Info("progress",
			"pages", pages, "rows", c.rows.Load(),
			"pages_per_s", float64(int(float64(pages)/time.Since(start).Seconds()*10))/10,
			"tasks_pending", pending, "tasks_leased", leased, "tasks_done", done, "tasks_failed_or_skipped", ended,
			"credits_billed", billed, "rate_limit", c.client.RateLimit())
	}
}
