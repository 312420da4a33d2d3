package pipeline_test

import (
	"strings"
	"testing"
)

// max_depth: 0 means the seeds and their own lists, no hop: a profile seed
// is fetched with its followers list, but not its followers' profiles (it
// used to become max_depth 1 and fetch them).
func TestMaxDepthZeroIsSeedsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	job := b.job(t, "limits: {max_depth: 0}\nexpand: {followers: {}, follower_profiles: {}}\nseeds: {shortvideo: {profiles: [zero_f3_g0]}}\n")
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
