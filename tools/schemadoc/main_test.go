package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.MainMigrated(m) }

const docPath = "../../docs/schema.md"

// TestSchemaDocCurrent regenerates the data dictionary from a migrated test
// database and fails when docs/schema.md differs: a migration changed the
// schema or a comment without make schema-doc.
func TestSchemaDocCurrent(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	got, err := Generate(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("%v: run make schema-doc", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/schema.md is out of date: run make schema-doc\n%s", firstDiff(string(want), string(got)))
	}
}

// TestSchemaDocSeesChanges shows the comparison is not vacuous: a new
// column, or a changed comment, changes the generated dictionary.
func TestSchemaDocSeesChanges(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	before, err := Generate(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `ALTER TABLE crawl.runs ADD COLUMN note text;
		COMMENT ON COLUMN crawl.runs.note IS 'A note | with <markup>.';
		COMMENT ON VIEW shortvideo.users_latest IS 'Changed.'`); err != nil {
		t.Fatal(err)
	}
	after, err := Generate(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `note` | text | yes |  | A note \\| with &lt;markup&gt;. |\n",
		"### view `shortvideo.users_latest`\n\nChanged.\n",
	} {
		if bytes.Contains(before, []byte(want)) || !bytes.Contains(after, []byte(want)) {
			t.Errorf("dictionary does not follow the change to %q", want)
		}
	}
}

// firstDiff names the first line where the committed file and the
// regenerated one differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  docs/schema.md: " + wl + "\n  regenerated:    " + gl
		}
	}
	return ""
}
