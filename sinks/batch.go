package sinks

import (
	"cmp"
	"embed"
	"fmt"
	"reflect"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/socialcrawl/crawler/internal/db"
)

// Batch is the set of rows one page produced, any number of rows of any
// registered row type (Add). Rows that reference another row by foreign key
// (snapshots, search results, feed entries, links) need that row in the same
// batch or already stored; see the migrations for which references have one.
//
// The zero Batch is empty and ready to use. A Batch holds its rows by
// reference: a copy shares them with the original.
type Batch struct {
	sets []rowSet // sets[t.id] holds the rows of table t; nil: none yet
}

// rowSet is the rows of one table in a batch.
type rowSet interface {
	len() int
	write(batch *pgx.Batch, runID int64) int // the statements queued
	boxed() []any
	appendTo(dst rowSet) // dst is a set of the same table
	grow(n int)          // room for n more rows
}

type rowsOf[R any] struct {
	t    *tableOf[R]
	rows []R
}

func (s *rowsOf[R]) len() int { return len(s.rows) }

func (s *rowsOf[R]) write(batch *pgx.Batch, runID int64) int {
	return s.t.write(batch, runID, s.rows)
}

func (s *rowsOf[R]) appendTo(dst rowSet) {
	d := dst.(*rowsOf[R])
	d.rows = append(d.rows, s.rows...)
}

func (s *rowsOf[R]) grow(n int) { s.rows = slices.Grow(s.rows, n) }

func (s *rowsOf[R]) boxed() []any {
	out := make([]any, len(s.rows))
	for i, r := range s.rows {
		out[i] = r
	}
	return out
}

// table is a registered table: its name, its place in the write order and
// how to hold its rows.
type table struct {
	name  string
	order int
	id    int // index in Batch.sets
	row   reflect.Type
	set   func() rowSet // a new, empty set
	add   func(s rowSet, row any)
}

type tableOf[R any] struct {
	table
	write func(*pgx.Batch, int64, []R) int
}

var (
	byRow   = map[reflect.Type]*table{}
	byName  = map[string]*table{}
	byOrder = map[int]*table{}
	order   []*table // the write order, sorted at init
)

// register declares a table of the batch, in the sink's own file: its name
// (as the write's label), its place in the write order, and write, which
// dedupes a batch's rows of type R, queues their upsert (the rows' type
// is the key Add files them under) and returns how many statements it
// queued. A table's order must be above the
// orders of the tables its foreign keys point at: the order is the same for
// every worker, and rows are sorted by key within a table, so concurrent
// writers lock rows in one global order. register panics on a row type,
// name or order registered twice.
func register[R any](name string, place int, write func(*pgx.Batch, int64, []R) int) struct{} {
	rt := reflect.TypeFor[R]()
	t := &tableOf[R]{write: write}
	t.table = table{name: name, order: place, id: len(byRow), row: rt,
		set: func() rowSet { return &rowsOf[R]{t: t} },
		add: func(s rowSet, row any) { r := s.(*rowsOf[R]); r.rows = append(r.rows, row.(R)) },
	}
	switch {
	case byRow[rt] != nil:
		panic(fmt.Sprintf("sinks: row type %v registered for both %s and %s", rt, byRow[rt].name, name))
	case byName[name] != nil:
		panic(fmt.Sprintf("sinks: table %s registered twice", name))
	case byOrder[place] != nil:
		panic(fmt.Sprintf("sinks: tables %s and %s both have order %d", byOrder[place].name, name, place))
	}
	byRow[rt], byName[name], byOrder[place] = &t.table, &t.table, &t.table
	order = append(order, &t.table)
	slices.SortFunc(order, func(a, b *table) int { return cmp.Compare(a.order, b.order) })
	return struct{}{}
}

// tableFor returns the table of rows of type rt; it panics for a type no
// sink registered.
func tableFor(rt reflect.Type) *table {
	t := byRow[rt]
	if t == nil {
		panic(fmt.Sprintf("sinks: no table registered for row type %v", rt))
	}
	return t
}

// set returns b's set of t's rows, made if b has none.
func (b *Batch) set(t *table) rowSet {
	if len(b.sets) <= t.id {
		b.sets = append(b.sets, make([]rowSet, len(byRow)-len(b.sets))...)
	}
	if b.sets[t.id] == nil {
		b.sets[t.id] = t.set()
	}
	return b.sets[t.id]
}

// Add appends rows to b, filed under their type's table. It panics when no
// sink registered the type R.
func Add[R any](b *Batch, rows ...R) {
	s := b.set(tableFor(reflect.TypeFor[R]())).(*rowsOf[R])
	s.rows = append(s.rows, rows...)
}

// AddRow appends one row of a registered type given as an interface value
// (tools that handle rows of every table alike). It panics on an
// unregistered type.
func (b *Batch) AddRow(row any) {
	t := tableFor(reflect.TypeOf(row))
	t.add(b.set(t), row)
}

// Rows returns b's rows of type R, in the order added (not a copy).
func Rows[R any](b *Batch) []R {
	t := tableFor(reflect.TypeFor[R]())
	if t.id >= len(b.sets) || b.sets[t.id] == nil {
		return nil
	}
	return b.sets[t.id].(*rowsOf[R]).rows
}

// Tables lists the registered tables in write order.
func Tables() []string {
	names := make([]string, len(order))
	for i, t := range order {
		names[i] = t.name
	}
	return names
}

// Each calls f with each table of b that has rows, in write order, and its
// rows as interface values (copies).
func (b *Batch) Each(f func(table string, rows []any)) {
	for _, t := range order {
		if s := b.get(t); s != nil {
			f(t.name, s.boxed())
		}
	}
}

// get returns b's non-empty set of t's rows, or nil.
func (b *Batch) get(t *table) rowSet {
	if t.id >= len(b.sets) || b.sets[t.id] == nil || b.sets[t.id].len() == 0 {
		return nil
	}
	return b.sets[t.id]
}

// sqlFiles are the sinks' upserts, one .sql file beside each sink's .go
// file; prepare depends on them, so they are registered with package db
// before any upsert is prepared.
//
//go:embed *.sql
var sqlFiles embed.FS

var sqlRegistered = db.Register(sqlFiles, "*.sql")

// prepare binds the upsert called name (in this package's .sql files) to
// rows of type R.
func prepare[R any](name string) db.Bulk[db.RunArg, R] {
	_ = sqlRegistered
	return db.PrepareBulk[db.RunArg, R](name)
}

// upsert registers the common table: its rows, deduplicated by key (keep
// merges two rows of one key; nil keeps the later), are written by the
// statement named stmt.
func upsert[R any](name string, place int, stmt string, key func(R) string, keep func(prev, next R) R) struct{} {
	return upsertRows(name, place, stmt, func(rows []R) []R { return dedupe(rows, key, keep) })
}

// upsertRows registers a table whose rows, made ready by prep (which must
// dedupe them), are written by the statement named stmt. Tables whose rows
// become another type before writing register their own (register).
func upsertRows[R any](name string, place int, stmt string, prep func([]R) []R) struct{} {
	q := prepare[R](stmt)
	return register(name, place, func(batch *pgx.Batch, runID int64, rows []R) int {
		return queue(batch, q, runID, prep(rows))
	})
}

// MaxStatementRows is the most rows one statement writes. A group of pages merged
// (Merge) writes its rows of a table in as many statements, in key order:
// few enough per statement that a connection's encoder, which keeps the
// last statement's parameters until its next one (pgx), holds about a
// page of a long list, not a group's worth.
const MaxStatementRows = 1000

// db.RunArg are the scalar parameters of every upsert: the run writing.
// queue appends the upsert of rows by run runID to batch, in statements of
// up to MaxStatementRows rows, and returns how many; the statements' arrays are
// built from the rows' db-tagged fields.
func queue[R any](batch *pgx.Batch, stmt db.Bulk[db.RunArg, R], runID int64, rows []R) int {
	n := 0
	for ; len(rows) > 0; n++ {
		k := min(len(rows), MaxStatementRows)
		stmt.Queue(batch, db.RunArg{RunID: runID}, rows[:k])
		rows = rows[k:]
	}
	return n
}

// Merge returns one batch holding the rows of bs, each table's rows in
// the order of bs: a group of pages that commit in one transaction
// written by one statement per table (Queue) rather than one per table
// and page. A key on several of the pages is written once, the row
// kept as within one page (the table's keep: the later, a full row over
// a partial one, a snapshot's counters filled from the earlier), so the
// statement never touches a row twice. The rows are shared, not copied.
func Merge(bs ...*Batch) *Batch {
	var m Batch
	for _, t := range order {
		n := 0
		for _, b := range bs {
			if s := b.get(t); s != nil {
				n += s.len()
			}
		}
		if n == 0 {
			continue
		}
		// One allocation a table, not one a doubling: with thousands of
		// requests in flight the heap sits above its soft limit and the
		// collector's work follows what is allocated.
		dst := m.set(t)
		dst.grow(n)
		for _, b := range bs {
			if s := b.get(t); s != nil {
				s.appendTo(dst)
			}
		}
	}
	return &m
}

// Len is the number of rows in the batch.
func (b *Batch) Len() int {
	n := 0
	for _, s := range b.sets {
		if s != nil {
			n += s.len()
		}
	}
	return n
}

// Queue appends the statements that apply b for run runID to batch, parents
// before children (the registered order), and returns what each statement
// writes ("write shortvideo.users"), in order, for Results. A page costs one
// round trip however many tables it touches.
func Queue(batch *pgx.Batch, runID int64, b *Batch) []string {
	var labels []string
	for _, t := range order {
		s := b.get(t)
		if s == nil {
			continue
		}
		for range s.write(batch, runID) {
			labels = append(labels, "write "+t.name)
		}
	}
	return labels
}

// Results reads the results of the statements labels names from br (a
// pgx.BatchResults, or the like), in order, and returns the first error
// with its label.
func Results(br interface {
	Exec() (pgconn.CommandTag, error)
}, labels []string) error {
	for _, l := range labels {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("%s: %w", l, err)
		}
	}
	return nil
}
