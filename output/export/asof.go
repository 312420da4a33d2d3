package export

import (
	"context"
	"fmt"
	"strings"

	"github.com/socialcrawl/crawler/internal/db"
)

// The data schemas: a name qualified with one of them in a view's
// definition may be a relation --as-of cuts.
var dataSchemas = map[string]bool{"shortvideo": true, "photosocial": true, "crawl": true}

// notAlias are the words that may follow a relation in a FROM clause as
// pg_get_viewdef prints it and are not its alias.
var notAlias = map[string]bool{
	"on": true, "where": true, "join": true, "left": true, "right": true, "full": true, "inner": true,
	"cross": true, "natural": true, "group": true, "order": true, "limit": true, "offset": true,
	"union": true, "except": true, "intersect": true, "having": true, "window": true, "using": true,
	"fetch": true, "for": true, "tablesample": true,
}

// asOf rewrites what an object reads so it gives the rows as run N left
// them: each table a view reads (a view's views in turn) is replaced by
// its rows up to N, by the lineage the schema keeps. Per table:
//
//   - crawl.runs: the runs up to N (pg_temp.export_runs, see prepare);
//   - a table with run_id (snapshots, rankings, tasks, credit usage, live
//     status): the rows of runs up to N, exact;
//   - a table with first_seen_run (entities, edges): the rows first seen by
//     N, with last_seen_run capped at N; their other columns (names, bios,
//     raw, updated_at) are as the latest run left them, since the schema
//     keeps one value, which the manifest says;
//   - any other table is read whole, which the manifest says.
type asOf struct {
	run   int64
	q     db.Querier
	rels  map[string]*relation // by qualified name; nil: not a relation
	notes map[string]string    // by table: how it was cut, when not exactly
	exact map[string]bool      // tables cut exactly
}

func (a *asOf) relation(ctx context.Context, name string) (*relation, error) {
	if r, ok := a.rels[name]; ok {
		return r, nil
	}
	r, ok, err := loadRelation(ctx, a.q, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		a.rels[name] = nil
		return nil, nil
	}
	a.rels[name] = &r
	return &r, nil
}

// prepare copies the runs up to N to a temporary table with crawl.runs'
// primary key. The export's transaction is read-write until then, and
// read-only after; it is never committed.
func (a *asOf) prepare(ctx context.Context, tx db.Querier) error {
	_, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TEMP TABLE export_runs ON COMMIT DROP AS SELECT * FROM crawl.runs WHERE id <= %d;
		ALTER TABLE pg_temp.export_runs ADD PRIMARY KEY (id)`, a.run))
	return err
}

// source is the SQL of r's rows as of the run, for a FROM clause.
func (a *asOf) source(ctx context.Context, r *relation, depth int) (string, error) {
	if depth > 8 {
		return "", fmt.Errorf("%s: views nested too deep to cut", r.qualified())
	}
	if r.isView() {
		var def string
		if err := exportViewDef.QueryRow(ctx, a.q, nameArg{r.qualified()}).Scan(&def); err != nil {
			return "", fmt.Errorf("definition of %s: %w", r.qualified(), err)
		}
		body, err := a.rewrite(ctx, strings.TrimSuffix(strings.TrimSpace(def), ";"), depth)
		if err != nil {
			return "", err
		}
		return "(" + body + ")", nil
	}
	cols := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		cols[i] = quoteIdent(c.Name)
	}
	name := r.qualified()
	n := fmt.Sprint(a.run)
	var where string
	switch {
	case name == "crawl.runs":
		// A copy with the primary key, not a subquery: a view grouping
		// by the run's id (crawl.run_ledger) selects its other columns by
		// that key's functional dependency.
		a.exact[name] = true
		return "pg_temp.export_runs", nil
	case r.has("run_id"):
		where = "run_id <= " + n
		a.exact[name] = true
	case r.has("first_seen_run"):
		where = "first_seen_run <= " + n
		for i, c := range r.Columns {
			if c.Name == "last_seen_run" {
				cols[i] = "LEAST(last_seen_run, " + n + ") AS last_seen_run"
			}
		}
		a.notes[name] = fmt.Sprintf("%s: the rows first seen by run %s; last_seen_run capped at %s (a row seen before and after it counts as seen by it); "+
			"other columns than counters (kept per run in snapshots) are as the latest run left them", name, n, n)
	default:
		a.notes[name] = name + ": no run lineage, read whole (as the latest run left it)"
		return r.sanitized(), nil
	}
	return "(SELECT " + strings.Join(cols, ", ") + " FROM " + r.sanitized() + " WHERE " + where + ")", nil
}

// rewrite replaces each relation def names (schema-qualified, outside
// string literals, not a cast's type) by its rows as of the run, keeping
// the alias the definition gives it or naming it by its table.
func (a *asOf) rewrite(ctx context.Context, def string, depth int) (string, error) {
	var out strings.Builder
	i := 0
	for i < len(def) {
		c := def[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(def) {
				if def[j] == c {
					if j+1 < len(def) && def[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			out.WriteString(def[i:min(j+1, len(def))])
			i = j + 1
			continue
		case isIdentStart(c) && (i == 0 || !isIdentChar(def[i-1]) && def[i-1] != '.'):
			j := identEnd(def, i)
			schema := def[i:j]
			if !dataSchemas[schema] || j >= len(def) || def[j] != '.' || (i >= 2 && def[i-2:i] == "::") {
				out.WriteString(schema)
				i = j
				continue
			}
			k := identEnd(def, j+1)
			if k == j+1 || (k < len(def) && (def[k] == '(' || def[k] == '.')) {
				out.WriteString(def[i:k])
				i = k
				continue
			}
			r, err := a.relation(ctx, def[i:k])
			if err != nil {
				return "", err
			}
			if r == nil {
				out.WriteString(def[i:k])
				i = k
				continue
			}
			src, err := a.source(ctx, r, depth+1)
			if err != nil {
				return "", err
			}
			out.WriteString(src)
			// The alias: the next word, unless it is a keyword.
			m := k
			for m < len(def) && (def[m] == ' ' || def[m] == '\n' || def[m] == '\t') {
				m++
			}
			next := ""
			if m < len(def) && isIdentStart(def[m]) {
				next = strings.ToLower(def[m:identEnd(def, m)])
			}
			if next == "" || notAlias[next] {
				out.WriteString(" " + quoteIdent(r.Name))
			}
			i = k
			continue
		}
		out.WriteByte(c)
		i++
	}
	return out.String(), nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

func identEnd(s string, i int) int {
	for i < len(s) && isIdentChar(s[i]) {
		i++
	}
	return i
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
