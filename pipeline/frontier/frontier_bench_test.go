package frontier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// BenchmarkLeaseAndFinish leases the next tasks of a run (lease tasks at a
// time, as the runner does when it has room for that many) and finishes
// them, one task per op, with the given number of pending tasks in the
// frontier (it is refilled when empty, off the clock).
func BenchmarkLeaseAndFinish(b *testing.B) {
	for _, c := range []struct{ pending, lease int }{{1_000, 1}, {100_000, 1}, {100_000, 64}} {
		pending := c.pending
		name := fmt.Sprintf("pending=%d", pending)
		if c.lease > 1 {
			name += fmt.Sprintf("/lease=%d", c.lease)
		}
		b.Run(name, func(b *testing.B) {
			pool, _ := pgtest.Pool(b)
			ctx := context.Background()
			batch := 0
			seeds := make([]NewTask, pending)
			for i := range seeds {
				seeds[i] = NewTask{Kind: kinds.KindSVProfile, Key: fmt.Sprintf("u0_%d", i), Depth: 1}
			}
			runID := testRun(b, pool, seeds)
			f := NewFrontier(pool, "bench", time.Minute)
			n := 0
			var leased []*Task
			for b.Loop() {
				if len(leased) == 0 {
					ts, err := f.LeaseN(ctx, runID, c.lease, nil)
					if err != nil {
						b.Fatal(err)
					}
					leased = ts
				}
				var t *Task
				if len(leased) > 0 {
					t, leased = leased[0], leased[1:]
				}
				if t == nil {
					b.StopTimer()
					batch++
					if _, err := pool.Exec(ctx, `INSERT INTO crawl.tasks (run_id, kind, key, depth)
						SELECT $1, $2, format('u%s_%s', $3::int, g), 1 FROM generate_series(1, $4::int) g`,
						runID, kinds.KindSVProfile, batch, pending); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					continue
				}
				if err := f.Finish(ctx, t, StateDone, "bench"); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
