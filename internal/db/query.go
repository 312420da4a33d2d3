package db

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"text/template"
)

//go:embed queries/*.sql
var files embed.FS

// Query is one named query of a .sql file, its @name parameters rewritten to
// PostgreSQL's positional $n.
type Query struct {
	Name   string   // as in its "-- name:" line
	File   string   // the .sql file holding it
	SQL    string   // the text sent to the server, with $1, $2...
	Params []string // Params[i] is the name of $(i+1), in order of first use
}

// queries holds every query of queries/*.sql, loaded once at init.
var queries = mustLoad(files)

func mustLoad(fsys fs.FS) map[string]*Query {
	qs, err := load(fsys)
	if err != nil {
		panic(err)
	}
	return qs
}

// load reads every queries/*.sql file of fsys.
func load(fsys fs.FS) (map[string]*Query, error) {
	qs := make(map[string]*Query)
	return qs, loadInto(qs, fsys, "queries/*.sql")
}

// Register adds the queries of the files of fsys matching glob to the
// program's queries, for a package that keeps its SQL beside its Go code
// (package sinks: one .sql file per sink). Call it in a package-level
// variable that the package's Prepare calls depend on, so it runs first. It
// panics on a file that does not parse or a name already taken.
func Register(fsys fs.FS, glob string) struct{} {
	if err := loadInto(queries, fsys, glob); err != nil {
		panic(err)
	}
	return struct{}{}
}

// loadInto adds the queries of the files of fsys matching glob to qs.
func loadInto(qs map[string]*Query, fsys fs.FS, glob string) error {
	names, err := fs.Glob(fsys, glob)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("db: no file matches %s", glob)
	}
	for _, name := range names {
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		parsed, err := parseFile(path.Base(name), string(text))
		if err != nil {
			return err
		}
		for _, q := range parsed {
			if prev, ok := qs[q.Name]; ok {
				return fmt.Errorf("db: query %s is in both %s and %s", q.Name, prev.File, q.File)
			}
			qs[q.Name] = q
		}
	}
	return nil
}

// Lookup returns the query called name; it panics when there is none, so a
// package-level variable holding it fails at init, not at the first call.
func Lookup(name string) *Query {
	q, ok := queries[name]
	if !ok {
		panic(fmt.Sprintf("db: no query %q in internal/db/queries or a registered package", name))
	}
	return q
}

var (
	preparedMu sync.Mutex
	prepared   = map[string]bool{}
)

func markPrepared(name string) {
	preparedMu.Lock()
	prepared[name] = true
	preparedMu.Unlock()
}

// Unprepared lists the queries no Prepare or PrepareBulk of the program has
// bound, sorted: a test of a package that imports every caller asserts it is
// empty, so no query is dead text.
func Unprepared() []string {
	preparedMu.Lock()
	defer preparedMu.Unlock()
	var names []string
	for name := range queries {
		if !prepared[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// parseFile splits a .sql file into its queries: each starts at a line
// "-- name: Xxx" and runs to the next one (or to a "-- template:" line).
// Lines that are only a comment are left out of the text sent; text before
// the first name line is the file's commentary.
//
// A family of statements that differ only by their table is written once:
// a block "-- template: Xxx" holds the statement as a text/template, and a
// query whose block has a line "-- from: Xxx table=a.b key=c,d" and no SQL
// of its own is that template run with those values ({{.table}}; {{list
// .key}} splits a value on commas). A template serves the queries of its
// own file only.
func parseFile(file, text string) ([]*Query, error) {
	type block struct {
		query *Query // nil: a template
		name  string
		from  string // the query's "-- from:" line, after the colon
		body  strings.Builder
	}
	var blocks []*block
	var cur *block
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		rest, isQuery := strings.CutPrefix(trimmed, "-- name:")
		tmpl, isTemplate := strings.CutPrefix(trimmed, "-- template:")
		if isQuery || isTemplate {
			fields := strings.Fields(rest)
			if isTemplate {
				fields = strings.Fields(tmpl)
			}
			if len(fields) != 1 {
				return nil, fmt.Errorf("db: %s: malformed name line %q", file, trimmed)
			}
			cur = &block{name: fields[0]}
			if isQuery {
				cur.query = &Query{Name: fields[0], File: file}
			}
			blocks = append(blocks, cur)
			continue
		}
		if from, ok := strings.CutPrefix(trimmed, "-- from:"); ok && cur != nil && cur.query != nil {
			cur.from = strings.TrimSpace(from)
			continue
		}
		if cur == nil || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.body.WriteString(line)
	}
	templates := template.New(file).Option("missingkey=error").Funcs(template.FuncMap{
		"list": func(v string) []string { return strings.FieldsFunc(v, func(r rune) bool { return r == ',' }) },
	})
	for _, b := range blocks {
		if b.query != nil {
			continue
		}
		if templates.Lookup(b.name) != nil {
			return nil, fmt.Errorf("db: %s: template %s is defined twice", file, b.name)
		}
		if _, err := templates.New(b.name).Parse(b.body.String()); err != nil {
			return nil, fmt.Errorf("db: %s: template %s: %w", file, b.name, err)
		}
	}
	var qs []*Query
	for _, b := range blocks {
		q := b.query
		if q == nil {
			continue
		}
		text := b.body.String()
		if b.from != "" {
			if strings.TrimSpace(text) != "" {
				return nil, fmt.Errorf("db: %s: query %s has both SQL and a from: line", file, q.Name)
			}
			var err error
			if text, err = expand(templates, b.from); err != nil {
				return nil, fmt.Errorf("db: %s: query %s: %w", file, q.Name, err)
			}
		}
		sql, params, err := rewrite(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("db: %s: query %s: %w", file, q.Name, err)
		}
		if sql == "" {
			return nil, fmt.Errorf("db: %s: query %s is empty", file, q.Name)
		}
		q.SQL, q.Params = "\n"+sql, params
		qs = append(qs, q)
	}
	return qs, nil
}

// expand runs the template a from: line names with its key=value pairs.
func expand(templates *template.Template, from string) (string, error) {
	fields := strings.Fields(from)
	if len(fields) == 0 {
		return "", fmt.Errorf("empty from: line")
	}
	t := templates.Lookup(fields[0])
	if t == nil {
		return "", fmt.Errorf("no template %s in its file", fields[0])
	}
	data := map[string]string{}
	for _, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", fmt.Errorf("from: %q is not key=value", kv)
		}
		data[k] = v
	}
	var out strings.Builder
	if err := t.Execute(&out, data); err != nil {
		return "", err
	}
	return out.String(), nil
}

// rewrite replaces each @name parameter of sql by $n, numbering names in
// order of first use, and returns the names. String literals, quoted
// identifiers and comments are copied as they are; an @ not followed by a
// letter (an operator such as @>) is not a parameter.
func rewrite(sql string) (string, []string, error) {
	var out strings.Builder
	var params []string
	index := map[string]int{}
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
	}
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) && sql[j] != c {
				j++
			}
			if j == len(sql) {
				return "", nil, fmt.Errorf("unterminated %c at offset %d", c, i)
			}
			out.WriteString(sql[i : j+1])
			i = j + 1
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			out.WriteString(sql[i : i+j])
			i += j
		case c == '$':
			return "", nil, fmt.Errorf("positional parameter at offset %d: name it @name", i)
		case c == '@' && i+1 < len(sql) && isIdent(sql[i+1], true) && (i == 0 || !isIdent(sql[i-1], false)):
			j := i + 1
			for j < len(sql) && isIdent(sql[j], false) {
				j++
			}
			name := sql[i+1 : j]
			n, ok := index[name]
			if !ok {
				params = append(params, name)
				n = len(params)
				index[name] = n
			}
			fmt.Fprintf(&out, "$%d", n)
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String(), params, nil
}
