package export

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options are what `crawler export` was asked for.
type Options struct {
	// Dir is the export's directory: it must not exist, or be empty.
	Dir string
	// Objects are the tables and views to export ("schema.name"); none:
	// the analysts' views.
	Objects []string
	// AsOf is the run whose state to export; 0: the latest.
	AsOf   int64
	Format Format
	// RowsPerFile starts a new part file of an object past this many
	// rows; 0: DefaultRowsPerFile.
	RowsPerFile int64
	// Version is the crawler's version, for the manifest.
	Version string
}

// DefaultRowsPerFile is the rows of a part file before the next starts.
const DefaultRowsPerFile = 5_000_000

// fetchRows is how many rows each FETCH from the cursor brings.
const fetchRows = 1000

// Errors a caller tells the user about as bad input.
var (
	ErrNoSuchObject = errors.New("no such table or view")
	ErrNoSuchRun    = errors.New("no such run")
	ErrDirNotEmpty  = errors.New("the export directory exists and is not empty")
)

// cursorSeq numbers the export's cursors.
var cursorSeq atomic.Int64

// testHookBatch, when set, is called after each batch of rows written
// (tests cancel an export there).
var testHookBatch func(rows int64)

// Export writes the objects to opts.Dir and returns the manifest written
// beside them. On an error (a cancelled ctx included) nothing is left under
// opts.Dir's name.
func Export(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Manifest, error) {
	if opts.Format != Parquet && opts.Format != CSV {
		return nil, fmt.Errorf("format %q: want parquet or csv", opts.Format)
	}
	if opts.RowsPerFile <= 0 {
		opts.RowsPerFile = DefaultRowsPerFile
	}
	target, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if ents, err := os.ReadDir(target); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrDirNotEmpty, opts.Dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	parent, base := filepath.Split(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	removeStale(parent, base)
	staging, err := os.MkdirTemp(parent, stagingPrefix(base)+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(staging)
		}
	}()
	m, err := export(ctx, pool, opts, staging)
	if err != nil {
		return nil, err
	}
	if err := syncDir(staging); err != nil {
		return nil, err
	}
	// rename(2) replaces an empty directory: the export appears whole
	// under its name, or not at all.
	if err := os.Rename(staging, target); err != nil {
		return nil, fmt.Errorf("move the export into place: %w", err)
	}
	ok = true
	return m, syncDir(parent)
}

// stagingPrefix names the directories an export of base is written in
// before it is renamed: hidden, beside it, with the writing process's id.
func stagingPrefix(base string) string { return "." + base + ".export-" }

// removeStale removes staging directories of base left by exports whose
// process is gone (killed mid-way).
func removeStale(parent, base string) {
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), stagingPrefix(base))
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

func export(ctx context.Context, pool *pgxpool.Pool, opts Options, dir string) (*Manifest, error) {
	// Read-write only to create the temporary copy of the runs an export
	// as of a run reads (asOf.prepare), read-only from then on; rolled
	// back at the end.
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Every relation schema-qualified in view definitions; text output the
	// same whatever the server's settings.
	if _, err := tx.Exec(ctx, `SET LOCAL search_path = ''; SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD';
		SET LOCAL IntervalStyle = 'iso_8601'; SET LOCAL extra_float_digits = 1; SET LOCAL bytea_output = 'hex'`); err != nil {
		return nil, err
	}
	m := &Manifest{Version: 1, Crawler: opts.Version, Format: opts.Format, NotReconstructed: []string{}}
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM crawl.runs`).Scan(&m.LastRun); err != nil {
		return nil, err
	}
	if opts.AsOf != 0 {
		if opts.AsOf < 0 || opts.AsOf > m.LastRun {
			return nil, fmt.Errorf("%w %d (the latest is %d)", ErrNoSuchRun, opts.AsOf, m.LastRun)
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM crawl.runs WHERE id = $1)`, opts.AsOf).Scan(&exists); err != nil {
			return nil, err
		}
		if !exists {
			return nil, fmt.Errorf("%w %d", ErrNoSuchRun, opts.AsOf)
		}
		asOf := opts.AsOf
		m.AsOf, m.LastRun = &asOf, asOf
	}
	names := opts.Objects
	if len(names) == 0 {
		rows, err := exportDefaults.Query(ctx, tx, struct{}{})
		if err != nil {
			return nil, err
		}
		if names, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return nil, err
		}
	}
	var rels []relation
	for _, n := range names {
		r, ok, err := loadRelation(ctx, tx, n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %q (give schema.name, e.g. shortvideo.users_latest)", ErrNoSuchObject, n)
		}
		if slices.ContainsFunc(rels, func(x relation) bool { return x.qualified() == r.qualified() }) {
			continue
		}
		rels = append(rels, r)
	}
	var cut *asOf
	if m.AsOf != nil {
		cut = &asOf{run: *m.AsOf, q: tx, rels: map[string]*relation{}, notes: map[string]string{}, exact: map[string]bool{}}
		if err := cut.prepare(ctx, tx); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(ctx, "SET TRANSACTION READ ONLY"); err != nil {
		return nil, err
	}
	notes := map[string]bool{}
	for _, r := range rels {
		o, err := exportObject(ctx, tx, r, cut, opts, dir)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", r.qualified(), err)
		}
		for _, n := range o.AsOf {
			if !strings.HasSuffix(n, "exact") && !notes[n] {
				notes[n] = true
				m.NotReconstructed = append(m.NotReconstructed, n)
			}
		}
		m.Objects = append(m.Objects, o)
	}
	if err := provenance(ctx, tx, m); err != nil {
		return nil, fmt.Errorf("read the runs: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeSynced(filepath.Join(dir, ManifestName), append(b, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

// exportObject streams one object's rows, ordered by its key (a table's
// primary key, else every column), into its part files.
func exportObject(ctx context.Context, tx pgx.Tx, r relation, cut *asOf, opts Options, dir string) (Object, error) {
	o := Object{Name: r.qualified(), Kind: "table", Columns: r.Columns, OrderBy: r.Key}
	if r.isView() {
		o.Kind = "view"
	}
	if len(o.OrderBy) == 0 {
		for _, c := range r.Columns {
			o.OrderBy = append(o.OrderBy, c.Name)
		}
	}
	source := r.sanitized()
	if cut != nil {
		clear(cut.notes)
		clear(cut.exact)
		src, err := cut.source(ctx, &r, 0)
		if err != nil {
			return o, err
		}
		source = src
		for _, t := range sortedKeys(cut.exact) {
			o.AsOf = append(o.AsOf, t+": the rows of runs up to "+strconv.FormatInt(cut.run, 10)+", exact")
		}
		for _, t := range sortedKeys(cut.notes) {
			o.AsOf = append(o.AsOf, cut.notes[t])
		}
	}
	sel := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		sel[i] = c.selectExpr()
	}
	order := make([]string, len(o.OrderBy))
	for i, name := range o.OrderBy {
		c := r.Columns[slices.IndexFunc(r.Columns, func(c Column) bool { return c.Name == name })]
		order[i] = c.orderExpr()
	}
	query := "SELECT " + strings.Join(sel, ", ") + " FROM " + source + " AS src ORDER BY " + strings.Join(order, ", ")
	// A cursor of its own per object: pgx caches a statement's result
	// columns by its text, so two objects' FETCH must differ.
	cursor := fmt.Sprintf("export_%d", cursorSeq.Add(1))
	if _, err := tx.Exec(ctx, "DECLARE "+cursor+" NO SCROLL CURSOR FOR "+query); err != nil {
		return o, err
	}
	objDir := filepath.Join(dir, o.Name)
	if err := os.Mkdir(objDir, 0o755); err != nil {
		return o, err
	}
	var part *partFile
	defer func() {
		if part != nil {
			part.abort()
		}
	}()
	for {
		rows, err := tx.Query(ctx, fmt.Sprintf("FETCH FORWARD %d FROM %s", fetchRows, cursor))
		if err != nil {
			return o, err
		}
		n := 0
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				rows.Close()
				return o, err
			}
			if part == nil {
				if part, err = newPart(objDir, len(o.Files), opts.Format, r.Columns); err != nil {
					rows.Close()
					return o, err
				}
			}
			if err := part.w.write(vals); err != nil {
				rows.Close()
				return o, err
			}
			part.rows++
			o.Rows++
			n++
			if part.rows >= opts.RowsPerFile {
				f, err := part.finish(o.Name)
				part = nil
				if err != nil {
					rows.Close()
					return o, err
				}
				o.Files = append(o.Files, f)
			}
		}
		if err := rows.Err(); err != nil {
			return o, err
		}
		if testHookBatch != nil {
			testHookBatch(o.Rows)
		}
		if err := ctx.Err(); err != nil {
			return o, err
		}
		if n < fetchRows {
			break
		}
	}
	if _, err := tx.Exec(ctx, "CLOSE "+cursor); err != nil {
		return o, err
	}
	if part == nil && len(o.Files) == 0 {
		// An empty object still gets a file: its columns and types.
		var err error
		if part, err = newPart(objDir, 0, opts.Format, r.Columns); err != nil {
			return o, err
		}
	}
	if part != nil {
		f, err := part.finish(o.Name)
		part = nil
		if err != nil {
			return o, err
		}
		o.Files = append(o.Files, f)
	}
	return o, syncDir(objDir)
}

// partFile is a file of an object being written, hashed as it goes.
type partFile struct {
	path  string
	f     *os.File
	buf   *bufio.Writer
	h     hash.Hash
	count *countWriter
	w     rowWriter
	rows  int64
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newPart(dir string, n int, format Format, cols []Column) (*partFile, error) {
	path := filepath.Join(dir, fmt.Sprintf("part-%05d.%s", n, format))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	p := &partFile{path: path, f: f, h: sha256.New()}
	p.buf = bufio.NewWriterSize(f, 256<<10)
	p.count = &countWriter{w: io.MultiWriter(p.buf, p.h)}
	p.w = newRowWriter(format, p.count, cols)
	return p, nil
}

// finish writes the file's end, syncs it to disk and describes it.
func (p *partFile) finish(object string) (File, error) {
	if err := p.w.close(); err != nil {
		p.abort()
		return File{}, err
	}
	if err := p.buf.Flush(); err != nil {
		p.abort()
		return File{}, err
	}
	if err := p.f.Sync(); err != nil {
		p.abort()
		return File{}, err
	}
	if err := p.f.Close(); err != nil {
		return File{}, err
	}
	return File{Path: object + "/" + filepath.Base(p.path), Rows: p.rows, Bytes: p.count.n, SHA256: hex.EncodeToString(p.h.Sum(nil))}, nil
}

func (p *partFile) abort() {
	p.f.Close()
	os.Remove(p.path)
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
