package migrations_test

import (
	"slices"
	"testing"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Pending reads what goose applied without writing: none on a migrated
// database, the missing ones when goose's rows say so, all of them when
// goose's table is absent (and it is not created).
func TestPending(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := t.Context()
	all := migrations.Embedded()
	if !slices.Contains(all, 12) || all[0] != 1 {
		t.Fatalf("versions %v", all)
	}
	if p, err := migrations.Pending(ctx, pool); err != nil || len(p) != 0 {
		t.Fatalf("migrated database: pending %v, %v", p, err)
	}
	last := all[len(all)-1]
	if _, err := pool.Exec(ctx, `DELETE FROM goose_db_version WHERE version_id = $1`, last); err != nil {
		t.Fatal(err)
	}
	if p, err := migrations.Pending(ctx, pool); err != nil || !slices.Equal(p, []int64{last}) {
		t.Fatalf("pending %v, %v; want [%d]", p, err, last)
	}
	if _, err := pool.Exec(ctx, `DROP TABLE goose_db_version`); err != nil {
		t.Fatal(err)
	}
	if p, err := migrations.Pending(ctx, pool); err != nil || !slices.Equal(p, all) {
		t.Fatalf("no goose table: pending %v, %v; want all", p, err)
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Scan(&exists); err != nil || exists {
		t.Errorf("Pending created goose's table (%v)", err)
	}
}
