package pipeline

import (
	"reflect"
	"testing"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
)

// TestSeedTasksPageLimits: a seed's list takes its page limit from its
// kind's edge, else limits.max_pages; an object has none.
func TestSeedTasksPageLimits(t *testing.T) {
	job, err := jobfile.Parse("j.yaml", []byte(`name: n
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
	got := job.SeedTasks()
	want := []kinds.NewTask{
		{Kind: kinds.KindSVFollowing, Key: "SECUID0001", Params: map[string]string{"handle": "secuid:SECUID0001"}, MaxPages: 3},
		{Kind: kinds.KindSVKeywordSearch, Key: "query=cats&region=us", Params: map[string]string{"query": "cats", "region": "US"}, MaxPages: 7},
		{Kind: kinds.KindSVTrending, Key: "trending"},
		{Kind: kinds.KindPSComments, Key: "https://x.example/p/1/", MaxPages: 2},
		{Kind: kinds.KindPSHighlight, Key: "42"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SeedTasks:\n got %+v\nwant %+v", got, want)
	}
}
