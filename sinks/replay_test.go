package sinks_test

import (
	"testing"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Replaying an old run over a newer one (crawler replay writes the old
// run's rows again) changes no row of any table: not a newer run's
// content, nor its bookkeeping (updated_at, last_seen_run,
// last_checked_run), nor the old run's own per-run rows; no row is even
// rewritten with equal values (xmin). Run 2's batch differs from run 1's
// in every row, so every row run 2 wrote is one the replay must leave.
func TestReplayOfOlderRunRewritesNothing(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	run1, run2 := newRun(t, pool), newRun(t, pool)
	write(t, pool, run1, fullBatch(0))
	first := dump(t, pool)
	write(t, pool, run2, fullBatch(1))
	before := dump(t, pool)
	for _, table := range sinks.Tables() {
		if first[table] == before[table] {
			t.Errorf("run 2 changed nothing in %s: the test would not see a replay move it", table)
		}
	}

	rewriteEveryWay(t, pool, run1, func() *sinks.Batch { return fullBatch(0) }, before, "replaying run 1 over run 2")
}

// What an older run still changes: the NULLs it fills and first_seen_run,
// and updated_at with them, while the newer run's values, raw and
// last_seen_run stay. Run 2 saw account a without a nickname and account
// b first; the replay of run 1 knew a's nickname and saw b.
func TestReplayOfOlderRunFillsAndMovesFirstSeen(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	run1, run2 := newRun(t, pool), newRun(t, pool)
	write(t, pool, run1, batchOf([]sinks.SVUser{{UniqueID: "a", Nickname: ptr("A"), Verified: ptr(true), Raw: []byte(`{"v": 1}`)}}))
	write(t, pool, run2, batchOf([]sinks.SVUser{
		{UniqueID: "a", Verified: ptr(false), Raw: []byte(`{"v": 2}`)},
		{UniqueID: "b", Nickname: ptr("B"), Raw: []byte(`{"v": 2}`)},
	}))
	// Forget a's nickname, as if run 2 had been the first to write it.
	if _, err := pool.Exec(t.Context(), `UPDATE shortvideo.users SET nickname = CASE WHEN unique_id = 'a' THEN NULL ELSE nickname END, updated_at = now() - interval '1 day'`); err != nil {
		t.Fatal(err)
	}
	write(t, pool, run1, batchOf([]sinks.SVUser{
		{UniqueID: "a", Nickname: ptr("A"), Verified: ptr(true), Raw: []byte(`{"v": 1}`)},
		{UniqueID: "b", Nickname: ptr("B"), Raw: []byte(`{"v": 1}`)},
	}))
	const q = `SELECT concat_ws('|', unique_id, nickname, verified, raw->>'v', first_seen_run - $1, last_seen_run - $1, updated_at > now() - interval '1 hour')
		FROM shortvideo.users ORDER BY unique_id`
	if got, want := query(t, pool, q, run1), "a|A|f|2|0|1|t;b|B|2|0|1|t"; got != want {
		t.Errorf("after the replay of run 1: %s, want %s", got, want)
	}
}
