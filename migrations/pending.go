package migrations

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Querier is what Pending reads through: a pool, a connection or a
// transaction (a read-only one is enough).
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// appliedSQL lists the versions goose recorded as applied (its latest row
// per version), or nothing when goose's table does not exist yet. Read
// only: unlike goose's own HasPending, it never creates the table.
const appliedSQL = `
SELECT v.version_id FROM (
    SELECT DISTINCT ON (version_id) version_id, is_applied
    FROM goose_db_version ORDER BY version_id, id DESC
) v WHERE v.is_applied AND v.version_id > 0`

// Embedded are the versions of the embedded migrations, ascending.
func Embedded() []int64 {
	entries, err := fs.ReadDir(FS(), ".")
	if err != nil {
		panic(err) // embedded
	}
	var vs []int64
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if v, err := strconv.ParseInt(num, 10, 64); ok && err == nil && strings.HasSuffix(e.Name(), ".sql") {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

// Pending returns the embedded migrations the database has not applied,
// ascending, reading only: `crawler plan` checks a database with it, and
// `crawler run` skips goose's lock when nothing is pending.
func Pending(ctx context.Context, q Querier) ([]int64, error) {
	var exists bool
	rows, err := q.Query(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	exists, err = pgx.CollectExactlyOneRow(rows, pgx.RowTo[bool])
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	applied := map[int64]bool{}
	if exists {
		rows, err := q.Query(ctx, appliedSQL)
		if err != nil {
			return nil, fmt.Errorf("migrations: read applied versions: %w", err)
		}
		vs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, fmt.Errorf("migrations: read applied versions: %w", err)
		}
		for _, v := range vs {
			applied[v] = true
		}
	}
	var pending []int64
	for _, v := range Embedded() {
		if !applied[v] {
			pending = append(pending, v)
		}
	}
	return pending, nil
}
