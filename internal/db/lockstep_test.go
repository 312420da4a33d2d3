package db_test

import (
	"testing"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// TestLockstepRows: PostgreSQL gives the same rows for a unnest in FROM
// and its lockstep form (TestLockstepUnnest): the arrays zipped, a shorter
// one or a NULL (a padded column, Query.padded) filled with NULLs.
func TestLockstepRows(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	const sql = "SELECT string_agg(concat_ws(':', r.a, r.b, r.c), ',') FROM unnest($1::text[], $2::int[], $3::text[]) AS r(a, b, c)"
	var got []string
	for _, q := range []string{sql, db.Lockstep(sql)} {
		var s string
		if err := pool.QueryRow(t.Context(), q, []string{"x", "y", "z"}, []int32{1, 2}, nil).Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if got[0] != "x:1,y:2,z" || got[1] != got[0] {
		t.Errorf("rows %q (FROM unnest), %q (lockstep); want x:1,y:2,z for both", got[0], got[1])
	}
}
