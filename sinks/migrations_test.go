package sinks_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// The content migrations (00003 and later) go down cleanly to the accounts
// schema of 00002 and up again.
func TestContentMigrationsDownAndUp(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS())
	if err != nil {
		t.Fatal(err)
	}
	tables := func() string {
		return query(t, pool, `SELECT string_agg(format('%I.%I', table_schema, table_name), ',' ORDER BY table_schema COLLATE "C", table_name COLLATE "C")
			FROM information_schema.tables WHERE table_schema IN ('shortvideo', 'photosocial')`)
	}
	all := tables()
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatalf("down to 2: %v", err)
	}
	if got, want := tables(), "shortvideo.follows,shortvideo.user_snapshots,shortvideo.users"; got != want {
		t.Errorf("tables after down to 2 = %s, want %s", got, want)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if got := tables(); got != all {
		t.Errorf("tables after up again = %s, want %s", got, all)
	}
}
