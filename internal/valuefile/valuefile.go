// Package valuefile reads a list of values from a file, streamed: one
// value a line (blank lines and # comments skipped) or one column of a
// CSV file, from a byte offset an earlier read returned, within caps of
// size, line and record whatever the file holds. The crawler's seed files
// (kinds.SeedFile, docs/seed-files.md) are read with it.
package valuefile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
)

// Caps of a value file: its size, and one line (a value is at most
// yamlstrict.MaxStringBytes, like any string of a job file).
const (
	MaxBytes     = 1 << 30
	maxLineBytes = 64 << 10
	// A CSV record may span lines (quoted newlines): it is capped as a
	// whole, so an unclosed quote cannot pull the file into memory.
	maxCSVRecordBytes = 1 << 20
)

// Reader reads a value file's values one at a time.
type Reader struct {
	file   *os.File
	size   int64
	text   *bufio.Scanner
	csv    *csv.Reader
	rec    *recordCap // under csv
	col    int
	base   int64 // text: the offset reading started at; CSV: where its reader's offsets count from
	offset int64 // bytes consumed by the values returned so far
	line   int   // text: lines read (from base)
}

// Open opens the file path in dir (named dir/path in errors), refusing
// what would let a job file read other files (a path leaving the
// directory, also through a symbolic link; a device or pipe) or make a run
// read for hours (a file over MaxBytes), and positions it at offset, a
// byte offset an earlier Reader's Offset returned. column "" reads one
// value a line; otherwise the CSV column its header names. When sum is
// set, everything read from the start is written to it.
func Open(dir, path, column string, offset int64, sum hash.Hash) (*Reader, error) {
	name := filepath.Join(dir, path)
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the job file's directory: %w", err)
	}
	defer root.Close()
	file, err := root.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if strings.Contains(err.Error(), "escapes") {
			return nil, fmt.Errorf("%s leads outside the job file's directory (a symbolic link?): a seed file must be in it or below it", name)
		}
		return nil, fmt.Errorf("cannot open %s: %v", name, err)
	}
	r := &Reader{file: file}
	fi, err := file.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("cannot read %s: %v", name, err)
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", name)
	case fi.Size() > MaxBytes:
		err = fmt.Errorf("%s is %d bytes; a seed file is at most %d (1 GiB): split it over several jobs", name, fi.Size(), MaxBytes)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	r.size = fi.Size()
	// A file that grows while it is read is read up to the cap.
	var in io.Reader = io.LimitReader(file, MaxBytes)
	if sum != nil {
		in = io.TeeReader(in, sum)
	}
	if column != "" {
		err = r.openCSV(name, column, in, offset)
	} else {
		err = r.openText(in, offset)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	return r, nil
}

// Size is the file's size when it was opened.
func (r *Reader) Size() int64 { return r.size }

// bom is the byte order mark some tools write at the start of a file.
var bom = []byte("\uFEFF")

func (r *Reader) openText(in io.Reader, offset int64) error {
	if offset > 0 {
		if _, err := r.file.Seek(offset, io.SeekStart); err != nil {
			return err
		}
	}
	r.base, r.offset = offset, offset
	r.text = bufio.NewScanner(in)
	r.text.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
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
func (r *Reader) openCSV(name, column string, in io.Reader, offset int64) error {
	// A byte order mark is left out before the CSV reader sees it (a
	// quoted first name after it is not valid CSV); the reader's offsets
	// then count from after it.
	br := bufio.NewReader(in)
	skipped := int64(0)
	if b, _ := br.Peek(len(bom)); bytes.Equal(b, bom) {
		_, _ = br.Discard(len(bom))
		skipped = int64(len(bom))
	}
	r.rec = &recordCap{r: br}
	c := csv.NewReader(r.rec)
	head, err := c.Read()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s is empty: a CSV seed file starts with a header naming its columns", name)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	r.col = -1
	for i, name := range head {
		if strings.TrimSpace(name) == column {
			r.col = i
			break
		}
	}
	if r.col < 0 {
		return fmt.Errorf("%s has no column %q (its header: %s)", name, column, yamlstrict.ShortText(strings.Join(head, ", ")))
	}
	// base: where the CSV reader's offsets count from (the file's start,
	// after its byte order mark, or the offset it was positioned at).
	r.base = skipped
	if offset > skipped+c.InputOffset() {
		if _, err := r.file.Seek(offset, io.SeekStart); err != nil {
			return err
		}
		r.base = offset
		// Only seeding starts past the header, and it hashes nothing.
		r.rec = &recordCap{r: io.LimitReader(r.file, MaxBytes-offset)}
		c = csv.NewReader(r.rec)
	}
	c.FieldsPerRecord = len(head)
	c.ReuseRecord = true
	r.csv, r.offset = c, r.base+c.InputOffset()
	return nil
}

// Next returns the next value and its line, io.EOF after the last; any
// other error is located at the line returned (0: unknown).
func (r *Reader) Next() (string, int, error) {
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
			return "", r.line + 1, fmt.Errorf("the line is longer than %d bytes", maxLineBytes)
		}
		return "", r.line + 1, err
	}
	return "", 0, io.EOF
}

func (r *Reader) nextCSV() (string, int, error) {
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
func (r *Reader) Offset() int64 { return r.offset }

// Close closes the file.
func (r *Reader) Close() error { return r.file.Close() }
