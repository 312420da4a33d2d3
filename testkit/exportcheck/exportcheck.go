// Package exportcheck reads an export of `crawler export` back with readers
// the export does not use (xitongsys/parquet-go's column reader,
// encoding/csv)
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

	"github.com/jackc/pgx/v5"
	"github.com/xitongsys/parquet-go/parquet"
	"github.com/xitongsys/parquet-go/reader"
	"github.com/xitongsys/parquet-go/source"
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

// readParquet reads a Parquet file with xitongsys/parquet-go's column
// reader (not the writer's library), batch rows at a time per column.
func readParquet(_ context.Context, path string, types []string, check func(Row) error) error {
	f, err := openFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pr, err := reader.NewParquetColumnReader(f, 1)
	if err != nil {
		return err
	}
	defer pr.ReadStop()
	cols := len(pr.SchemaHandler.ValueColumns)
	if cols != len(types) {
		return fmt.Errorf("%d columns, the manifest says %d", cols, len(types))
	}
	const batch = 4096
	for left := pr.GetNumRows(); left > 0; {
		n := min(left, batch)
		values := make([][]any, cols)
		for c := range cols {
			v, _, _, err := pr.ReadColumnByIndex(int64(c), n)
			if err != nil {
				return err
			}
			if int64(len(v)) != n {
				return fmt.Errorf("column %d: %d values read, want %d", c, len(v), n)
			}
			values[c] = v
		}
		for r := range int(n) {
			row := make(Row, cols)
			for c := range cols {
				v, err := parquetValue(values[c][r], types[c])
				if err != nil {
					return fmt.Errorf("column %d: %w", c, err)
				}
				row[c] = v
			}
			if err := check(row); err != nil {
				return err
			}
		}
		left -= n
	}
	return nil
}

// parquetValue is a value the column reader gives (its physical type:
// timestamps and dates as their integers, strings and JSON as text) in
// canonical form.
func parquetValue(v any, pgType string) (*string, error) {
	var s string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case int64:
		s = strconv.FormatInt(v, 10)
	case int32:
		s = strconv.FormatInt(int64(v), 10)
	case bool:
		s = strconv.FormatBool(v)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(v), 'g', -1, 64)
	case string:
		s = v
		if pgType == "bytea" {
			s = `\x` + fmt.Sprintf("%x", v)
		}
	default:
		return nil, fmt.Errorf("unexpected value %T", v)
	}
	return &s, nil
}

// ParquetTypes returns each column's type as a Parquet file's footer
// declares it: its logical type when it has one ("string", "json",
// "date", "timestamp[us, utc]", "int32"), else its physical type
// ("int64", "boolean", "double").
func ParquetTypes(path string) (map[string]string, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pr, err := reader.NewParquetColumnReader(f, 1)
	if err != nil {
		return nil, err
	}
	defer pr.ReadStop()
	out := map[string]string{}
	// The reader renames the footer's columns (RenameSchema); their
	// names as written are the schema handler's ExName.
	for i, se := range pr.Footer.GetSchema() {
		if i > 0 {
			out[pr.SchemaHandler.Infos[i].ExName] = parquetType(se)
		}
	}
	return out, nil
}

func parquetType(se *parquet.SchemaElement) string {
	lt := se.GetLogicalType()
	switch {
	case lt == nil:
	case lt.IsSetSTRING():
		return "string"
	case lt.IsSetJSON():
		return "json"
	case lt.IsSetDATE():
		return "date"
	case lt.IsSetTIMESTAMP():
		t := lt.GetTIMESTAMP()
		unit := "ms"
		switch {
		case t.GetUnit().IsSetMICROS():
			unit = "us"
		case t.GetUnit().IsSetNANOS():
			unit = "ns"
		}
		if t.GetIsAdjustedToUTC() {
			return "timestamp[" + unit + ", utc]"
		}
		return "timestamp[" + unit + "]"
	case lt.IsSetINTEGER():
		return fmt.Sprintf("int%d", lt.GetINTEGER().GetBitWidth())
	}
	return strings.ToLower(se.GetType().String())
}

// file is a source.ParquetFile over a local file, read-only.
type file struct{ *os.File }

func openFile(path string) (*file, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &file{f}, nil
}

func (f *file) Open(name string) (source.ParquetFile, error) {
	if name == "" {
		name = f.Name()
	}
	return openFile(name)
}

func (f *file) Create(string) (source.ParquetFile, error) {
	return nil, fmt.Errorf("read-only")
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
