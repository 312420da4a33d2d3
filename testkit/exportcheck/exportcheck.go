// Package exportcheck reads an export of `crawler export` back with readers
// the export does not use (Apache Arrow's Parquet reader, encoding/csv)
// and compares every row with PostgreSQL, value by value in a canonical
// text form: integers and booleans as text, timestamps as microseconds
// since the epoch, dates as days, floats by value, the rest as
// PostgreSQL's text output.
package exportcheck

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5"
)

// Manifest is the part of an export's manifest the check reads, decoded
// on its own (not with package export's types).
type Manifest struct {
	Format  string `json:"format"`
	AsOf    *int64 `json:"as_of_run"`
	Objects []struct {
		Name    string   `json:"name"`
		Rows    int64    `json:"rows"`
		OrderBy []string `json:"order_by"`
		Columns []struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			Parquet string `json:"parquet"`
		} `json:"columns"`
		Files []struct {
			Path string `json:"path"`
			Rows int64  `json:"rows"`
		} `json:"files"`
	} `json:"objects"`
}

// ReadManifest decodes dir's manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m Manifest
	return &m, json.Unmarshal(b, &m)
}

// Row is a row's values in canonical form; nil is NULL.
type Row []*string

// Source is the SQL of an object's rows to compare with: the object itself
// for the latest state; a test gives its own for an export as of a run.
type Source func(object string) string

// Compare reads every file of the export in dir and compares its rows, in
// order, with PostgreSQL's rows of each object from src, ordered by the
// manifest's order_by. It returns the rows compared per object.
func Compare(ctx context.Context, conn *pgx.Conn, dir string, src Source) (map[string]int64, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "SET IntervalStyle = 'iso_8601'; SET TimeZone = 'UTC'"); err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, o := range m.Objects {
		types := make([]string, len(o.Columns))
		exprs := make([]string, len(o.Columns))
		for i, c := range o.Columns {
			types[i] = c.Type
			exprs[i] = canonicalSQL("src."+pgx.Identifier{c.Name}.Sanitize(), c.Type) + fmt.Sprintf(" AS c%d", i)
		}
		order := make([]string, len(o.OrderBy))
		for i, c := range o.OrderBy {
			order[i] = "src." + pgx.Identifier{c}.Sanitize()
			for _, col := range o.Columns {
				if col.Name == c && col.Type == "json" {
					order[i] += "::text"
				}
			}
		}
		q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + src(o.Name) + " AS src ORDER BY " + strings.Join(order, ", ")
		rows, err := conn.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Name, err)
		}
		next := func() (Row, bool, error) {
			if !rows.Next() {
				return nil, false, rows.Err()
			}
			vals := make([]*string, len(types))
			ptrs := make([]any, len(types))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return nil, false, err
			}
			for i, v := range vals {
				if v != nil && (types[i] == "double precision" || types[i] == "real") {
					vals[i] = canonFloat(*v)
				}
			}
			return vals, true, nil
		}
		var n int64
		for fi, f := range o.Files {
			path := filepath.Join(dir, filepath.FromSlash(f.Path))
			var rowsInFile int64
			check := func(got Row) error {
				want, ok, err := next()
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("%s: row %d in %s, PostgreSQL has only %d", o.Name, n+1, f.Path, n)
				}
				if len(want) != len(got) {
					return fmt.Errorf("%s row %d: %d columns, PostgreSQL %d", o.Name, n+1, len(got), len(want))
				}
				for i := range want {
					if !sameValue(m.Format, types[i], want[i], got[i]) {
						return fmt.Errorf("%s row %d column %s: file %s, PostgreSQL %s", o.Name, n+1, o.Columns[i].Name, show(got[i]), show(want[i]))
					}
				}
				n++
				rowsInFile++
				return nil
			}
			if m.Format == "csv" {
				err = readCSV(path, types, check)
			} else {
				err = readParquet(ctx, path, types, check)
			}
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s file %d: %w", o.Name, fi, err)
			}
			if rowsInFile != f.Rows {
				rows.Close()
				return nil, fmt.Errorf("%s: %d rows read, the manifest says %d", f.Path, rowsInFile, f.Rows)
			}
		}
		if _, more, err := next(); err != nil || more {
			rows.Close()
			return nil, fmt.Errorf("%s: the files hold %d rows, PostgreSQL more (%v)", o.Name, n, err)
		}
		rows.Close()
		if n != o.Rows {
			return nil, fmt.Errorf("%s: %d rows, the manifest says %d", o.Name, n, o.Rows)
		}
		counts[o.Name] = n
	}
	return counts, nil
}

func show(v *string) string {
	if v == nil {
		return "NULL"
	}
	return strconv.Quote(*v)
}

func sameValue(format, typ string, want, got *string) bool {
	if format == "csv" {
		// encoding/csv does not tell NULL from "": compare as text.
		w, g := "", ""
		if want != nil {
			w = *want
		}
		if got != nil {
			g = *got
		}
		return w == g
	}
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	return *want == *got
}

func canonFloat(s string) *string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return &s
	}
	c := strconv.FormatFloat(f, 'g', -1, 64)
	return &c
}

// canonicalSQL is a column's canonical text as PostgreSQL computes it.
func canonicalSQL(col, typ string) string {
	switch typ {
	case "timestamp with time zone", "timestamp without time zone":
		return "(extract(epoch FROM " + col + ") * 1000000)::bigint::text"
	case "date":
		return "(" + col + " - date '1970-01-01')::text"
	}
	return col + "::text"
}

// readParquet reads a Parquet file with Arrow's reader, a batch at a time.
func readParquet(ctx context.Context, path string, types []string, check func(Row) error) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		cols := rec.Columns()
		for r := 0; r < int(rec.NumRows()); r++ {
			row := make(Row, len(cols))
			for c, arr := range cols {
				v, err := arrowValue(arr, r, types[c])
				if err != nil {
					return fmt.Errorf("column %s: %w", rec.ColumnName(c), err)
				}
				row[c] = v
			}
			if err := check(row); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return err
	}
	return nil
}

func arrowValue(arr arrow.Array, i int, pgType string) (*string, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	var s string
	switch a := arr.(type) {
	case *array.Int64:
		s = strconv.FormatInt(a.Value(i), 10)
	case *array.Int32:
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Boolean:
		s = strconv.FormatBool(a.Value(i))
	case *array.Float64:
		s = strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Float32:
		s = strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 64)
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		if unit != arrow.Microsecond {
			return nil, fmt.Errorf("timestamp in %s, want microseconds", unit)
		}
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Date32:
		s = strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.String:
		s = a.Value(i)
	case *array.LargeString:
		s = a.Value(i)
	case *array.Binary:
		// Arrow reads Parquet's JSON logical type as bytes.
		if pgType == "json" || pgType == "jsonb" {
			s = string(a.Value(i))
		} else {
			s = `\x` + fmt.Sprintf("%x", a.Value(i))
		}
	case array.ExtensionArray:
		return arrowValue(a.Storage(), i, pgType)
	default:
		return nil, fmt.Errorf("unexpected Arrow type %s", arr.DataType())
	}
	return &s, nil
}

// ParquetTypes returns the Arrow type Arrow's reader gives each column of
// a Parquet file.
func ParquetTypes(path string) (map[string]string, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	s, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range s.Fields() {
		out[f.Name] = f.Type.String()
	}
	return out, nil
}

// readCSV reads a CSV file with encoding/csv; timestamps and dates are
// turned into the canonical numbers.
func readCSV(path string, types []string, check func(Row) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	if _, err := r.Read(); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		row := make(Row, len(rec))
		for i, v := range rec {
			v := v
			if v != "" {
				switch types[i] {
				case "timestamp with time zone":
					t, err := time.Parse(time.RFC3339Nano, v)
					if err != nil {
						return err
					}
					v = strconv.FormatInt(t.UnixMicro(), 10)
				case "timestamp without time zone":
					t, err := time.Parse("2006-01-02T15:04:05.999999", v)
					if err != nil {
						return err
					}
					v = strconv.FormatInt(t.UnixMicro(), 10)
				case "date":
					t, err := time.Parse(time.DateOnly, v)
					if err != nil {
						return err
					}
					v = strconv.FormatInt(t.Unix()/86400, 10)
				case "double precision", "real":
					v = *canonFloat(v)
				}
			}
			row[i] = &v
		}
		if err := check(row); err != nil {
			return err
		}
	}
}
