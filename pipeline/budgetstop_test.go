package pipeline_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/testkit/childproc"
)

// A process that stops on the spent budget while a process that died still
// holds a lease on the run waits for that lease to lapse (at most
// lease_timeout) and records the stop; while the other holder is alive
// (its leases move on), it leaves the run to it. Found by the simulator
// (seeds 85, 1241): after a kill -9, every restart found the budget spent
// and exited 5 at once, and the run stayed "running" until the next night.
func TestBudgetStopOutlivesADeadProcessLease(t *testing.T) {
	t.Parallel()
	for _, alive := range []bool{false, true} {
		name := map[bool]string{false: "holder dead", true: "holder alive"}[alive]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupWith(t, sandbox.Config{})
			// The dead holder's lease lapses after longer than the 5 s a
			// process's end is otherwise given: what follows the wait
			// (the budget stop's record) gets time of its own.
			lease := map[bool]string{false: "7s", true: "1s"}[alive]
			job := b.job(t, "  timeout: 1s\nlimits: {workers: 1, max_credits: 2, lease_timeout: "+lease+"}\nexpand: {}\n"+
				"seeds: {shortvideo: {profiles: [one_f1_g1, two_f1_g1, three_f1_g1, four_f1_g1]}}\n")
			ctx := context.Background()
			runID := b.start(t, job)
			// The other process's lease on one profile, as its last
			// heartbeat left it.
			const leased = `UPDATE crawl.tasks SET state = 'leased', lease_owner = 'otherhost:1:x#0',
				lease_token = nextval('crawl.lease_tokens'), lease_expires_at = now() + $2::interval
				WHERE run_id = $1 AND key = 'four_f1_g1'`
			if _, err := b.pool.Exec(ctx, leased, runID, map[bool]string{false: "6 seconds", true: "1 second"}[alive]); err != nil {
				t.Fatal(err)
			}
			beat := make(chan struct{})
			done := make(chan struct{})
			if alive {
				go func() { // its heartbeat: every lease_timeout/3
					defer close(done)
					tick := time.NewTicker(300 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-beat:
							return
						case <-tick.C:
							_, _ = b.pool.Exec(ctx, `UPDATE crawl.tasks SET lease_expires_at = now() + interval '1 second'
								WHERE run_id = $1 AND key = 'four_f1_g1'`, runID)
						}
					}
				}()
			} else {
				close(done)
			}
			opts := b.options(job, testKey)
			var logs childproc.Buffer
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			sum, err := pipeline.Run(ctx, opts, job, runID)
			close(beat)
			<-done
			if !errors.Is(err, budget.ErrExhausted) {
				t.Fatalf("run: %v, %+v; want a stop on the spent budget", err, sum)
			}
			var state string
			var stop *int64
			if err := b.pool.QueryRow(ctx, `SELECT state, budget_stop FROM crawl.runs WHERE id = $1`, runID).Scan(&state, &stop); err != nil {
				t.Fatal(err)
			}
			want := "stopped"
			if alive {
				want = "running" // the live holder records the run's end when it stops
			}
			if state != want || (stop != nil) != !alive {
				t.Errorf("run %s, budget_stop %v; want %s (budget stop recorded: %v)", state, stop, want, !alive)
			}
			// Alive: told by its leases moving on, not by the wait running
			// out of time (which would leave the run running too).
			if told := strings.Contains(logs.String(), "is alive"); told != alive {
				t.Errorf("the holder was told alive: %v, want %v; log:\n%s", told, alive, logs.String())
			}
			if u := b.sandbox.Usage(testKey); u.Credits != 2 {
				t.Errorf("sandbox billed %d credits; want the 2 the budget buys", u.Credits)
			}
		})
	}
}
