package valuefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// read returns the values of dir/path from offset, with the offset after
// each.
func read(t *testing.T, dir, path, column string, offset int64) (vals []string, offsets []int64) {
	t.Helper()
	r, err := Open(dir, path, column, offset, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		v, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return vals, offsets
		}
		if err != nil {
			t.Fatal(err)
		}
		vals, offsets = append(vals, v), append(offsets, r.Offset())
	}
}

// Reading on from the offset after any value gives exactly the values
// after it: a seeding killed anywhere resumes without a value lost or
// read twice, in either form.
func TestResumeFromEveryOffset(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]struct {
		column, text string
		want         []string
	}{
		"a.txt": {"", "\uFEFFalice\r\n\n# a comment\n  bob  \ncarol", []string{"alice", "bob", "carol"}},
		"b.csv": {"handle", "\uFEFFid,handle\n1,alice\n2,\"bo\nb\"\n3,\n4,carol\n", []string{"alice", "bo\nb", "carol"}},
		// A quoted header after the byte order mark, as R's write.csv writes it.
		"c.csv": {"handle", "\uFEFF\"id\",\"handle\"\n1,alice\n\"2\",\"bob\"\n", []string{"alice", "bob"}},
	}
	for name, f := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(f.text), 0o600); err != nil {
			t.Fatal(err)
		}
		all, offsets := read(t, dir, name, f.column, 0)
		if !slices.Equal(all, f.want) {
			t.Fatalf("%s: %q, want %q", name, all, f.want)
		}
		for i, off := range offsets {
			if rest, _ := read(t, dir, name, f.column, off); !slices.Equal(rest, f.want[i+1:]) {
				t.Errorf("%s from offset %d (after %q): %q, want %q", name, off, f.want[i], rest, f.want[i+1:])
			}
		}
	}
}

// What a file holds cannot make a read unbounded: a line or a CSV record
// over its cap is an error at its line, and a path out of the directory
// is refused.
func TestCaps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("x", maxLineBytes+1)
	unclosed := "h\n\"" + strings.Repeat("y\n", maxCSVRecordBytes)
	for name, text := range map[string]string{"long.txt": "a\n" + long + "\n", "open.csv": unclosed} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(dir, "long.txt", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, _, _ := r.Next(); v != "a" {
		t.Fatalf("first value %q", v)
	}
	if _, line, err := r.Next(); err == nil || line != 2 || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("long line: line %d, %v", line, err)
	}
	c, err := Open(dir, "open.csv", "h", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Next(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("unclosed quote: %v", err)
	}
	if _, err := Open(dir, "../x.txt", "", 0, nil); err == nil {
		t.Error("a path out of the directory was opened")
	}
}
