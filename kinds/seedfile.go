package kinds

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/socialcrawl/crawler/internal/valuefile"
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

// SeedReader reads a seed file's values one at a time.
type SeedReader = valuefile.Reader

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
	r, err := valuefile.Open(f.dir, f.Path, f.Column, 0, h)
	if err != nil {
		return yamlstrict.Errors{{Key: f.Key(), Msg: err.Error()}}
	}
	defer r.Close()
	var errs yamlstrict.Errors
	f.Size, f.Values = r.Size(), 0
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
	r, err := valuefile.Open(f.dir, f.Path, f.Column, offset, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", f.Key(), f.Name(), err)
	}
	if r.Size() != f.Size {
		r.Close()
		return nil, fmt.Errorf("%s: %s changed since the job was loaded (%d bytes, then %d): seed from the file the job was checked with", f.Key(), f.Name(), f.Size, r.Size())
	}
	return r, nil
}
