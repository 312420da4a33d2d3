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
	"text/template/parse"
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

// loadInto adds the queries of the files of fsys matching glob to qs. The
// templates of these files serve all of them (and no other file).
func loadInto(qs map[string]*Query, fsys fs.FS, glob string) error {
	names, err := fs.Glob(fsys, glob)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("db: no file matches %s", glob)
	}
	var blocks []*block
	for _, name := range names {
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		bs, err := parseFile(path.Base(name), string(text))
		if err != nil {
			return err
		}
		blocks = append(blocks, bs...)
	}
	templates, err := parseTemplates(blocks)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, b := range blocks {
		if b.query == nil {
			continue
		}
		q, err := b.expand(templates, glob, used)
		if err != nil {
			return err
		}
		if prev, ok := qs[q.Name]; ok {
			return fmt.Errorf("db: query %s is in both %s and %s", q.Name, prev.File, q.File)
		}
		qs[q.Name] = q
	}
	for _, b := range blocks {
		if b.query == nil && !used[b.name] {
			return fmt.Errorf("db: %s: template %s serves no query", b.file, b.name)
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

// block is one "-- name:" or "-- template:" block of a .sql file.
type block struct {
	file  string
	query *Query // nil: a template
	name  string
	parts []part // the lines sent, comment lines left out
}

// part is a run of a block's SQL lines, or one "-- from:" line of a query.
type part struct {
	sql  string
	from string // the from: line after the colon; sql is then ""
}

// parseFile splits a .sql file into its blocks: each starts at a line
// "-- name: Xxx" (a query) or "-- template: Xxx" and runs to the next one.
// Lines that are only a comment are left out of the text sent; text before
// the first block is the file's commentary.
//
// A rule that several statements share is written once: a block
// "-- template: Xxx" holds it as a text/template, and a line
// "-- from: Xxx table=a.b key=c,d" in a query stands for that template run
// with those values ({{.table}}; {{list .key}} splits a value on commas,
// {{has .key "c"}} says whether the list holds c, {{join .key}} is the
// list with ", " between, {{subset .a .b}} is
// .a after checking each of its items is one of .b ("all": .b), {{flag .x true}} reads
// yes or no, true when empty). A query may be that line
// alone (the whole statement is the template's) or SQL around it (an
// INSERT whose ON CONFLICT clause is the template's). A template reads a
// value it needs as {{.key}}, and one a from: line may leave out as
// {{index . "key"}} (""). The templates of the files of one load
// (queries/*.sql here, or one Register call) serve all of its files.
func parseFile(file, text string) ([]*block, error) {
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
			cur = &block{file: file, name: fields[0]}
			if isQuery {
				cur.query = &Query{Name: fields[0], File: file}
			}
			blocks = append(blocks, cur)
			continue
		}
		if from, ok := strings.CutPrefix(trimmed, "-- from:"); ok && cur != nil && cur.query != nil {
			cur.parts = append(cur.parts, part{from: strings.TrimSpace(from)})
			continue
		}
		if cur == nil || strings.HasPrefix(trimmed, "--") {
			continue
		}
		if n := len(cur.parts); n > 0 && cur.parts[n-1].from == "" {
			cur.parts[n-1].sql += line
		} else {
			cur.parts = append(cur.parts, part{sql: line})
		}
	}
	return blocks, nil
}

// parseTemplates parses the template blocks of blocks into one set.
func parseTemplates(blocks []*block) (*template.Template, error) {
	split := func(v string) []string { return strings.FieldsFunc(v, func(r rune) bool { return r == ',' }) }
	templates := template.New("").Option("missingkey=error").Funcs(template.FuncMap{
		"list": split,
		"has":  func(v, s string) bool { return slices.Contains(split(v), s) },
		"join": func(v string) string { return strings.Join(split(v), ", ") },
		"subset": func(v, of string) (string, error) {
			if v == "all" {
				return of, nil
			}
			for _, s := range split(v) {
				if !slices.Contains(split(of), s) {
					return "", fmt.Errorf("%s is not among %s", s, of)
				}
			}
			return v, nil
		},
		"flag": func(v string, def bool) (bool, error) {
			switch v {
			case "":
				return def, nil
			case "yes":
				return true, nil
			case "no":
				return false, nil
			}
			return false, fmt.Errorf("%q is neither yes nor no", v)
		},
	})
	defined := map[string]string{}
	for _, b := range blocks {
		if b.query != nil {
			continue
		}
		if prev, ok := defined[b.name]; ok {
			return nil, fmt.Errorf("db: %s: template %s is defined twice (also in %s)", b.file, b.name, prev)
		}
		defined[b.name] = b.file
		var text strings.Builder
		for _, p := range b.parts {
			text.WriteString(p.sql)
		}
		if _, err := templates.New(b.name).Parse(text.String()); err != nil {
			return nil, fmt.Errorf("db: %s: template %s: %w", b.file, b.name, err)
		}
	}
	return templates, nil
}

// expand returns the query of block b: its SQL, each from: line replaced by
// the template it names (looked up in templates, those of the files glob
// matches; marked in used), and its parameters numbered.
func (b *block) expand(templates *template.Template, glob string, used map[string]bool) (*Query, error) {
	q := b.query
	var text strings.Builder
	for _, p := range b.parts {
		if p.from == "" {
			text.WriteString(p.sql)
			continue
		}
		out, err := run(templates, glob, p.from, used)
		if err != nil {
			return nil, fmt.Errorf("db: %s: query %s: %w", b.file, q.Name, err)
		}
		text.WriteString(strings.TrimSpace(out) + "\n")
	}
	sql, params, err := rewrite(strings.TrimSpace(text.String()))
	if err != nil {
		return nil, fmt.Errorf("db: %s: query %s: %w", b.file, q.Name, err)
	}
	if sql == "" {
		return nil, fmt.Errorf("db: %s: query %s is empty", b.file, q.Name)
	}
	q.SQL, q.Params = "\n"+sql, params
	return q, nil
}

// run runs the template a from: line names with its key=value pairs, after
// checking that they are the keys the template reads.
func run(templates *template.Template, glob, from string, used map[string]bool) (string, error) {
	fields := strings.Fields(from)
	if len(fields) == 0 {
		return "", fmt.Errorf("empty from: line")
	}
	t := templates.Lookup(fields[0])
	if t == nil {
		return "", fmt.Errorf("no template %s in %s", fields[0], glob)
	}
	used[t.Name()] = true
	data := map[string]string{}
	for _, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", fmt.Errorf("from: %q is not key=value", kv)
		}
		if _, dup := data[k]; dup {
			return "", fmt.Errorf("from: %s: key %s given twice", t.Name(), k)
		}
		data[k] = v
	}
	required, optional := keys(templates, t)
	for k := range required {
		if _, ok := data[k]; !ok {
			return "", fmt.Errorf("from: %s needs key %s (it reads %s)", t.Name(), k, keyList(required, optional))
		}
	}
	for k := range data {
		if !required[k] && !optional[k] {
			return "", fmt.Errorf("from: %s reads no key %s (it reads %s)", t.Name(), k, keyList(required, optional))
		}
	}
	var out strings.Builder
	if err := t.Execute(&out, data); err != nil {
		return "", err
	}
	return out.String(), nil
}

// keys returns the keys template t reads, through the templates it calls:
// required ({{.key}}, {{$.key}}) and optional ({{index . "key"}}).
func keys(templates, t *template.Template) (required, optional map[string]bool) {
	required, optional = map[string]bool{}, map[string]bool{}
	isData := func(n parse.Node) bool {
		v, ok := n.(*parse.VariableNode)
		return n.Type() == parse.NodeDot || ok && len(v.Ident) == 1 && v.Ident[0] == "$"
	}
	seen := map[string]bool{t.Name(): true}
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					walk(c)
				}
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
			if c := templates.Lookup(n.Name); c != nil && !seen[n.Name] {
				seen[n.Name] = true
				walk(c.Tree.Root)
			}
		case *parse.PipeNode:
			if n != nil {
				for _, c := range n.Cmds {
					walk(c)
				}
			}
		case *parse.CommandNode:
			if len(n.Args) == 3 && n.Args[0].String() == "index" && isData(n.Args[1]) {
				if s, ok := n.Args[2].(*parse.StringNode); ok {
					optional[s.Text] = true
				}
			}
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.FieldNode:
			required[n.Ident[0]] = true
		case *parse.VariableNode:
			if n.Ident[0] == "$" && len(n.Ident) > 1 {
				required[n.Ident[1]] = true
			}
		}
	}
	walk(t.Tree.Root)
	return required, optional
}

// keyList lists the keys of a template for an error, the optional ones
// marked with a question mark.
func keyList(required, optional map[string]bool) string {
	var ks []string
	for k := range required {
		ks = append(ks, k)
	}
	for k := range optional {
		if !required[k] {
			ks = append(ks, k+"?")
		}
	}
	slices.Sort(ks)
	return strings.Join(ks, " ")
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
