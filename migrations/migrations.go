package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed sql/*.sql
var files embed.FS

// FS returns the migration files.
func FS() fs.FS {
	sub, err := fs.Sub(files, "sql")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// Up applies every pending migration to the database behind pool and returns
// the versions it applied.
func Up(ctx context.Context, pool *pgxpool.Pool) ([]int64, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return up(ctx, db)
}

func up(ctx context.Context, db *sql.DB) ([]int64, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migrations: locker: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, FS(), goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	applied := make([]int64, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Version)
	}
	return applied, nil
}

// UpURL applies every pending migration to the database at url.
func UpURL(ctx context.Context, url string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer db.Close()
	_, err = up(ctx, db)
	return err
}

// Versions reads, without changing anything, the version the database's
// schema is at (0 when the crawler's migrations were never applied) and the
// latest version this binary knows. Read-only commands refuse a schema that
// is behind instead of migrating it.
func Versions(ctx context.Context, pool *pgxpool.Pool) (current, latest int64, err error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, FS())
	if err != nil {
		return 0, 0, fmt.Errorf("migrations: %w", err)
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, 0, fmt.Errorf("migrations: %w", err)
	}
	srcs := p.ListSources()
	latest = srcs[len(srcs)-1].Version
	if !exists {
		return 0, latest, nil
	}
	current, err = p.GetDBVersion(ctx)
	if err != nil {
		return 0, latest, fmt.Errorf("migrations: %w", err)
	}
	return current, latest, nil
}
