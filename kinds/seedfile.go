package kinds

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
)

// Seed lists from files (docs/seed-files.md). Every seed list X of values
// (not a flag) has a sibling key X_file naming a file beside the job file:
// one value per line, or one column of a CSV file. The job file stays
// small (1 MiB) while a backfill starts from millions of handles; the
// file is streamed twice, never held: once when the job is loaded (every
// value validated, the content hashed for the fingerprint), once when the
// run is seeded (pipeline/seedfiles.go), in batches from a byte offset
// the run records, so a killed seeding resumes where it stopped.

// FileSuffix makes a seed list's key its file's key.
const FileSuffix = "_file"

// Caps of a seed file: its size, and one line (a value is at most
// yamlstrict.MaxStringBytes, like any string of a job file).
const (
	MaxSeedFileBytes = 1 << 30
	maxSeedLineBytes = 64 << 10
	// A CSV record may span lines (quoted newlines): it is capped as a
	// whole, so an unclosed quote cannot pull the file into memory.
	maxCSVRecordBytes = 1 << 20
)

// SeedFile is a seed list read from a file: `profiles_file: handles.txt`
// (one value per line, blank lines and # comments skipped) or
// `profiles_file: {path: accounts.csv, column: handle}` (the column the
// CSV header names). Path is relative to the job file's directory and may
// not leave it.
type SeedFile struct {
	Path   string `yaml:"path" json:"path"`
	Column string `yaml:"column" json:"column,omitempty"`
	// What the validating pass found (Check): the content's SHA-256, which
	// the job's fingerprint includes, its size, and how many values it
	// holds (duplicates counted).
	SHA256 string `yaml:"-" json:"sha256,omitempty"`
	Size   int64  `yaml:"-" json:"size,omitempty"`
	Values int64  `yaml:"-" json:"values,omitempty"`

	list *SeedList
	dir  string // the job file's directory, set by Check
}

// DecodeYAML reads either form (yamlstrict.Unmarshaler).
func (f *SeedFile) DecodeYAML(d *yamlstrict.Decoder, n *yaml.Node, path string, depth int) {
	switch {
	case n.Kind == yaml.ScalarNode && !yamlstrict.IsNull(n):
		d.DecodeValue(n, reflect.ValueOf(&f.Path).Elem(), path, depth)
	case n.Kind == yaml.MappingNode:
		d.DecodeStruct(n, reflect.ValueOf(f).Elem(), path, depth)
	default:
		d.WrongType(n, path, "a file name, or a mapping with path and column")
	}
}

// Key is the file's job-file key, e.g. "seeds.shortvideo.profiles_file".
func (f *SeedFile) Key() string { return f.list.Key + FileSuffix }

// List is the seed list the file adds to.
func (f *SeedFile) List() *SeedList { return f.list }

// Name is the file as errors show it: its path joined to the job file's
// directory, as the operator would type it.
func (f *SeedFile) Name() string { return filepath.Join(f.dir, f.Path) }

// fileLists maps each X_file key to its list X: the lists whose values
// can be written as text.
var fileLists = map[string]*SeedList{}

// FileList is the seed files of s, in the order of the fields of Seeds (the
// order they are seeded in).
func (s *Seeds) FileList() []*SeedFile {
	var out []*SeedFile
	for _, l := range seedLists {
		if f := s.Files[l.Key]; f != nil {
			out = append(out, f)
		}
	}
	return out
}

// DecodeYAML decodes the seeds section (yamlstrict.Unmarshaler): every
// X_file key of a platform is set aside into Files, the rest decodes into
// the platform's struct as usual. Declared here once for every seed list.
func (s *Seeds) DecodeYAML(d *yamlstrict.Decoder, n *yaml.Node, path string, depth int) {
	v := reflect.ValueOf(s).Elem()
	if n.Kind != yaml.MappingNode {
		d.DecodeStruct(n, v, path, depth)
		return
	}
	top := *n
	top.Content = slices.Clone(n.Content)
	for i := 1; i < len(top.Content); i += 2 {
		platform := yamlstrict.JoinKey(path, top.Content[i-1].Value)
		m := top.Content[i]
		if m.Kind == yaml.AliasNode && m.Alias != nil {
			m = m.Alias
		}
		if m.Kind != yaml.MappingNode {
			continue
		}
		lists := *m
		lists.Content = nil
		files := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: m.Line, Column: m.Column}
		for j := 0; j+1 < len(m.Content); j += 2 {
			if fileLists[platform+"."+m.Content[j].Value] != nil {
				files.Content = append(files.Content, m.Content[j], m.Content[j+1])
			} else {
				lists.Content = append(lists.Content, m.Content[j], m.Content[j+1])
			}
		}
		top.Content[i] = &lists
		if len(files.Content) == 0 {
			continue
		}
		var got map[string]*SeedFile
		d.DecodeValue(files, reflect.ValueOf(&got).Elem(), platform, depth+1)
		for name, f := range got {
			f.list = fileLists[platform+"."+name]
			if s.Files == nil {
				s.Files = map[string]*SeedFile{}
			}
			s.Files[f.list.Key] = f
		}
	}
	d.DecodeStruct(&top, v, path, depth)
}

// textOf is how a line of a seed file becomes a value of a list of T, nil
// when no line can (the list has no file key).
func textOf[T any]() func(string) any {
	var zero T
	switch any(&zero).(type) {
	case *string:
		return func(s string) any { return s }
	case textSeed:
		return func(s string) any {
			var v T
			any(&v).(textSeed).setText(s)
			return v
		}
	}
	return nil
}

// textSeed is a seed value that a plain string can write (a keyword
// search's form A).
type textSeed interface{ setText(string) }

// validate checks what the job file itself says of f: a path that stays
// beside the job, and a column for a CSV file.
func (f *SeedFile) validate() yamlstrict.Errors {
	var errs yamlstrict.Errors
	add := func(key, msg string) { errs = append(errs, &yamlstrict.Error{Key: key, Msg: msg}) }
	switch {
	case strings.TrimSpace(f.Path) == "":
		add(f.Key(), "names no file: a path relative to the job file's directory")
	case !filepath.IsLocal(f.Path):
		add(f.Key(), yamlstrict.QuoteShort(f.Path)+" is outside the job file's directory: a seed file must be in it or below it (relative, no ..)")
	case f.Column == "" && strings.EqualFold(filepath.Ext(f.Path), ".csv"):
		add(f.Key(), fmt.Sprintf("%s is a CSV file: name its column, e.g. {path: %s, column: handle}", yamlstrict.QuoteShort(f.Path), f.Path))
	}
	return errs
}

// Check is the validating pass over f, a file in dir (the job file's
// directory): every value gets the checks an inline value gets, the
// content is hashed (SHA256) and its values counted, in memory
// independent of its size. Problems of the file itself (missing,
// unreadable, too large, no such column) are keyed by f's job-file key
// with no file (the job file's line is the caller's); problems of a value
// are located at the seed file's line.
func (f *SeedFile) Check(dir string) yamlstrict.Errors {
	f.dir = dir
	h := sha256.New()
	r, err := f.open(0, h)
	if err != nil {
		return yamlstrict.Errors{{Key: f.Key(), Msg: err.Error()}}
	}
	defer r.Close()
	var errs yamlstrict.Errors
	f.Size, f.Values = r.size, 0
	for {
		v, line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return append(errs, &yamlstrict.Error{File: f.Name(), Line: line, Key: f.Key(), Msg: err.Error()})
		}
		f.Values++
		if msg := f.Invalid(v); msg != "" {
			if len(errs) == yamlstrict.MaxErrors {
				return append(errs, &yamlstrict.Error{File: f.Name(), Key: f.Key(),
					Msg: fmt.Sprintf("more values are wrong; these are the first %d", yamlstrict.MaxErrors)})
			}
			errs = append(errs, &yamlstrict.Error{File: f.Name(), Line: line, Key: f.Key(), Msg: msg})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if f.Values == 0 {
		what := "no value (every line is blank or a # comment)"
		if f.Column != "" {
			what = fmt.Sprintf("no value in column %q", f.Column)
		}
		return yamlstrict.Errors{{Key: f.Key(), Msg: fmt.Sprintf("%s holds %s", f.Name(), what)}}
	}
	f.SHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// Invalid says what is wrong with v, a value of f, or "": what the job
// file's decoder checks of any string, then the list's own check.
func (f *SeedFile) Invalid(v string) string {
	if msg := yamlstrict.CheckText(v); msg != "" {
		if !strings.HasPrefix(msg, `"`) {
			msg = yamlstrict.QuoteShort(v) + " " + msg
		}
		return msg
	}
	return f.list.check(f.list.text(v))
}

// Tasks are the run's first tasks of v, a valid value of f.
func (f *SeedFile) Tasks(j Job, v string) []NewTask {
	ts := f.list.tasks(j, f.list.kind, f.list.text(v))
	for i := range ts {
		ts[i].RefreshAfter = j.Window(f.list.Key)
	}
	return ts
}

// Open reads f's values from offset, a byte offset a SeedReader's Offset
// returned; the file must be the one Check read (the same size).
func (f *SeedFile) Open(offset int64) (*SeedReader, error) {
	r, err := f.open(offset, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", f.Key(), f.Name(), err)
	}
	if r.size != f.Size {
		r.Close()
		return nil, fmt.Errorf("%s: %s changed since the job was loaded (%d bytes, then %d): seed from the file the job was checked with", f.Key(), f.Name(), f.Size, r.size)
	}
	return r, nil
}

// SeedReader reads a seed file's values one at a time.
type SeedReader struct {
	file   *os.File
	size   int64
	text   *bufio.Scanner
	csv    *csv.Reader
	rec    *recordCap // under csv
	col    int
	base   int64 // the offset reading started at
	offset int64 // bytes consumed by the values returned so far
	line   int   // text: lines read (from base)
}

// open opens f in f.dir, refusing what would let a job file read other
// files (a path leaving the directory, also through a symbolic link; a
// device or pipe) or make the run read for hours (a file over the cap),
// and positions it at offset. When sum is set, everything read from the
// start is written to it.
func (f *SeedFile) open(offset int64, sum hash.Hash) (*SeedReader, error) {
	root, err := os.OpenRoot(dirOrDot(f.dir))
	if err != nil {
		return nil, fmt.Errorf("cannot open the job file's directory: %w", err)
	}
	defer root.Close()
	file, err := root.Open(f.Path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if strings.Contains(err.Error(), "escapes") {
			return nil, fmt.Errorf("%s leads outside the job file's directory (a symbolic link?): a seed file must be in it or below it", f.Name())
		}
		return nil, fmt.Errorf("cannot open %s: %v", f.Name(), err)
	}
	r := &SeedReader{file: file}
	fi, err := file.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("cannot read %s: %v", f.Name(), err)
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", f.Name())
	case fi.Size() > MaxSeedFileBytes:
		err = fmt.Errorf("%s is %d bytes; a seed file is at most %d (1 GiB): split it over several jobs", f.Name(), fi.Size(), MaxSeedFileBytes)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	r.size = fi.Size()
	// A file that grows while it is read is read up to the cap.
	var in io.Reader = io.LimitReader(file, MaxSeedFileBytes)
	if sum != nil {
		in = io.TeeReader(in, sum)
	}
	if f.Column != "" {
		err = r.openCSV(f, in, offset)
	} else {
		err = r.openText(in, offset)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	return r, nil
}

// dirOrDot is dir, or "." for the working directory.
func dirOrDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// bom is the byte order mark some tools write at the start of a file.
var bom = []byte("\uFEFF")

func (r *SeedReader) openText(in io.Reader, offset int64) error {
	if offset > 0 {
		if _, err := r.file.Seek(offset, io.SeekStart); err != nil {
			return err
		}
	}
	r.base, r.offset = offset, offset
	r.text = bufio.NewScanner(in)
	r.text.Buffer(make([]byte, 0, 64<<10), maxSeedLineBytes)
	// Lines with their end, so that Offset counts every byte (\r\n too).
	r.text.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i+1], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	return nil
}

// openCSV reads the header (always from the start: it names the column),
// then goes to offset when it is past the header.
func (r *SeedReader) openCSV(f *SeedFile, in io.Reader, offset int64) error {
	r.rec = &recordCap{r: in}
	c := csv.NewReader(r.rec)
	head, err := c.Read()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s is empty: a CSV seed file starts with a header naming its columns", f.Name())
	}
	if err != nil {
		return fmt.Errorf("%s: %v", f.Name(), err)
	}
	r.col = -1
	for i, name := range head {
		if i == 0 {
			name = string(bytes.TrimPrefix([]byte(name), bom))
		}
		if strings.TrimSpace(name) == f.Column {
			r.col = i
			break
		}
	}
	if r.col < 0 {
		return fmt.Errorf("%s has no column %q (its header: %s)", f.Name(), f.Column, yamlstrict.ShortText(strings.Join(head, ", ")))
	}
	r.base = c.InputOffset()
	if offset > r.base {
		if _, err := r.file.Seek(offset, io.SeekStart); err != nil {
			return err
		}
		r.base = offset
		// Only seeding starts past the header, and it hashes nothing.
		r.rec = &recordCap{r: io.LimitReader(r.file, MaxSeedFileBytes-offset)}
		c = csv.NewReader(r.rec)
	}
	c.FieldsPerRecord = len(head)
	c.ReuseRecord = true
	r.csv, r.offset = c, r.base
	return nil
}

// Next returns the next value and its line, io.EOF after the last; any
// other error is located at the line returned (0: unknown).
func (r *SeedReader) Next() (string, int, error) {
	if r.csv != nil {
		return r.nextCSV()
	}
	for r.text.Scan() {
		tok := r.text.Bytes()
		r.offset += int64(len(tok))
		r.line++
		if r.line == 1 && r.base == 0 {
			tok = bytes.TrimPrefix(tok, bom)
		}
		v := strings.TrimSpace(string(tok))
		if v == "" || v[0] == '#' {
			continue
		}
		return v, r.line, nil
	}
	if err := r.text.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return "", r.line + 1, fmt.Errorf("the line is longer than %d bytes", maxSeedLineBytes)
		}
		return "", r.line + 1, err
	}
	return "", 0, io.EOF
}

func (r *SeedReader) nextCSV() (string, int, error) {
	for {
		r.rec.n = 0
		rec, err := r.csv.Read()
		if errors.Is(err, io.EOF) {
			return "", 0, io.EOF
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return "", pe.Line, fmt.Errorf("not valid CSV: %v", pe.Err)
			}
			return "", 0, err
		}
		line, _ := r.csv.FieldPos(r.col)
		r.offset = r.base + r.csv.InputOffset()
		if v := strings.TrimSpace(rec[r.col]); v != "" {
			return v, line, nil
		}
	}
}

// recordCap fails a read once n, the bytes read since the reader's last
// record (nextCSV resets it), passes maxCSVRecordBytes.
type recordCap struct {
	r io.Reader
	n int64
}

func (c *recordCap) Read(p []byte) (int, error) {
	if c.n > maxCSVRecordBytes {
		return 0, fmt.Errorf("a CSV record is longer than %d bytes (an unclosed quote?)", maxCSVRecordBytes)
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Offset is the byte offset just past the last value Next returned (and
// the blank lines and comments before it): where a reader opened later
// goes on from.
func (r *SeedReader) Offset() int64 { return r.offset }

// Close closes the file.
func (r *SeedReader) Close() error { return r.file.Close() }
