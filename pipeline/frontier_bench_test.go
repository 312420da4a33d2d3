package pipeline_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// BenchmarkLeaseAndFinish leases the next task of a run and finishes it, one
// task per op, with the given number of pending tasks in the frontier (it is
// refilled when empty, off the clock).
func BenchmarkLeaseAndFinish(b *testing.B) {
	for _, pending := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			pool, _ := pgtest.Pool(b)
			ctx := context.Background()
			job, err := jobfile.Parse("bench.yaml", []byte("name: bench\napi: {base_url: https://upstream.invalid/api}\nseeds: {shortvideo: {profiles: [bench]}}\n"))
			if err != nil {
				b.Fatal(err)
			}
			batch := 0
			seeds := make([]pipeline.NewTask, pending)
			for i := range seeds {
				seeds[i] = pipeline.NewTask{Kind: kinds.KindSVProfile, Key: fmt.Sprintf("u0_%d", i), Depth: 1}
			}
			runID, err := pipeline.CreateRun(ctx, pool, job, seeds)
			if err != nil {
				b.Fatal(err)
			}
			f := pipeline.NewFrontier(pool, "bench", time.Minute)
			n := 0
			for b.Loop() {
				t, err := f.Lease(ctx, runID, nil)
				if err != nil {
					b.Fatal(err)
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
				if err := f.Finish(ctx, t, pipeline.StateDone, "bench"); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
