package pipeline_test

import (
	"context"
	"testing"

	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
)

// Every parent -> child task pair that real runs create is one of the
// credit bound's rules (plan.go), so the bound follows the expansion code:
// the example job, and a job with video_authors on every video source.
func TestPlanRulesCoverRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
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
	rows, err := b.pool.Query(context.Background(), `
SELECT DISTINCT p.kind, c.kind, c.depth > p.depth
FROM crawl.tasks c JOIN crawl.tasks p ON p.id = c.parent_id ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var parent, child string
		var hop bool
		if err := rows.Scan(&parent, &child, &hop); err != nil {
			t.Fatal(err)
		}
		n++
		if !pipeline.BoundAllows(parent, child, hop) {
			t.Errorf("runs create %s -> %s (hop %v), which the credit bound does not count", parent, child, hop)
		}
	}
	if n < 8 {
		t.Errorf("only %d parent -> child pairs seen; the jobs should exercise every edge", n)
	}
}
