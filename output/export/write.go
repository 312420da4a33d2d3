package export

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Format is a file format of the export.
type Format string

const (
	Parquet Format = "parquet"
	CSV     Format = "csv"
)

// rowGroupBytes bounds the values a Parquet row group holds before it is
// flushed to the file: with the cursor's batch, what an export keeps in
// memory whatever the table's size (docs/export.md#memory).
const rowGroupBytes = 16 << 20

// rowWriter writes one file's rows.
type rowWriter interface {
	write(vals []any) error
	close() error
}

func newRowWriter(f Format, w io.Writer, cols []Column) rowWriter {
	if f == CSV {
		return newCSVWriter(w, cols)
	}
	return newParquetWriter(w, cols)
}

// orderedGroup keeps a schema's columns in the table's order (a
// parquet.Group sorts them by name).
type orderedGroup struct {
	parquet.Group
	order []string
}

func (g orderedGroup) Fields() []parquet.Field {
	byName := map[string]parquet.Field{}
	for _, f := range g.Group.Fields() {
		byName[f.Name()] = f
	}
	out := make([]parquet.Field, len(g.order))
	for i, n := range g.order {
		out[i] = byName[n]
	}
	return out
}

func parquetNode(k kind) parquet.Node {
	switch k {
	case kindInt64:
		return parquet.Int(64)
	case kindInt32:
		return parquet.Int(32)
	case kindInt16:
		return parquet.Int(16)
	case kindBool:
		return parquet.Leaf(parquet.BooleanType)
	case kindFloat64:
		return parquet.Leaf(parquet.DoubleType)
	case kindFloat32:
		return parquet.Leaf(parquet.FloatType)
	case kindJSON:
		return parquet.JSON()
	case kindTimestamp:
		return parquet.TimestampAdjusted(parquet.Microsecond, true)
	case kindLocalTime:
		return parquet.TimestampAdjusted(parquet.Microsecond, false)
	case kindDate:
		return parquet.Date()
	case kindBytes:
		return parquet.Leaf(parquet.ByteArrayType)
	}
	return parquet.String()
}

type parquetWriter struct {
	w     *parquet.Writer
	cols  []Column
	row   parquet.Row
	bytes int
}

// newParquetWriter writes with fixed settings (zstd at its default level,
// one encoder, no key-value metadata, a fixed created_by), so the same rows
// give the same bytes.
func newParquetWriter(w io.Writer, cols []Column) *parquetWriter {
	g := parquet.Group{}
	order := make([]string, len(cols))
	for i, c := range cols {
		g[c.Name] = parquet.Optional(parquetNode(c.kind))
		order[i] = c.Name
	}
	schema := parquet.NewSchema("export", orderedGroup{g, order})
	pw := parquet.NewWriter(w, schema,
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault, Concurrency: 1}),
		parquet.CreatedBy("socialcrawl crawler export", "1", ""),
		parquet.MaxRowsPerRowGroup(1<<20))
	return &parquetWriter{w: pw, cols: cols, row: make(parquet.Row, len(cols))}
}

func (p *parquetWriter) write(vals []any) error {
	for i, v := range vals {
		if v == nil {
			p.row[i] = parquet.NullValue().Level(0, 0, i)
			continue
		}
		pv, n, err := parquetValue(p.cols[i].kind, v)
		if err != nil {
			return fmt.Errorf("column %s: %w", p.cols[i].Name, err)
		}
		p.bytes += n
		p.row[i] = pv.Level(0, 1, i)
	}
	if _, err := p.w.WriteRows([]parquet.Row{p.row}); err != nil {
		return err
	}
	if p.bytes >= rowGroupBytes {
		p.bytes = 0
		return p.w.Flush()
	}
	return nil
}

func (p *parquetWriter) close() error { return p.w.Close() }

// parquetValue converts a value pgx decoded, and says roughly how many
// bytes it holds.
func parquetValue(k kind, v any) (parquet.Value, int, error) {
	switch k {
	case kindInt64:
		if x, ok := v.(int64); ok {
			return parquet.Int64Value(x), 8, nil
		}
	case kindInt32:
		if x, ok := v.(int32); ok {
			return parquet.Int32Value(x), 4, nil
		}
	case kindInt16:
		if x, ok := v.(int16); ok {
			return parquet.Int32Value(int32(x)), 4, nil
		}
	case kindBool:
		if x, ok := v.(bool); ok {
			return parquet.BooleanValue(x), 1, nil
		}
	case kindFloat64:
		if x, ok := v.(float64); ok {
			return parquet.DoubleValue(x), 8, nil
		}
	case kindFloat32:
		if x, ok := v.(float32); ok {
			return parquet.FloatValue(x), 4, nil
		}
	case kindTimestamp, kindLocalTime:
		if x, ok := v.(time.Time); ok {
			return parquet.Int64Value(x.UnixMicro()), 8, nil
		}
	case kindDate:
		if x, ok := v.(time.Time); ok {
			return parquet.Int32Value(int32(x.Unix() / 86400)), 4, nil
		}
	case kindBytes:
		if x, ok := v.([]byte); ok {
			return parquet.ByteArrayValue(x), len(x), nil
		}
	default:
		if x, ok := v.(string); ok {
			return parquet.ByteArrayValue([]byte(x)), len(x), nil
		}
	}
	return parquet.Value{}, 0, fmt.Errorf("unexpected value %T", v)
}

// csvWriter writes RFC 4180 CSV with a header: NULL is an empty field, an
// empty string is "" (quoted), timestamps are RFC 3339 in UTC with
// microseconds, bytea is \x and hex as PostgreSQL prints it.
type csvWriter struct {
	w    *bufio.Writer
	cols []Column
	buf  []byte
}

func newCSVWriter(w io.Writer, cols []Column) *csvWriter {
	c := &csvWriter{w: bufio.NewWriterSize(w, 64<<10), cols: cols}
	names := make([]any, len(cols))
	for i, col := range cols {
		names[i] = col.Name
	}
	c.header(names)
	return c
}

func (c *csvWriter) header(names []any) {
	for i, n := range names {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.w.WriteString(csvQuote(n.(string)))
	}
	c.w.WriteString("\r\n")
}

func (c *csvWriter) write(vals []any) error {
	for i, v := range vals {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if v == nil {
			continue
		}
		s, err := csvText(c.cols[i].kind, v)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.cols[i].Name, err)
		}
		c.w.WriteString(s)
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

func (c *csvWriter) close() error { return c.w.Flush() }

func csvText(k kind, v any) (string, error) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return formatFloat(x, 64), nil
	case float32:
		return formatFloat(float64(x), 32), nil
	case time.Time:
		switch k {
		case kindDate:
			return x.Format(time.DateOnly), nil
		case kindLocalTime:
			return x.Format("2006-01-02T15:04:05.999999"), nil
		}
		return x.UTC().Format("2006-01-02T15:04:05.999999Z"), nil
	case []byte:
		return `\x` + hex.EncodeToString(x), nil
	case string:
		return csvQuote(x), nil
	}
	return "", fmt.Errorf("unexpected value %T", v)
}

func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// csvQuote quotes a string field when it must be, and always when it is
// empty, so an empty string differs from NULL.
func csvQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[len(s)-1] != ' ' {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
