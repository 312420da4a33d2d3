package db

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func TestRewriteNamesParametersInOrderOfFirstUse(t *testing.T) {
	t.Parallel()
	sql, params, err := rewrite(`SELECT @b::int, '@x' AS "@y", @a, @b + 1, j @> '{}', x@a -- @c
FROM t WHERE k = @a_2`)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT $1::int, '@x' AS "@y", $2, $1 + 1, j @> '{}', x@a -- @c
FROM t WHERE k = $3`
	if sql != want {
		t.Errorf("sql:\n%s\nwant:\n%s", sql, want)
	}
	if !reflect.DeepEqual(params, []string{"b", "a", "a_2"}) {
		t.Errorf("params = %v", params)
	}
}

func TestRewriteRejectsPositionalParameters(t *testing.T) {
	t.Parallel()
	if _, _, err := rewrite(`SELECT $1`); err == nil || !strings.Contains(err.Error(), "@name") {
		t.Errorf("err = %v, want one asking for @name", err)
	}
	if _, _, err := rewrite(`SELECT 'open`); err == nil {
		t.Error("unterminated literal: no error")
	}
}

// loaded loads the files of fsys and returns each query as its file, SQL
// and parameters.
func loaded(t *testing.T, fsys fstest.MapFS) map[string]string {
	t.Helper()
	qs, err := load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, q := range qs {
		got[name] = fmt.Sprintf("%s %q %v", q.File, q.SQL, q.Params)
	}
	return got
}

func TestLoadSplitsFilesByNameLines(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"queries/a.sql": {Data: []byte("-- commentary\n\n-- name: One\n-- why\nSELECT @x;\n\n-- name: Two\nSELECT 2;\n")},
		"queries/b.sql": {Data: []byte("-- name: Three\nSELECT @y, @x;\n")},
	}
	got := loaded(t, fsys)
	want := map[string]string{
		"One":   `a.sql "\nSELECT $1;" [x]`,
		"Two":   `a.sql "\nSELECT 2;" []`,
		"Three": `b.sql "\nSELECT $1, $2;" [y x]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestLoadRejectsDuplicatesAndEmptyQueries(t *testing.T) {
	t.Parallel()
	for name, files := range map[string]fstest.MapFS{
		"in both a.sql and b.sql": {"queries/a.sql": {Data: []byte("-- name: X\nSELECT 1;")}, "queries/b.sql": {Data: []byte("-- name: X\nSELECT 2;")}},
		"X is empty":              {"queries/a.sql": {Data: []byte("-- name: X\n-- nothing\n-- name: Y\nSELECT 1;")}},
		"malformed name line":     {"queries/a.sql": {Data: []byte("-- name: X :one\nSELECT 1;")}},
	} {
		if _, err := load(files); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("err = %v, want it to say %q", err, name)
		}
	}
}

// A family of statements is written once, as a template, and each query
// of it names the template and its values.
func TestLoadExpandsTemplates(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"queries/a.sql": {Data: []byte(`-- template: Del
-- why the family exists
DELETE FROM {{.table}} WHERE {{range list .key}}{{.}} = @{{.}} AND {{end}}run_id = @run_id;

-- name: DelA
-- from: Del table=x.a key=k
-- name: DelB
-- the comments of a query stay its own
-- from: Del table=x.b key=k,j
-- name: DelC
-- from: Del table=x.c key=
`)}}
	got := loaded(t, fsys)
	want := map[string]string{
		"DelA": `a.sql "\nDELETE FROM x.a WHERE k = $1 AND run_id = $2;" [k run_id]`,
		"DelB": `a.sql "\nDELETE FROM x.b WHERE k = $1 AND j = $2 AND run_id = $3;" [k j run_id]`,
		"DelC": `a.sql "\nDELETE FROM x.c WHERE run_id = $1;" [run_id]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestLoadRejectsBadTemplates(t *testing.T) {
	t.Parallel()
	const tmpl = "-- template: T\nSELECT * FROM {{.table}}{{index . \"where\"}};\n"
	for name, text := range map[string]string{
		"a.sql: query X: no template U in queries/*.sql":              tmpl + "-- name: X\n-- from: U table=a\n-- name: Y\n-- from: T table=a\n",
		"query X: from: T needs key table (it reads table where?)":    tmpl + "-- name: X\n-- from: T where=b\n",
		"query X: from: T reads no key tabel (it reads table where?)": tmpl + "-- name: X\n-- from: T table=a tabel=a\n",
		"query X: from: T: key table given twice":                     tmpl + "-- name: X\n-- from: T table=a table=b\n",
		`"table" is not key=value`:                                    tmpl + "-- name: X\n-- from: T table\n",
		"a.sql: template T is defined twice (also in a.sql)":          tmpl + tmpl + "-- name: X\n-- from: T table=a\n",
		"template T: template: T:1:":                                  "-- template: T\nSELECT {{.table;\n-- name: X\nSELECT 1;\n",
		"a.sql: template T serves no query":                           tmpl + "-- name: X\nSELECT 1;\n",
	} {
		_, err := load(fstest.MapFS{"queries/a.sql": {Data: []byte(text)}})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("err = %v, want it to say %q", err, name)
		}
	}
	// One template name in two files of a load.
	_, err := load(fstest.MapFS{"queries/a.sql": {Data: []byte(tmpl)}, "queries/b.sql": {Data: []byte(tmpl + "-- name: X\n-- from: T table=a\n")}})
	if err == nil || !strings.Contains(err.Error(), "b.sql: template T is defined twice (also in a.sql)") {
		t.Errorf("a template in two files: err = %v", err)
	}
	// A load's templates are its own: Register's files do not see those of
	// queries/*.sql.
	msg := mustPanic(t, func() {
		Register(fstest.MapFS{"x/c.sql": {Data: []byte("-- name: RegisteredX\n-- from: PruneRunRows table=a\n")}}, "x/*.sql")
	})
	if !strings.Contains(msg, "c.sql: query RegisteredX: no template PruneRunRows in x/*.sql") {
		t.Errorf("a template of another load: panic %q", msg)
	}
}

// The templates of a load serve every file of it, and a from: line may
// stand among SQL of the query's own: it is replaced by the template's text.
func TestTemplatesServeTheirLoadAndSplice(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"queries/rules.sql": {Data: []byte(`-- template: Touch
-- why the rule exists
{{- $fill := subset (index . "fill") .set}}
ON CONFLICT ({{join .key}}) DO UPDATE SET{{range $i, $c := list .set}}{{if $i}},{{end}}
    {{$c}} = {{if has $fill $c}}COALESCE(EXCLUDED.{{$c}}, t.{{$c}}){{else}}EXCLUDED.{{$c}}{{end}}{{end}}
{{- if flag (index . "stamp") false}},
    at = now(){{end}}

`)},
		"queries/a.sql": {Data: []byte(`-- name: UpA
INSERT INTO a AS t (k, x, y) SELECT @k, @x, @y
-- the comments of a query stay its own
-- from: Touch key=k set=x,y fill=y
RETURNING @z;
`)},
		"queries/b.sql": {Data: []byte("-- name: UpB\nINSERT INTO b AS t (k, j, x) SELECT @k, @j, @x\n-- from: Touch key=k,j set=x fill=all stamp=yes\n")},
	}
	got := loaded(t, fsys)
	want := map[string]string{
		"UpA": `a.sql "\nINSERT INTO a AS t (k, x, y) SELECT $1, $2, $3\nON CONFLICT (k) DO UPDATE SET\n    x = EXCLUDED.x,\n    y = COALESCE(EXCLUDED.y, t.y)\nRETURNING $4;" [k x y z]`,
		"UpB": `b.sql "\nINSERT INTO b AS t (k, j, x) SELECT $1, $2, $3\nON CONFLICT (k, j) DO UPDATE SET\n    x = COALESCE(EXCLUDED.x, t.x),\n    at = now()" [k j x]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	for from, msg := range map[string]string{
		"key=k set=x fill=y":         "y is not among x",
		"key=k set=x stamp=maybe":    `"maybe" is neither yes nor no`,
		"key=k set=x fill=x stmap=y": "reads no key stmap (it reads fill? key set stamp?)",
	} {
		bad := maps.Clone(fsys)
		bad["queries/b.sql"] = &fstest.MapFile{Data: []byte("-- name: UpB\nINSERT INTO b AS t (k, x) SELECT @k, @x\n-- from: Touch " + from + "\n")}
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "b.sql: query UpB: ") || !strings.Contains(err.Error(), msg) {
			t.Errorf("from: Touch %s: err = %v, want it to say %q", from, err, msg)
		}
	}
}

// mustPanic runs f and returns its panic message, failing t if it did not
// panic.
func mustPanic(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("no panic")
		}
		msg = fmt.Sprint(r)
	}()
	f()
	return ""
}

func TestLookupPanicsOnAMissingName(t *testing.T) {
	t.Parallel()
	msg := mustPanic(t, func() { Lookup("NoSuchQuery") })
	if !strings.Contains(msg, `no query "NoSuchQuery"`) {
		t.Errorf("panic %q", msg)
	}
	mustPanic(t, func() { Prepare[struct{}]("NoSuchQuery") })
}

// TestEveryQueryParses loads the embedded files: a broken file would have
// panicked at init already; this says which queries there are.
func TestEveryQueryParses(t *testing.T) {
	t.Parallel()
	if len(queries) < 40 {
		t.Errorf("%d queries loaded, want every query of queries/*.sql", len(queries))
	}
	for name, q := range queries {
		if strings.Contains(q.SQL, "@") && !strings.Contains(q.SQL, "@>") {
			t.Errorf("%s still holds an @: %s", name, q.SQL)
		}
	}
}

type runArg struct {
	RunID int64 `db:"run_id"`
}

func TestPrepareChecksFieldsAgainstParameters(t *testing.T) {
	t.Parallel()
	type extra struct {
		RunID int64 `db:"run_id"`
		Other int   `db:"other"`
	}
	type missing struct {
		Owner string `db:"owner"`
	}
	// RunState takes only @run_id.
	s := Prepare[runArg]("RunState")
	if got := s.Args(runArg{7}); !reflect.DeepEqual(got, []any{int64(7)}) {
		t.Errorf("args = %v", got)
	}
	if msg := mustPanic(t, func() { Prepare[extra]("RunState") }); !strings.Contains(msg, "does not use the fields [other]") {
		t.Errorf("panic %q", msg)
	}
	if msg := mustPanic(t, func() { Prepare[missing]("RunState") }); !strings.Contains(msg, "@run_id has no field") {
		t.Errorf("panic %q", msg)
	}
}

type taskRow struct {
	Parent   *int64 `db:"parent_id"`
	Kind     string `db:"kind"`
	Key      string `db:"key"`
	Params   []byte `db:"params"`
	Depth    int32  `db:"depth"`
	MaxPages *int32 `db:"max_pages"`
	Refresh  int64  `db:"refresh_us"`
	Count    int64  `db:"count"`
	Credits  int32  `db:"credits"`
	Note     string // untagged: not a column
}

type addTasks struct {
	RunID        int64    `db:"run_id"`
	Reexpandable []string `db:"reexpandable"`
}

func TestBulkBuildsOneArrayPerColumn(t *testing.T) {
	t.Parallel()
	b := PrepareBulk[addTasks, taskRow]("AddTasks")
	ten := int32(10)
	got := b.Args(addTasks{RunID: 3}, []taskRow{
		{Kind: "k1", Key: "a", Params: []byte(`{}`), Depth: 1, MaxPages: &ten, Refresh: 7, Count: 12, Credits: 15},
		{Kind: "k2", Key: "b", Depth: 2},
	})
	// AddTasks uses @run_id, then the columns in unnest order (@parent_id
	// first, every row's nil: NULL, Query.padded), then @reexpandable.
	want := []any{int64(3), nil, []string{"k1", "k2"}, []string{"a", "b"}, [][]byte{[]byte("{}"), {}},
		[]int32{1, 2}, []*int32{&ten, nil}, []int64{7, 0}, []int64{12, 0}, []int32{15, 0}, []string(nil)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("args = %#v\nwant %#v", got, want)
	}
	one := int64(1)
	if got := b.Args(addTasks{}, []taskRow{{Parent: &one}, {}})[1]; !reflect.DeepEqual(got, []*int64{&one, nil}) {
		t.Errorf("parent_id = %#v, want the array", got)
	}
	type badColumn struct {
		Parent   *int64         `db:"parent_id"`
		Kind     map[string]int `db:"kind"`
		Key      string         `db:"key"`
		Params   string         `db:"params"`
		Depth    int32          `db:"depth"`
		MaxPages int32          `db:"max_pages"`
		Refresh  int64          `db:"refresh_us"`
		Count    int64          `db:"count"`
		Credits  int32          `db:"credits"`
	}
	if msg := mustPanic(t, func() { PrepareBulk[addTasks, badColumn]("AddTasks") }); !strings.Contains(msg, "cannot be sent as an array") {
		t.Errorf("panic %q", msg)
	}
}

// TestBulkPadsOnlyWhereUnnestDoes: a pointer column of nils only is sent
// as NULL only where PostgreSQL pads it (an argument of a unnest that has
// a column of another kind) and nothing else reads it.
func TestBulkPadsOnlyWhereUnnestDoes(t *testing.T) {
	t.Parallel()
	type row struct {
		Key  string  `db:"key"`
		Note *string `db:"note"`
	}
	cases := []struct {
		sql  string
		want bool
	}{
		{"SELECT r.* FROM unnest(@key::text[], @note::text[]) AS r(key, note)", true},
		{"SELECT r.* FROM UNNEST(@note::text[], @key::text[]) AS r(note, key)", true},
		{"SELECT r.* FROM unnest(@key::text[], @note::text[]) AS r(key, note) WHERE @note IS NULL", false},
		{"SELECT r.* FROM unnest(@note::text[]) AS r(note), unnest(@key::text[]) AS k(key)", false},
		{"SELECT r.*, cardinality(@key::text[]) FROM unnest(@note::text[]) AS r(note)", false},
	}
	for i, c := range cases {
		sql, params, err := rewrite(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		q := &Query{Name: fmt.Sprint("PadCase", i), SQL: sql, Params: params}
		cols := taggedFields(reflect.TypeFor[row]())
		if got := q.padded("note", cols); got != c.want {
			t.Errorf("%s: padded = %v, want %v", c.sql, got, c.want)
		}
		if q.padded("key", cols) {
			t.Errorf("%s: a string column padded", c.sql)
		}
	}
	if got := placeholderAt("$1, $10, $1::text, $11", 1); !reflect.DeepEqual(got, []int{0, 9}) {
		t.Errorf("placeholderAt = %v", got)
	}
}

// userRow is shaped like sinks.SVUser, for BenchmarkBulkArgs.
type userRow struct {
	UniqueID  string  `db:"unique_id"`
	UserID    *string `db:"user_id"`
	SecUID    *string `db:"sec_uid"`
	Nickname  *string `db:"nickname"`
	AvatarURL *string `db:"avatar_url"`
	Signature *string `db:"signature"`
	Verified  *bool   `db:"verified"`
	Private   *bool   `db:"private_account"`
	Profile   bool    `db:"profile_fetched"`
	Raw       []byte  `db:"raw"`
}

// BenchmarkBulkArgs compares building the arrays of a 50-row users upsert
// through reflection (PrepareBulk) with the hand-written parallel slices it
// replaced: the page commit's CPU cost of the change.
func BenchmarkBulkArgs(b *testing.B) {
	q := &Query{Name: "Users", SQL: "x", Params: []string{"run_id", "unique_id", "user_id", "sec_uid", "nickname",
		"avatar_url", "signature", "verified", "private_account", "profile_fetched", "raw"}}
	queries[q.Name] = q // benchmarks run alone: no test reads queries concurrently
	stmt := PrepareBulk[runArg, userRow](q.Name)
	delete(queries, q.Name)
	rows := make([]userRow, 50)
	for i := range rows {
		s, v := fmt.Sprint("user", i), true
		rows[i] = userRow{UniqueID: s, SecUID: &s, Nickname: &s, Verified: &v, Raw: []byte(`{"uniqueId": "` + s + `"}`)}
	}
	b.Run("prepared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = stmt.Args(runArg{1}, rows)
		}
	})
	b.Run("by-hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := len(rows)
			ids, userIDs, secUIDs := make([]string, n), make([]*string, n), make([]*string, n)
			nicks, avatars, sigs := make([]*string, n), make([]*string, n), make([]*string, n)
			verified, private, profile, raws := make([]*bool, n), make([]*bool, n), make([]bool, n), make([]string, n)
			for i, r := range rows {
				ids[i], userIDs[i], secUIDs[i] = r.UniqueID, r.UserID, r.SecUID
				nicks[i], avatars[i], sigs[i] = r.Nickname, r.AvatarURL, r.Signature
				verified[i], private[i], profile[i], raws[i] = r.Verified, r.Private, r.Profile, string(r.Raw)
			}
			_ = []any{int64(1), ids, userIDs, secUIDs, nicks, avatars, sigs, verified, private, profile, raws}
		}
	})
}

// reasonMatch is a comparison of a reason column's text: how a task ended
// is read from crawl.tasks.outcome (migration 00030), the reason is text
// for people. (stop_reason and drop_reason are other columns.)
var reasonMatch = regexp.MustCompile(`(?i)\breason\s*(not\s+)?(like|ilike|in|=|<>|!=|~|is\s+(not\s+)?distinct\s+from)\s*[('"]`)

// TestNoQueryMatchesReasons: no statement decides by a reason's text.
func TestNoQueryMatchesReasons(t *testing.T) {
	t.Parallel()
	comment := regexp.MustCompile(`--[^\n]*`)
	for name, q := range queries {
		if m := reasonMatch.FindString(comment.ReplaceAllString(q.SQL, "")); m != "" {
			t.Errorf("%s (%s) matches a reason's text (%q): read crawl.tasks.outcome", name, q.File, m)
		}
	}
	if reasonMatch.FindString(`WHERE t.reason LIKE 'fresh:%'`) == "" || reasonMatch.FindString(`AND u.reason <> 'page_limit'`) == "" ||
		reasonMatch.FindString(`coalesce(d.drop_reason, '') = ''`) != "" || reasonMatch.FindString(`SET reason = $3`) != "" {
		t.Error("reasonMatch does not tell a reason's comparison")
	}
}

// TestLockstepUnnest: a bulk statement's unnest in FROM is read in the
// select list; TestLockstepRows checks PostgreSQL gives the same rows.
func TestLockstepUnnest(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"INSERT INTO t (a, b) SELECT r.a, r.b FROM unnest($1::text[], $2::int[]) AS r(a, b) ON CONFLICT DO NOTHING",
			"INSERT INTO t (a, b) SELECT r.a, r.b FROM (SELECT unnest($1::text[]) AS a, unnest($2::int[]) AS b) AS r ON CONFLICT DO NOTHING"},
		{"SELECT 1 FROM\n  UNNEST($1::text[],\n    coalesce($2::int[], '{}'))\n  AS k(x,\n y) WHERE true",
			"SELECT 1 FROM (SELECT unnest($1::text[]) AS x, unnest(coalesce($2::int[], '{}')) AS y) AS k WHERE true"},
		// Left as written: not in FROM, or the aliases do not name each array.
		{"SELECT 1 FROM t JOIN unnest($1::text[], $2::text[]) AS k(a, b) ON true", ""},
		{"SELECT 1 FROM unnest($1::text[], $2::text[]) AS k(a)", ""},
		{"SELECT 1 FROM unnest($1::text[]) WITH ORDINALITY AS k(a, n)", ""},
	}
	for _, c := range cases {
		if c.want == "" {
			c.want = c.in
		}
		if got := lockstep(c.in); got != c.want {
			t.Errorf("lockstep(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}
