package kinds

import (
	"reflect"
	"slices"
	"testing"

	"github.com/socialcrawl/crawler/sources"
)

// TestEverySeedFieldHasItsKind: each leaf of Seeds is the seed list of
// exactly one registered kind, in the order of the fields, so a field
// added without its entry (or an entry without its field) fails here.
func TestEverySeedFieldHasItsKind(t *testing.T) {
	var leaves []string
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			name := f.Tag.Get("yaml")
			if name == "-" {
				continue // Files: the X_file keys, declared once for every list (seedfile.go)
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, path+"."+name)
				continue
			}
			leaves = append(leaves, path+"."+name)
		}
	}
	walk(reflect.TypeFor[Seeds](), "seeds")
	var keys []string
	for _, l := range seedLists {
		keys = append(keys, l.Key)
		if flag := l.typ.Kind() == reflect.Bool; flag == (fileLists[l.Key+FileSuffix] != nil) {
			t.Errorf("%s: a file key %v; want one for every list of values, none for a flag", l.Key, !flag)
		}
		if registry[l.kind.Name] != l.kind {
			t.Errorf("%s: its kind %s is not the registered one", l.Key, l.kind.Name)
		}
	}
	if !slices.Equal(keys, leaves) {
		t.Errorf("seed lists %v\nwant the fields of Seeds %v", keys, leaves)
	}
	if len(registry) != len(sources.Endpoints) {
		t.Errorf("%d kinds registered, want one per endpoint (%d)", len(registry), len(sources.Endpoints))
	}
	for _, e := range sources.Endpoints {
		if registry[e.Name] == nil {
			t.Errorf("endpoint %s has no kind", e.Name)
		}
	}
}

// TestEveryExpandingKindReexpands: a kind whose tasks follow an edge
// declares Reexpand, so a task of it found at a smaller depth after its
// fetch makes its children again (deterministic depth); a new edge from a
// kind without one fails here.
func TestEveryExpandingKindReexpands(t *testing.T) {
	reexpands := Reexpandable()
	for _, d := range edgeDecls {
		for _, from := range d.From {
			if !slices.Contains(reexpands, from) {
				t.Errorf("kind %s follows edge %s but declares no Reexpand", from, d.Key)
			}
		}
	}
}

// TestEveryFollowedEdgeIsDeclared: every child task a mapping makes, with
// every edge on, is declared by an edge from the mapped kind to the
// child's, so the plan's bound, max_depth and the refresh windows count it
// (a hashtag search's video authors were followed undeclared).
func TestEveryFollowedEdgeIsDeclared(t *testing.T) {
	t.Parallel()
	var on []string
	for key := range expandFields {
		on = append(on, key)
	}
	for _, c := range allMappingCases() {
		t.Run(c.name, func(t *testing.T) {
			res, err := mapFixture(t, testJob{on: on, maxPages: 5, preset: c.preset}, c.task, c.file)
			if err != nil {
				t.Fatal(err)
			}
			for _, child := range res.Children {
				if !slices.ContainsFunc(edgeDecls, func(d *edgeDecl) bool { return d.To == child.Kind && d.from(c.task.Kind) }) {
					t.Errorf("%s makes %s %s along no edge declared from it", c.task.Kind, child.Kind, child.Key)
				}
			}
		})
	}
}
