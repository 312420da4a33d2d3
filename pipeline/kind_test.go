package pipeline

import (
	"reflect"
	"slices"
	"testing"
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
		if registry[l.kind.Name] != l.kind {
			t.Errorf("%s: its kind %s is not the registered one", l.Key, l.kind.Name)
		}
	}
	if !slices.Equal(keys, leaves) {
		t.Errorf("seed lists %v\nwant the fields of Seeds %v", keys, leaves)
	}
	if len(registry) != 18 {
		t.Errorf("%d kinds registered, want 18", len(registry))
	}
}

// TestSeedTasksPageLimits: a seed's list takes its page limit from its
// kind's edge, else limits.max_pages; an object has none.
func TestSeedTasksPageLimits(t *testing.T) {
	job, err := ParseJob("j.yaml", []byte(`name: n
api: {base_url: "http://127.0.0.1:1/api"}
limits: {max_pages: 7}
expand: {following: {max_pages: 3}, comments: {max_pages: 2}}
seeds:
  shortvideo: {sec_uids: [SECUID0001], keyword_searches: [{query: cats, region: us}], trending_feed: true}
  photosocial: {posts: ["https://x.example/p/1/"], highlights: ["highlight:42"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := SeedTasks(job)
	want := []NewTask{
		{Kind: KindSVFollowing, Key: "SECUID0001", Params: map[string]string{"handle": "secuid:SECUID0001"}, MaxPages: 3},
		{Kind: KindSVKeywordSearch, Key: "query=cats&region=us", Params: map[string]string{"query": "cats", "region": "US"}, MaxPages: 7},
		{Kind: KindSVTrending, Key: "trending"},
		{Kind: KindPSComments, Key: "https://x.example/p/1/", MaxPages: 2},
		{Kind: KindPSHighlight, Key: "42"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SeedTasks:\n got %+v\nwant %+v", got, want)
	}
}
