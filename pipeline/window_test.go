package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/plan"
)

// windowJob is a backfill of a creator's videos and a profile's posts and
// reels with what is said under them; %s is the window of each list.
// In the sandbox a creator's day-0 entry i was posted i+1 days before
// 2025-01-01 (world/content_time.go); its pages hold 10.
const windowJob = `
  preset: scrapecreators
limits: {workers: 4, max_pages: 4, max_depth: 1}
seeds:
  shortvideo: {profiles: [creator_v40_c2]}
  photosocial: {profiles: [studio_p30_c1]}
expand:
  videos: {%s}
  video_comments: {max_pages: 1}
  video_transcripts: {}
  posts: {%s}
  reels: {%s}
  post_comments: {max_pages: 1}
  post_transcripts: {}
`

// A date window buys the pages that reach into it and nothing past them:
// the walk ends on the page whose last entry is older than posted_after
// (done_window), entries outside the window are not stored, and nothing
// is bought under them (issue 32, point 3). Exact credits: without the
// window the same job buys 85 + 50.
func TestDateWindowBackfill(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                                   string
		videos, posts                          string
		credits                                int64
		videosKept, postsKept                  int64
		videoOutcome, postOutcome, reelOutcome string
	}{
		// 40 videos on 4 pages, 30 posts on 3 (a third of them reels: 10
		// on one page); a comments page and a transcript under each video,
		// a comments page under each post and a transcript under each reel.
		{name: "none", credits: 1 + 4 + 40 + 40 + 1 + 3 + 1 + 30 + 10, videosKept: 40, postsKept: 30,
			videoOutcome: "done_end", postOutcome: "done_end", reelOutcome: "done_end"},
		// Videos 3..14 (posted 2024-12-17 up to before 2024-12-29): the
		// walk ends on page 2 (its last entry, video 19, is older); posts
		// 0..11 (from 2024-12-20): page 2 holds 10 and 11; reels 0, 3, 6,
		// 9 of the only page.
		{name: "window", videos: "posted_after: 2024-12-17, posted_before: 2024-12-29", posts: "posted_after: 2024-12-20",
			credits: 1 + 2 + 12 + 12 + 1 + 2 + 1 + 12 + 4, videosKept: 12, postsKept: 12,
			videoOutcome: "done_window", postOutcome: "done_window", reelOutcome: "done_end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := realBundle(t, sandbox.Config{PageSize: 10})
			job := b.job(t, fmt.Sprintf(windowJob, c.videos, c.posts, c.posts))
			if sum := b.run(t, job); sum.State != "done" {
				t.Fatalf("run: %+v", sum)
			}
			b.noRefusals(t)
			if u := b.sandbox.Usage(testKey); u.Credits != c.credits {
				t.Errorf("credits %d, want %d", u.Credits, c.credits)
			}
			b.checkCounts(t, map[string]int64{
				`SELECT count(*) FROM shortvideo.profile_videos`: c.videosKept,
				`SELECT count(*) FROM shortvideo.videos`:         c.videosKept,
				`SELECT count(*) FROM photosocial.profile_posts`: c.postsKept,
				`SELECT count(*) FROM photosocial.posts`:         c.postsKept,
				// Nothing under an entry outside the window: every comments
				// and transcript task is of a stored video or post.
				`SELECT count(*) FROM crawl.tasks t WHERE t.kind IN ('shortvideo.video_comments', 'shortvideo.transcript')
				   AND NOT EXISTS (SELECT 1 FROM shortvideo.videos v WHERE t.key LIKE '%/video/' || v.video_id)`: 0,
				`SELECT count(*) FROM crawl.tasks t WHERE t.kind IN ('photosocial.comments', 'photosocial.transcript')
				   AND NOT EXISTS (SELECT 1 FROM photosocial.posts p WHERE t.key LIKE '%/' || p.code || '/')`: 0,
				`SELECT count(*) FROM crawl.tasks WHERE state <> 'done'`: 0,
			})
			for kind, want := range map[string]string{"shortvideo.profile_videos": c.videoOutcome,
				"photosocial.user_posts": c.postOutcome, "photosocial.user_reels": c.reelOutcome} {
				var got string
				if err := b.pool.QueryRow(context.Background(), `SELECT outcome::text FROM crawl.tasks WHERE kind = $1`, kind).Scan(&got); err != nil || got != want {
					t.Errorf("%s ended %s (%v), want %s", kind, got, err, want)
				}
			}
		})
	}
}

// crawler plan says what a window saves, from the lists an earlier run
// stored: where the walk ends against its page limit, and the entries
// outside it (issue 32, point 6).
func TestPlanSaysWhatAWindowSaves(t *testing.T) {
	t.Parallel()
	b := realBundle(t, sandbox.Config{PageSize: 10})
	if sum := b.run(t, b.job(t, fmt.Sprintf(windowJob, "", "", ""))); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	job := b.job(t, fmt.Sprintf(windowJob, "posted_after: 2024-12-17, posted_before: 2024-12-29", "posted_after: 2024-12-20", "posted_after: 2024-12-20"))
	tx, err := b.pool.BeginTx(context.Background(), pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	p, err := plan.Make(context.Background(), tx, job, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"window expand.videos posted_after 2024-12-17T00:00:00Z, posted_before 2024-12-29T00:00:00Z on shortvideo.profile_videos creator_v40_c2: 12 of the 40 entries stored are in it; its walk ends about page 2 (of 4 walked without it, 10 entries a page), and nothing is bought under the 28 outside it",
		"window expand.posts posted_after 2024-12-20T00:00:00Z on photosocial.user_posts studio_p30_c1: 12 of the 30 entries stored are in it; its walk ends about page 2 (of 3 walked without it, 10 entries a page), and nothing is bought under the 18 outside it",
		"window expand.reels posted_after 2024-12-20T00:00:00Z on photosocial.user_reels studio_p30_c1: 4 of the 10 entries stored are in it; its walk ends about page 1 (of 1 walked without it, 10 entries a page), and nothing is bought under the 6 outside it",
	}
	var got []string
	for _, line := range p.Reuse {
		if strings.HasPrefix(line, "window ") {
			got = append(got, line)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
