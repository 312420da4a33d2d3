package migrations_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// uncommented lists, from the catalog, every schema, table, view and column
// of the migrated schema that has no COMMENT ON. goose's own version table
// and the system schemas are not ours; public is PostgreSQL's.
const uncommented = `
WITH ns AS (
    SELECT oid, nspname FROM pg_namespace
    WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema'
), rel AS (
    SELECT c.oid, c.relkind FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.oid <> 'public.goose_db_version'::regclass
)
SELECT 'schema ' || nspname FROM ns
WHERE nspname <> 'public' AND obj_description(oid, 'pg_namespace') IS NULL
UNION ALL
SELECT CASE WHEN relkind IN ('v', 'm') THEN 'view ' ELSE 'table ' END || oid::regclass
FROM rel WHERE obj_description(oid, 'pg_class') IS NULL
UNION ALL
SELECT 'column ' || rel.oid::regclass || '.' || quote_ident(a.attname)
FROM rel JOIN pg_attribute a ON a.attrelid = rel.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE col_description(rel.oid, a.attnum) IS NULL
ORDER BY 1`

// TestEveryObjectCommented keeps the docs' promise (docs/analysts.md) that every schema,
// table, view and column carries a comment: a migration that adds one
// without COMMENT ON fails here, naming it.
func TestEveryObjectCommented(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	rows, err := pool.Query(t.Context(), uncommented)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		missing = append(missing, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("%d objects without COMMENT ON (add them in the migration that creates them):\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
}

// TestCommentCheckCatches shows the check is not vacuous: a table added
// without comments is reported with each of its columns.
func TestCommentCheckCatches(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	if _, err := pool.Exec(t.Context(), `CREATE TABLE crawl.undocumented (a int, b text); COMMENT ON COLUMN crawl.undocumented.b IS 'b.'`); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(t.Context(), uncommented)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "column crawl.undocumented.a,table crawl.undocumented"; strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAnalystViewsDown checks migration 10 goes down and up again (the
// views depend on the tables of 00001 to 00009, which must stay droppable).
func TestAnalystViewsDown(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p := provider(t, db)
	ctx := context.Background()
	// Every view the migrations create (00010's 17 and later ones): the
	// same set must be back after up.
	var before int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_views WHERE schemaname IN ('shortvideo', 'photosocial')`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if before < 17 {
		t.Fatalf("%d views before down, want at least 00010's 17", before)
	}
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	var views int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_views WHERE schemaname IN ('shortvideo', 'photosocial')`).Scan(&views); err != nil {
		t.Fatal(err)
	}
	if views != 0 {
		t.Errorf("%d views left after down to 9", views)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_views WHERE schemaname IN ('shortvideo', 'photosocial')`).Scan(&views); err != nil {
		t.Fatal(err)
	}
	if views != before {
		t.Errorf("%d views after up, want %d (as before down)", views, before)
	}
}

func provider(t *testing.T, db *sql.DB) *goose.Provider {
	t.Helper()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
