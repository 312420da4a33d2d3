package sinks_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestBatchLen(t *testing.T) {
	t.Parallel()
	b := fullBatch(0)
	want, filled := 0, map[string]bool{}
	b.Each(func(table string, rows []any) {
		filled[table] = true
		want += len(rows)
	})
	for _, table := range sinks.Tables() {
		if !filled[table] {
			t.Errorf("fullBatch leaves %s empty", table)
		}
	}
	if got := b.Len(); got != want || want == 0 {
		t.Errorf("Len() = %d, want %d (the sum over every table)", got, want)
	}
	if got := (&sinks.Batch{}).Len(); got != 0 {
		t.Errorf("empty batch Len() = %d", got)
	}
}

// Writing a batch twice, or its rows in another order, changes nothing: same
// content and no row rewritten (xmin unchanged), in every table.
func TestWriteEveryTableIsIdempotent(t *testing.T) {
	t.Parallel()
	pool, run := poolWithRun(t)
	write(t, pool, run, fullBatch(0))
	first := dump(t, pool)
	for name, rows := range first {
		if (strings.HasPrefix(name, "shortvideo.") || strings.HasPrefix(name, "photosocial.")) && rows == "" {
			t.Errorf("%s is empty after a batch meant to fill every table", name)
		}
	}

	// Whole, shuffled, each row alone: nothing changes.
	rewriteEveryWay(t, pool, run, func() *sinks.Batch { return fullBatch(0) }, first, "rewriting the batch")
}

// A later run moves last_seen_run (and last_checked_run), keeps the first,
// and adds a row per run to every per-run table.
func TestSecondRunAddsSnapshotsAndKeepsFirstSeen(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	run1, run2 := newRun(t, pool), newRun(t, pool)
	write(t, pool, run1, fullBatch(0))
	write(t, pool, run2, fullBatch(1))

	rows, err := pool.Query(ctx, `
		SELECT format('%I.%I', table_schema, table_name), string_agg(column_name, ',')
		FROM information_schema.columns JOIN information_schema.tables USING (table_schema, table_name)
		WHERE table_schema IN ('shortvideo', 'photosocial') AND table_type = 'BASE TABLE'
		  AND column_name IN ('first_seen_run', 'first_checked_run', 'run_id')
		GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]string{}
	for rows.Next() {
		var table, c string
		if err := rows.Scan(&table, &c); err != nil {
			t.Fatal(err)
		}
		cols[table] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cols) < 20 {
		t.Fatalf("only %d tables with run columns: %v", len(cols), cols)
	}
	for table, c := range cols {
		var sql string
		switch c {
		case "first_seen_run":
			sql = `SELECT count(*) FILTER (WHERE first_seen_run = $1 AND last_seen_run = $2), count(*) FROM ` + table
		case "first_checked_run":
			sql = `SELECT count(*) FILTER (WHERE first_checked_run = $1 AND last_checked_run = $2), count(*) FROM ` + table
		case "run_id":
			sql = `SELECT count(*) FILTER (WHERE run_id = $2), count(*) FILTER (WHERE run_id = $1) FROM ` + table
		default:
			t.Errorf("%s: unexpected run columns %s", table, c)
			continue
		}
		var got, want int
		if err := pool.QueryRow(ctx, sql, run1, run2).Scan(&got, &want); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if got != want || want == 0 {
			t.Errorf("%s: %d rows updated/added by run 2, want %d (%s)", table, got, want, c)
		}
	}
	// The second run's values are those of run 2; run 1's snapshot stays.
	if got := query(t, pool, `SELECT play_count::text FROM shortvideo.video_snapshots WHERE video_id = '7001' ORDER BY run_id`); got != "1000;1001" {
		t.Errorf("play counts by run = %s, want 1000;1001", got)
	}
}

// Workers writing overlapping batches (same keys, rows in different orders,
// different values so every row is updated and locked) in parallel
// transactions never deadlock: rows are locked in one global order.
func TestConcurrentOverlappingWritesDoNotDeadlock(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	run := newRun(t, pool)
	const workers, rounds = 4, 6
	start := make(chan struct{})
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			<-start
			for i := range rounds {
				b := shuffled(rng, fullBatch(w*rounds+i))
				// Two pages in one transaction: locks of the first are held
				// while the second is written, as when a page repeats rows.
				b2 := shuffled(rng, fullBatch(w*rounds+i+100))
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					if err := writeIn(ctx, tx, run, b); err != nil {
						return err
					}
					return writeIn(ctx, tx, run, b2)
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A batch goes to the server in one round trip; a statement that fails in
// it is named by its table, and the transaction keeps none of the batch.
func TestFailedStatementNamesTableAndWritesNothing(t *testing.T) {
	t.Parallel()
	pool, run := poolWithRun(t)
	b := batchOf(
		[]sinks.SVUser{{UniqueID: "kept_nowhere", Raw: []byte(`{}`)}},
		[]sinks.SVUserSnapshot{{UniqueID: "no_such_user"}}, // its user is not stored
	)
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error { return writeIn(context.Background(), tx, run, b) })
	if err == nil || !strings.Contains(err.Error(), "write shortvideo.user_snapshots: ") {
		t.Fatalf("err = %v, want one naming shortvideo.user_snapshots", err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM shortvideo.users`).Scan(&n); err != nil || n != 0 {
		t.Errorf("users = %d (%v), want 0: the failed batch left rows behind", n, err)
	}
}

// Every foreign key of the schema points at a table written earlier in a
// batch (or at one no sink writes): the registered orders agree with the
// migrations.
func TestWriteOrderFollowsForeignKeys(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	pos := map[string]int{}
	for i, name := range sinks.Tables() {
		pos[name] = i
	}
	rows, err := pool.Query(context.Background(), `
SELECT ARRAY[c.conrelid::regclass::text, c.confrelid::regclass::text]
FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
WHERE c.contype = 'f' AND n.nspname IN ('shortvideo', 'photosocial')`)
	if err != nil {
		t.Fatal(err)
	}
	fks, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, fk := range fks {
		child, parent := fk[0], fk[1]
		c, ok1 := pos[child]
		p, ok2 := pos[parent]
		if !ok1 || !ok2 {
			continue
		}
		checked++
		if p >= c {
			t.Errorf("%s references %s but is written before it", child, parent)
		}
	}
	if checked == 0 {
		t.Error("no foreign key between registered tables: the query found nothing to check")
	}
}
