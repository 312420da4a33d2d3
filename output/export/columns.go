package export

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
)

// kind is how a column's values travel from PostgreSQL to a file.
type kind int

const (
	kindInt64 kind = iota
	kindInt32
	kindInt16
	kindBool
	kindFloat64
	kindFloat32
	kindText      // text, varchar, enums, and what has no exact file type: PostgreSQL's text output
	kindJSON      // json and jsonb: their text (jsonb's is canonical)
	kindTimestamp // timestamp with time zone: UTC, microseconds
	kindLocalTime // timestamp without time zone: microseconds
	kindDate
	kindBytes
)

// Column is one column of an exported object, as the manifest lists it.
type Column struct {
	Name string `json:"name"`
	// Type is the column's type as PostgreSQL names it.
	Type string `json:"type"`
	// Parquet is the Parquet type it is written as (its logical type, or
	// the physical one); CSV writes the same values as text
	// (docs/export.md).
	Parquet string `json:"parquet"`
	// AsText, when true, says the column holds PostgreSQL's text output of
	// a type without an exact file type (numeric, interval, uuid, arrays,
	// enums).
	AsText bool `json:"as_text,omitempty"`
	kind   kind
}

// kindOf maps a PostgreSQL type to how it is exported. Exact where a file
// type is exact: 64-bit ids stay int64, ids stored as text stay text,
// timestamps keep their zone (UTC). numeric has no precision in the views
// that compute it, so it goes as its exact text, as interval does
// (ISO 8601, the transaction's intervalstyle).
func kindOf(pgType string, enum bool) (kind, string, bool) {
	switch pgType {
	case "bigint":
		return kindInt64, "INT64", false
	case "integer":
		return kindInt32, "INT32", false
	case "smallint":
		return kindInt16, "INT(16)", false
	case "boolean":
		return kindBool, "BOOLEAN", false
	case "double precision":
		return kindFloat64, "DOUBLE", false
	case "real":
		return kindFloat32, "FLOAT", false
	case "text", "name":
		return kindText, "STRING", false
	case "json", "jsonb":
		return kindJSON, "JSON", false
	case "timestamp with time zone":
		return kindTimestamp, "TIMESTAMP(MICROS, UTC)", false
	case "timestamp without time zone":
		return kindLocalTime, "TIMESTAMP(MICROS, local)", false
	case "date":
		return kindDate, "DATE", false
	case "bytea":
		return kindBytes, "BYTE_ARRAY", false
	}
	if strings.HasPrefix(pgType, "character varying") || strings.HasPrefix(pgType, "character(") || pgType == "character" {
		return kindText, "STRING", false
	}
	if enum {
		return kindText, "STRING", false
	}
	return kindText, "STRING", true
}

// selectExpr is the column as the export's query selects it: what pgx
// decodes exactly as is, the rest as text.
func (c Column) selectExpr() string {
	id := pgx.Identifier{c.Name}.Sanitize()
	switch {
	case c.kind == kindJSON, c.kind == kindText && (c.AsText || c.Type != "text"):
		return id + "::text"
	}
	return id
}

// orderExpr is the column as an ORDER BY key, the source's (not an output
// column of the same name): json has no ordering, its text has.
func (c Column) orderExpr() string {
	id := "src." + pgx.Identifier{c.Name}.Sanitize()
	if c.Type == "json" {
		return id + "::text"
	}
	return id
}

var (
	exportColumns    = db.Prepare[nameArg]("ExportColumns")
	exportPrimaryKey = db.Prepare[nameArg]("ExportPrimaryKey")
	exportRelation   = db.Prepare[nameArg]("ExportRelation")
	exportViewDef    = db.Prepare[nameArg]("ExportViewDef")
	exportDefaults   = db.Prepare[struct{}]("ExportDefaultObjects")
)

type nameArg struct {
	Name string `db:"name"`
}

// relation is a table or view of the database.
type relation struct {
	Schema, Name string
	Kind         string // r, p: table; v: view; m: materialized view
	Columns      []Column
	Key          []string // primary key columns; none for a view
}

func (r relation) qualified() string { return r.Schema + "." + r.Name }

func (r relation) sanitized() string { return pgx.Identifier{r.Schema, r.Name}.Sanitize() }

func (r relation) isView() bool { return r.Kind == "v" || r.Kind == "m" }

func (r relation) has(col string) bool {
	for _, c := range r.Columns {
		if c.Name == col {
			return true
		}
	}
	return false
}

// loadRelation reads a relation's kind, columns and key; ok is false when
// no table or view has the name.
func loadRelation(ctx context.Context, q db.Querier, name string) (relation, bool, error) {
	var r relation
	err := exportRelation.QueryRow(ctx, q, nameArg{name}).Scan(&r.Kind, &r.Schema, &r.Name)
	if err == pgx.ErrNoRows {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("look up %s: %w", name, err)
	}
	rows, err := exportColumns.Query(ctx, q, nameArg{r.qualified()})
	if err != nil {
		return r, false, err
	}
	for rows.Next() {
		var c Column
		var enum bool
		if err := rows.Scan(&c.Name, &c.Type, &enum); err != nil {
			rows.Close()
			return r, false, err
		}
		c.kind, c.Parquet, c.AsText = kindOf(c.Type, enum)
		r.Columns = append(r.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return r, false, err
	}
	rows, err = exportPrimaryKey.Query(ctx, q, nameArg{r.qualified()})
	if err != nil {
		return r, false, err
	}
	r.Key, err = pgx.CollectRows(rows, pgx.RowTo[string])
	return r, true, err
}
