package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/sources/concurrency"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A sample the server runs after the process's final one (its sender was
// cancelled as the run ended, the statement already sent) takes none of
// the process's counters back: crawler runs read 6 pages of a run of 7
// (TestPruneDryRunBatchesIdempotent, once under load).
func TestLateSampleTakesNoCounterBack(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO crawl.runs (id, job_name, job, state) VALUES (1, 'j', '{}', 'running')`); err != nil {
		t.Fatal(err)
	}
	if _, err := joinRun.Exec(ctx, pool, joinRunParams{RunID: 1, Owner: "p", Version: "test"}); err != nil {
		t.Fatal(err)
	}
	sample := func(pages int64, final bool) {
		t.Helper()
		sp := sampleParams{RunID: 1, Owner: "p", Pages: pages, Rows: 10 * pages, Requests: pages, Final: final, State: "done"}
		var discard [8]any
		for i := range discard {
			discard[i] = new(any)
		}
		if err := recordSample.QueryRow(ctx, pool, sp).Scan(discard[:]...); err != nil {
			t.Fatal(err)
		}
	}
	sample(7, true)
	sample(6, false) // the monitor's, late
	var pages, rows, requests int64
	var state *string
	if err := pool.QueryRow(ctx, `SELECT pages, rows_written, requests, state FROM crawl.run_processes WHERE run_id = 1 AND owner = 'p'`).Scan(&pages, &rows, &requests, &state); err != nil {
		t.Fatal(err)
	}
	if pages != 7 || rows != 70 || requests != 7 || state == nil || *state != "done" {
		t.Errorf("after a late sample: pages %d, rows %d, requests %d, state %v; want 7, 70, 7, done", pages, rows, requests, state)
	}
}

// The mean in flight of a sample ends where the limiter's slot time was
// counted to, not where the sample was taken: with 4 slots held all along,
// a status read a little before each sample must give 4, never more (a
// sample above its workers failed TestMetricsScrapedDuringAndAfterRun
// under load, when the reads and the samples drifted apart).
func TestSampleInFlightEndsAtTheStatus(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	m := &monitorState{started: start}
	const held = 4
	for i, c := range []struct{ read, sampled time.Duration }{
		{time.Second, 1500 * time.Millisecond},
		{2 * time.Second, 2100 * time.Millisecond},
		{5 * time.Second, 7 * time.Second},
	} {
		var sp sampleParams
		st := concurrency.Status{SlotSeconds: held * c.read.Seconds(), At: start.Add(c.read)}
		m.concurrencySample(&sp, st, start.Add(c.sampled))
		if d := sp.InFlight - held; d > 1e-9 || d < -1e-9 {
			t.Errorf("sample %d: mean in flight %.3f, want %d", i, sp.InFlight, held)
		}
	}
}
