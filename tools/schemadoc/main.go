// Command schemadoc writes the data dictionary (docs/schema.md) from the
// PostgreSQL catalog of a freshly migrated database:
//
//	go run ./tools/withpg -- go run ./tools/schemadoc -out docs/schema.md
//
// (make schema-doc). It creates a scratch database on the server in
// DATABASE_URL (the role needs CREATEDB), applies every migration, reads the
// schemas, tables, views, columns, constraints, indexes and their comments,
// and drops the scratch database. A test regenerates the dictionary and
// fails when docs/schema.md differs, so the file always matches the
// migrations.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/migrations"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("schemadoc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the dictionary to this file (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "schemadoc: no arguments expected, got %q\n", fs.Args())
		return 2
	}
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		fmt.Fprintln(stderr, "schemadoc: DATABASE_URL is not set (run it under go run ./tools/withpg --)")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	doc, err := scratch(ctx, base)
	if err != nil {
		fmt.Fprintf(stderr, "schemadoc: %v\n", err)
		return 1
	}
	if *out == "" {
		_, err = stdout.Write(doc)
	} else {
		err = os.WriteFile(*out, doc, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "schemadoc: %v\n", err)
		return 1
	}
	return 0
}

// scratch migrates a new database on the server at base, generates the
// dictionary from it and drops it.
func scratch(ctx context.Context, base string) ([]byte, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, errors.New("DATABASE_URL is not a valid URL")
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(context.Background())
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "schemadoc_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, fmt.Errorf("create scratch database: %w", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}()
	u.Path = "/" + name
	q := u.Query()
	q.Del("dbname")
	q.Del("database")
	u.RawQuery = q.Encode()
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("connect to scratch database: %w", err)
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool); err != nil {
		return nil, err
	}
	return Generate(ctx, pool)
}

// column is one column of a table or view.
type column struct {
	name, typ, def, comment string
	notNull                 bool
}

// relation is a table or view with its columns.
type relation struct {
	schema, name, kind, comment string
	columns                     []column
	constraints, indexes        []string
}

// Generate renders the data dictionary of the database behind pool as
// Markdown. The output depends only on the catalog (no names of databases,
// no times), so two databases migrated alike give the same bytes.
func Generate(ctx context.Context, pool *pgxpool.Pool) ([]byte, error) {
	var version int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&version); err != nil {
		return nil, fmt.Errorf("schema version: %w", err)
	}
	type schema struct{ name, comment string }
	var schemas []schema
	rows, err := pool.Query(ctx, `
		SELECT nspname, coalesce(obj_description(oid, 'pg_namespace'), '')
		FROM pg_namespace
		WHERE nspname NOT LIKE 'pg\_%' AND nspname NOT IN ('information_schema', 'public')
		ORDER BY nspname`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var s schema
		if err := rows.Scan(&s.name, &s.comment); err != nil {
			return nil, err
		}
		schemas = append(schemas, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rels, err := relations(ctx, pool)
	if err != nil {
		return nil, err
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "# Data dictionary\n\n")
	fmt.Fprintf(&b, "Generated from the PostgreSQL catalog after migration %d by `make schema-doc`\n", version)
	fmt.Fprintf(&b, "(`tools/schemadoc`); do not edit by hand. A test fails when this file\n")
	fmt.Fprintf(&b, "does not match the migrations. The text of each entry is its `COMMENT ON`.\n\n")
	for _, s := range schemas {
		fmt.Fprintf(&b, "- [`%s`](#schema-%s): %s\n", s.name, s.name, inline(s.comment))
		for _, r := range rels {
			if r.schema == s.name {
				fmt.Fprintf(&b, "  - %s [`%s.%s`](#%s)\n", r.kind, r.schema, r.name, anchor(r))
			}
		}
	}
	for _, s := range schemas {
		fmt.Fprintf(&b, "\n<a id=\"schema-%s\"></a>\n## Schema `%s`\n\n%s\n", s.name, s.name, inline(s.comment))
		for _, r := range rels {
			if r.schema != s.name {
				continue
			}
			fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n### %s `%s.%s`\n\n%s\n\n", anchor(r), r.kind, r.schema, r.name, inline(r.comment))
			if r.kind == "view" {
				fmt.Fprintf(&b, "| column | type | description |\n|---|---|---|\n")
				for _, c := range r.columns {
					fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.name, c.typ, cell(c.comment))
				}
			} else {
				fmt.Fprintf(&b, "| column | type | null | default | description |\n|---|---|---|---|---|\n")
				for _, c := range r.columns {
					null := "yes"
					if c.notNull {
						null = "no"
					}
					def := ""
					if c.def != "" {
						def = "`" + code(c.def, true) + "`"
					}
					fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", c.name, c.typ, null, def, cell(c.comment))
				}
			}
			if len(r.constraints) > 0 {
				fmt.Fprintf(&b, "\nConstraints:\n")
				for _, c := range r.constraints {
					fmt.Fprintf(&b, "- %s\n", c)
				}
			}
			if len(r.indexes) > 0 {
				fmt.Fprintf(&b, "\nIndexes:\n")
				for _, c := range r.indexes {
					fmt.Fprintf(&b, "- %s\n", c)
				}
			}
		}
	}
	return b.Bytes(), nil
}

// relations reads the tables and views of the non-system schemas (goose's
// version table aside), with columns, constraints and the indexes that are
// not a constraint's.
func relations(ctx context.Context, pool *pgxpool.Pool) ([]*relation, error) {
	rows, err := pool.Query(ctx, `
		SELECT c.oid::regclass::text, n.nspname, c.relname,
		       CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END,
		       coalesce(obj_description(c.oid, 'pg_class'), ''),
		       a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
		       coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
		       coalesce(col_description(c.oid, a.attnum), '')
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
		WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
		  AND n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT IN ('information_schema', 'public')
		ORDER BY n.nspname, c.relkind IN ('v', 'm'), c.relname, a.attnum`)
	if err != nil {
		return nil, err
	}
	var rels []*relation
	byName := map[string]*relation{}
	for rows.Next() {
		var key string
		var r relation
		var col column
		if err := rows.Scan(&key, &r.schema, &r.name, &r.kind, &r.comment, &col.name, &col.typ, &col.notNull, &col.def, &col.comment); err != nil {
			return nil, err
		}
		cur := byName[key]
		if cur == nil {
			cur = &r
			byName[key] = cur
			rels = append(rels, cur)
		}
		cur.columns = append(cur.columns, col)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}

	err = eachDefinition(ctx, pool, byName, `
		SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
		FROM pg_constraint
		WHERE contype IN ('p', 'u', 'f', 'c', 'x') AND conrelid <> 0
		ORDER BY 1, CASE contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'f' THEN 2 ELSE 3 END, conname`,
		func(r *relation, name, def string) {
			r.constraints = append(r.constraints, fmt.Sprintf("`%s`: `%s`", name, code(def, false)))
		})
	if err != nil {
		return nil, err
	}
	err = eachDefinition(ctx, pool, byName, `
		SELECT i.indrelid::regclass::text, x.relname, pg_get_indexdef(i.indexrelid)
		FROM pg_index i
		JOIN pg_class x ON x.oid = i.indexrelid
		WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid)
		ORDER BY 1, 2`,
		func(r *relation, name, def string) {
			if _, using, ok := strings.Cut(def, " USING "); ok {
				def = using
			}
			r.indexes = append(r.indexes, fmt.Sprintf("`%s`: `%s`", name, code(def, false)))
		})
	return rels, err
}

// eachDefinition runs query, whose rows are (relation, name, definition),
// and hands add each row of a relation in byName.
func eachDefinition(ctx context.Context, pool *pgxpool.Pool, byName map[string]*relation, query string, add func(r *relation, name, def string)) error {
	rows, err := pool.Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key, name, def string
		if err := rows.Scan(&key, &name, &def); err != nil {
			return err
		}
		if r := byName[key]; r != nil {
			add(r, name, def)
		}
	}
	return rows.Err()
}

func anchor(r *relation) string { return r.schema + "-" + strings.ReplaceAll(r.name, "_", "-") }

// inline makes a comment one line of Markdown text: white space collapsed,
// and < > & written as entities (a comment saying secuid:<secUid> is not
// HTML).
func inline(s string) string {
	if s == "" {
		return "(no comment)"
	}
	return entities.Replace(strings.Join(strings.Fields(s), " "))
}

var entities = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// cell is inline for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(inline(s), "|", `\|`) }

// code makes SQL text one line for a code span (no entities: code spans
// show them literally); pipe escaped for table cells.
func code(s string, inCell bool) string {
	s = strings.Join(strings.Fields(s), " ")
	if inCell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	return s
}
