package db

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// RunArg is the parameter of the statements that take only a run.
type RunArg struct {
	RunID int64 `db:"run_id"`
}

// OwnerArg is the parameter of the statements that take a run and a
// process's owner tag (its leases' owner, its credit hold's owner): Owner
// is the tag, or a prefix of tags where the statement says so.
type OwnerArg struct {
	RunID int64  `db:"run_id"`
	Owner string `db:"owner"`
}

// JobArg is the parameter of the statements that take only a job.
type JobArg struct {
	JobName string `db:"job_name"`
}

// Stmt is a query bound to its parameter struct P: each field of P tagged
// `db:"name"` is the query's @name. Prepare checks, once, that the fields
// and the query's parameters match one to one.
type Stmt[P any] struct {
	q      *Query
	fields [][]int // fields[i] is the index in P of the value of $(i+1)
}

// Prepare returns the query called name bound to P. It panics when the
// query does not exist or P's tagged fields are not exactly its parameters:
// call it in a package-level variable, so a mismatch fails at init.
func Prepare[P any](name string) Stmt[P] {
	q := Lookup(name)
	markPrepared(name)
	fields := taggedFields(reflect.TypeFor[P]())
	s := Stmt[P]{q: q}
	for _, p := range q.Params {
		f, ok := fields[p]
		if !ok {
			panic(fmt.Sprintf("db: query %s: parameter @%s has no field tagged db:%q in %v", name, p, p, reflect.TypeFor[P]()))
		}
		s.fields = append(s.fields, f.Index)
		delete(fields, p)
	}
	if len(fields) > 0 {
		panic(fmt.Sprintf("db: query %s does not use the fields %s of %v", name, fieldNames(fields), reflect.TypeFor[P]()))
	}
	return s
}

// SQL is the text to send.
func (s Stmt[P]) SQL() string { return s.q.SQL }

// Args are the positional arguments of the query for p.
func (s Stmt[P]) Args(p P) []any {
	v := reflect.ValueOf(&p).Elem()
	args := make([]any, len(s.fields))
	for i, idx := range s.fields {
		args[i] = v.FieldByIndex(idx).Interface()
	}
	return args
}

// Bulk is a bulk statement: the query's parameters are fields of P
// (scalars, such as the run id) or columns of the rows R, each a field of R
// tagged `db:"column"` and sent as one array, to unnest in SQL:
//
//	FROM unnest(@unique_id::text[], @nickname::text[]) AS r(unique_id, nickname)
//
// A []byte field is sent as text (cast it in SQL: r.raw::jsonb). Which
// field feeds which parameter is worked out once, in PrepareBulk.
type Bulk[P, R any] struct {
	q    *Query
	sql  string // q.SQL, its unnest in FROM run in lockstep (lockstep)
	args []bulkArg
}

type bulkArg struct {
	scalar []int                        // a field of P, or
	column func(rows reflect.Value) any // an array built from the rows
}

// PrepareBulk returns the query called name bound to P and R. Like Prepare,
// it panics when the query does not exist or a parameter has no field, or a
// tagged field of P or R is not a parameter, or a column's type is not one
// pgx sends as an array.
func PrepareBulk[P, R any](name string) Bulk[P, R] {
	q := Lookup(name)
	markPrepared(name)
	pt, rt := reflect.TypeFor[P](), reflect.TypeFor[R]()
	scalars, cols := taggedFields(pt), taggedFields(rt)
	b := Bulk[P, R]{q: q, sql: lockstep(q.SQL)}
	for _, p := range q.Params {
		if f, ok := scalars[p]; ok {
			if _, dup := cols[p]; dup {
				panic(fmt.Sprintf("db: query %s: @%s is tagged in both %v and %v", name, p, pt, rt))
			}
			b.args = append(b.args, bulkArg{scalar: f.Index})
			delete(scalars, p)
			continue
		}
		f, ok := cols[p]
		if !ok {
			panic(fmt.Sprintf("db: query %s: parameter @%s has no field tagged db:%q in %v or %v", name, p, p, pt, rt))
		}
		b.args = append(b.args, bulkArg{column: columnOf(rt, f, q.padded(p, cols))})
		delete(cols, p)
	}
	if len(scalars)+len(cols) > 0 {
		panic(fmt.Sprintf("db: query %s does not use the fields %s of %v and %s of %v", name, fieldNames(scalars), pt, fieldNames(cols), rt))
	}
	return b
}

// padded reports whether the array of column param may be sent as NULL
// when every row's value is NULL: param is a pointer field of cols, used
// once in q, as an argument of a unnest(...) in FROM that also unnests a
// column that is not a pointer. PostgreSQL pads the shorter arrays of a
// multi-argument unnest with NULLs, so the rows are the same; the server
// then neither parses nor materializes an array of NULLs (a list's entry
// rows leave most of an entity's columns NULL: a quarter of a followers
// page's write, BenchmarkWriteFollowersPage).
func (q *Query) padded(param string, cols map[string]reflect.StructField) bool {
	if f, ok := cols[param]; !ok || f.Type.Kind() != reflect.Pointer {
		return false
	}
	i := slices.Index(q.Params, param)
	uses := placeholderAt(q.SQL, i+1)
	if len(uses) != 1 {
		return false
	}
	for _, span := range unnestSpans(q.SQL) {
		if uses[0] < span[0] || uses[0] >= span[1] {
			continue
		}
		for j, p := range q.Params {
			f, ok := cols[p]
			if !ok || f.Type.Kind() == reflect.Pointer {
				continue
			}
			for _, at := range placeholderAt(q.SQL, j+1) {
				if at >= span[0] && at < span[1] {
					return true
				}
			}
		}
	}
	return false
}

// placeholderAt returns the offsets of $n in sql ($n, not a prefix of $n0).
func placeholderAt(sql string, n int) []int {
	ph := "$" + strconv.Itoa(n)
	var at []int
	for i := 0; ; {
		k := strings.Index(sql[i:], ph)
		if k < 0 {
			return at
		}
		i += k + len(ph)
		if i < len(sql) && sql[i] >= '0' && sql[i] <= '9' {
			continue
		}
		at = append(at, i-len(ph))
	}
}

// pastClosingParen returns the offset just past the ')' that closes the
// parenthesis opened just before start (len(sql) when none does).
func pastClosingParen(sql string, start int) int {
	depth, end := 1, start
	for ; end < len(sql) && depth > 0; end++ {
		switch sql[end] {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return end
}

// unnestSpans returns the argument lists of the unnest calls of sql, as
// [start, end) offsets.
func unnestSpans(sql string) [][2]int {
	var spans [][2]int
	lower := strings.ToLower(sql)
	for i := 0; ; {
		k := strings.Index(lower[i:], "unnest(")
		if k < 0 {
			return spans
		}
		start := i + k + len("unnest(")
		end := pastClosingParen(sql, start)
		spans = append(spans, [2]int{start, end})
		i = start
	}
}

// SQL is the text to send.
func (b Bulk[P, R]) SQL() string { return b.sql }

// lockstep rewrites each FROM unnest(a, b) AS r(x, y) of sql as
// FROM (SELECT unnest(a) AS x, unnest(b) AS y) AS r. The rows are the
// same: PostgreSQL (10 and later) runs the set-returning functions of a
// select list in lockstep, the shorter arrays padded with NULLs, as a
// multi-argument unnest in FROM (ROWS FROM) does. But ROWS FROM first
// copies each array into a tuplestore of its own and then zips them,
// while the select list reads the arrays in place: about 3% of the
// server's CPU for a followers group (perf, workload 4 of tools/bench). A
// unnest elsewhere (JOIN, USING) or with an alias list that does not name
// one column per array is left as written.
func lockstep(sql string) string {
	var out strings.Builder
	for {
		loc := fromUnnestRe.FindStringIndex(sql)
		if loc == nil {
			return out.String() + sql
		}
		start := loc[1] // just after "unnest("
		end := pastClosingParen(sql, start)
		m := unnestAliasRe.FindStringSubmatchIndex(sql[end:])
		args := splitTopLevel(sql[start : end-1])
		var cols []string
		if m != nil {
			cols = strings.Split(sql[end+m[4]:end+m[5]], ",")
		}
		if m == nil || len(args) != len(cols) {
			out.WriteString(sql[:end])
			sql = sql[end:]
			continue
		}
		out.WriteString(sql[:loc[0]])
		out.WriteString("FROM (SELECT ")
		for i, a := range args {
			if i > 0 {
				out.WriteString(", ")
			}
			fmt.Fprintf(&out, "unnest(%s) AS %s", strings.TrimSpace(a), strings.TrimSpace(cols[i]))
		}
		fmt.Fprintf(&out, ") AS %s", sql[end+m[2]:end+m[3]])
		sql = sql[end+m[1]:]
	}
}

var (
	fromUnnestRe  = regexp.MustCompile(`(?i)\bFROM\s+unnest\(`)
	unnestAliasRe = regexp.MustCompile(`(?i)^\s+AS\s+(\w+)\s*\(([^()]*)\)`)
)

// splitTopLevel splits s at the commas outside parentheses and brackets.
func splitTopLevel(s string) []string {
	var parts []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[from:i])
				from = i + 1
			}
		}
	}
	return append(parts, s[from:])
}

// Args are the positional arguments of the query for p and rows.
func (b Bulk[P, R]) Args(p P, rows []R) []any {
	pv, rv := reflect.ValueOf(&p).Elem(), reflect.ValueOf(rows)
	args := make([]any, len(b.args))
	for i, a := range b.args {
		if a.column != nil {
			args[i] = a.column(rv)
		} else {
			args[i] = pv.FieldByIndex(a.scalar).Interface()
		}
	}
	return args
}

// columnOf returns the function building field f's array from a slice of
// rows of type rt. The field's type is checked here, once; the returned
// function reads each row's field through reflection without boxing it
// (String, Bool, Int, or a pointer), a few tens of nanoseconds a cell: a
// 50-row page of a dozen columns costs microseconds against the
// milliseconds of its round trip (BenchmarkBulkArgs). A []byte field is
// sent as text, its bytes not copied: a page's `raw` column, waiting for the
// committer, would otherwise be a second copy of the page's body for each
// table it is written to (docs/how-a-run-works.md#memory).
//
// With pad (Query.padded), a pointer column whose every row is nil is sent
// as NULL.
func columnOf(rt reflect.Type, f reflect.StructField, pad bool) func(rows reflect.Value) any {
	for t, i := rt, 0; i < len(f.Index)-1; i++ {
		if t = t.Field(f.Index[i]).Type; t.Kind() != reflect.Struct {
			panic(fmt.Sprintf("db: column %s of %v is promoted through a pointer", f.Name, rt))
		}
	}
	idx := f.Index
	switch f.Type {
	case reflect.TypeFor[[]byte]():
		return column(idx, bytesOf)
	case reflect.TypeFor[string]():
		return column(idx, reflect.Value.String)
	case reflect.TypeFor[bool]():
		return column(idx, reflect.Value.Bool)
	case reflect.TypeFor[int]():
		return column(idx, func(v reflect.Value) int { return int(v.Int()) })
	case reflect.TypeFor[int32]():
		return column(idx, func(v reflect.Value) int32 { return int32(v.Int()) })
	case reflect.TypeFor[int64]():
		return column(idx, reflect.Value.Int)
	case reflect.TypeFor[float64]():
		return column(idx, reflect.Value.Float)
	case reflect.TypeFor[*string]():
		return pointerColumn[string](idx, pad)
	case reflect.TypeFor[*bool]():
		return pointerColumn[bool](idx, pad)
	case reflect.TypeFor[*int32]():
		return pointerColumn[int32](idx, pad)
	case reflect.TypeFor[*int64]():
		return pointerColumn[int64](idx, pad)
	case reflect.TypeFor[*float64]():
		return pointerColumn[float64](idx, pad)
	}
	panic(fmt.Sprintf("db: column %s: type %v cannot be sent as an array", f.Name, f.Type))
}

// column reads the field at idx of each row with get; columnOf has checked
// that the field's type is the one get reads.
func column[T any](idx []int, get func(reflect.Value) T) func(rows reflect.Value) any {
	return func(rows reflect.Value) any {
		col := make([]T, rows.Len())
		for i := range col {
			col[i] = get(rows.Index(i).FieldByIndex(idx))
		}
		return col
	}
}

// pointerColumn reads the pointer field at idx of each row; with pad, a
// column of nil pointers only is nil (NULL).
func pointerColumn[T any](idx []int, pad bool) func(rows reflect.Value) any {
	return func(rows reflect.Value) any {
		col := make([]*T, rows.Len())
		null := true
		for i := range col {
			col[i] = pointer[T](rows.Index(i).FieldByIndex(idx))
			null = null && col[i] == nil
		}
		if pad && null {
			return nil
		}
		return col
	}
}

// bytesOf reads a []byte field as is, nil as empty (text ”, as a
// string column sends it, not NULL).
func bytesOf(v reflect.Value) []byte {
	if b := v.Bytes(); b != nil {
		return b
	}
	return []byte{}
}

// pointer reads a pointer field without boxing it.
func pointer[T any](v reflect.Value) *T {
	p, _ := v.Interface().(*T) // a pointer in an interface is not copied
	return p
}

// taggedFields maps each db tag of t's fields (promoted fields of embedded
// structs included) to its field.
func taggedFields(t reflect.Type) map[string]reflect.StructField {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("db: %v is not a struct", t))
	}
	fields := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("db"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		if _, dup := fields[name]; dup {
			panic(fmt.Sprintf("db: %v has two fields tagged db:%q", t, name))
		}
		fields[name] = f
	}
	return fields
}

func fieldNames(fields map[string]reflect.StructField) string {
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	return "[" + strings.Join(names, " ") + "]"
}

// Querier is what runs a statement: a *pgxpool.Pool, a *pgx.Conn or a
// pgx.Tx.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Exec runs the statement for p.
func (s Stmt[P]) Exec(ctx context.Context, q Querier, p P) (pgconn.CommandTag, error) {
	return q.Exec(ctx, s.q.SQL, s.Args(p)...)
}

// Query runs the statement for p and returns its rows.
func (s Stmt[P]) Query(ctx context.Context, q Querier, p P) (pgx.Rows, error) {
	return q.Query(ctx, s.q.SQL, s.Args(p)...)
}

// QueryRow runs the statement for p and returns its one row.
func (s Stmt[P]) QueryRow(ctx context.Context, q Querier, p P) pgx.Row {
	return q.QueryRow(ctx, s.q.SQL, s.Args(p)...)
}

// Queue appends the statement for p to batch.
func (s Stmt[P]) Queue(batch *pgx.Batch, p P) {
	batch.Queue(s.q.SQL, s.Args(p)...)
}

// Queue appends the statement for p and rows to batch.
func (b Bulk[P, R]) Queue(batch *pgx.Batch, p P, rows []R) {
	batch.Queue(b.sql, b.Args(p, rows)...)
}

// Exec runs the statement for p and rows.
func (b Bulk[P, R]) Exec(ctx context.Context, q Querier, p P, rows []R) (pgconn.CommandTag, error) {
	return q.Exec(ctx, b.sql, b.Args(p, rows)...)
}
