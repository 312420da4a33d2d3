package pipeline_test

import (
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
)

// Every parent -> child task pair that real runs create is one of the
// credit bound's rules (plan.go), so the bound follows the expansion code:
// the example job, and a job with video_authors on every video source.
// Lists of 5 a page: the pairs are the same 13 as at the default 50 (946
// tasks then, 309 now), which this test need not buy.
func TestPlanRulesCoverRuns(t *testing.T) {
	t.Parallel()
	b := setupWith(t, sandbox.Config{PageSize: 5})
	example, err := jobfile.LoadWith("../jobs.example.yaml", jobfile.LoadOptions{BaseURL: b.baseURL})
	if err != nil {
		t.Fatal(err)
	}
	authors := b.job(t, `limits: {max_pages: 1, max_depth: 1}
seeds:
  shortvideo:
    keyword_searches: [dance n5]
    top_searches: [mixed x n8]
    songs: [s_v7]
    trending_feed: true
    popular_videos: true
expand: {video_authors: {}, song_videos: {}, search_results: {}}
`)
	for _, job := range []*jobfile.Job{example, authors} {
		b.run(t, job)
	}
	boundCoversRuns(t, b, 13)
}
