package pipeline_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/jobfile"
)

// max_depth: 0 means the seeds and their own lists, no hop: a profile seed
// is fetched with its followers list, but not its followers' profiles (it
// used to become max_depth 1 and fetch them). A hop edge is then a key
// that does nothing, refused (issue 32, point 5).
func TestMaxDepthZeroIsSeedsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	text := fmt.Sprintf("name: test\napi:\n  base_url: %s\n  key_env: CRAWLER_TEST_KEY\nlimits: {max_depth: 0}\nexpand: {followers: {}, follower_profiles: {}}\nseeds: {shortvideo: {profiles: [zero_f3_g0]}}\n", b.baseURL)
	if _, err := jobfile.Parse("j.yaml", []byte(text)); err == nil || !strings.Contains(err.Error(), "j.yaml:6: expand.follower_profiles: does nothing in this job") ||
		!strings.Contains(err.Error(), "within limits.max_depth 0") {
		t.Errorf("follower_profiles at max_depth 0: %v", err)
	}
	job := b.job(t, "limits: {max_depth: 0}\nexpand: {followers: {}}\nseeds: {shortvideo: {profiles: [zero_f3_g0]}}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("summary %+v", sum)
	}
	got := strings.Join(b.tasks(t, sum.RunID), "\n")
	want := "shortvideo.profile zero_f3_g0 done done 1\nshortvideo.followers MS4wLjABAAAAemVyb19mM19nMA done end 1"
	if got != want {
		t.Errorf("tasks:\n%s\nwant:\n%s", got, want)
	}
	if u := b.sandbox.Usage(testKey); u.Billable != 2 {
		t.Errorf("billable %d, want 2", u.Billable)
	}
}
