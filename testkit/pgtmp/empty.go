package pgtmp

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is what Reset and Tables run their statements on: a pgx.Conn or
// a pgxpool.Pool.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Reset empties a copy of the migrated template back to the state of a new
// copy: every table outside the catalogs emptied but goose's version table
// (the template's only rows), every sequence set back. What was used leaves
// nothing else in it: no DDL, no database settings. Only the tables holding
// rows are emptied, by DELETE, and only the sequences that moved are set
// back: a test's few hundred rows cost a DELETE some 40 ms, where a TRUNCATE
// gives every table and index it names new files (some 200 ms of the
// server's time for all of them).
func Reset(ctx context.Context, q Querier) error {
	tables, err := Tables(ctx, q)
	if err != nil {
		return err
	}
	// Which tables hold rows, by their index in tables.
	var sel strings.Builder
	for i, t := range tables {
		if i > 0 {
			sel.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&sel, "SELECT %d WHERE EXISTS (SELECT FROM %s)", i, t)
	}
	rows, err := q.Query(ctx, sel.String())
	if err != nil {
		return fmt.Errorf("pgtmp: reset: %w", err)
	}
	full, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var i int
		err := r.Scan(&i)
		return tables[i], err
	})
	if err != nil {
		return fmt.Errorf("pgtmp: reset: %w", err)
	}
	reset := `SELECT setval(format('%I.%I', schemaname, sequencename)::regclass, start_value, false) FROM pg_sequences
		WHERE last_value IS NOT NULL AND sequencename <> 'goose_db_version_id_seq'`
	if len(full) > 0 {
		// One statement: the foreign keys' checks and actions run at its
		// end, when every table that held rows is empty, so no order is needed.
		var del strings.Builder
		for i, t := range full[:len(full)-1] {
			if i == 0 {
				del.WriteString("WITH ")
			} else {
				del.WriteString(", ")
			}
			fmt.Fprintf(&del, "d%d AS (DELETE FROM %s)", i, t)
		}
		fmt.Fprintf(&del, " DELETE FROM %s; ", full[len(full)-1])
		reset = del.String() + reset
	}
	if _, err := q.Exec(ctx, reset); err != nil {
		return fmt.Errorf("pgtmp: reset: %w", err)
	}
	return nil
}

// Tables lists the tables Reset empties: every one outside the catalogs
// but goose_db_version. A materialized view is an error: Reset could not
// give back its contents.
func Tables(ctx context.Context, q Querier) (tables []string, err error) {
	rows, err := q.Query(ctx, `SELECT format('%I.%I', n.nspname, c.relname), c.relkind::text FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("pgtmp: tables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, kind string
		if err := rows.Scan(&name, &kind); err != nil {
			return nil, fmt.Errorf("pgtmp: tables: %w", err)
		}
		switch {
		case kind == "m":
			return nil, fmt.Errorf("pgtmp: materialized view %s: Reset cannot empty it", name)
		case name != "public.goose_db_version":
			tables = append(tables, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgtmp: tables: %w", err)
	}
	return tables, nil
}

// Empty ends every session on the database name (admin is a connection to
// another database of its server, dbURL the database's own URL) and
// empties it (Reset): a harness keeps it for its next use, where a new
// copy (CREATE DATABASE ... TEMPLATE, then its DROP) cost the server
// ~0.27 s of CPU and emptying ~0.03 s. It fails when a session came back
// meanwhile (a process still running): drop the database then.
func Empty(ctx context.Context, admin interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, dbURL, name string) error {
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := Reset(ctx, conn); err != nil {
		return err
	}
	var others int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").Scan(&others); err != nil {
		return err
	}
	if others > 0 {
		return fmt.Errorf("pgtmp: %d sessions still open on %s", others, name)
	}
	return nil
}
