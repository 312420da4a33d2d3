package pipeline_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// A post and a video given as their "Copy link" URLs (tracking query, m.
// host, a reel named /p/) are the tasks the owner's lists reach: each
// one's comments are bought once, the sandbox's counter says (issue 32,
// point 4).
func TestCopyLinkSeedsBoughtOnce(t *testing.T) {
	t.Parallel()
	w := world.New(10, 0, world.ChurnLinear)
	ps, err := w.Account("studio_p9_c3")
	if err != nil {
		t.Fatal(err)
	}
	posts, _ := w.CreatorPosts(ps, 0)
	sv, err := w.Account("creator_v3_c2")
	if err != nil {
		t.Fatal(err)
	}
	videos, _ := w.CreatorVideos(sv, 0)
	if posts[0].ProductType != "clips" || len(posts) != 9 || len(videos) != 3 {
		t.Fatalf("the world changed: post 0 %q, %d posts, %d videos", posts[0].ProductType, len(posts), len(videos))
	}
	b := realBundle(t, sandbox.Config{PageSize: 10})
	job := b.job(t, fmt.Sprintf(`  preset: scrapecreators
limits: {workers: 4, max_depth: 1}
seeds:
  shortvideo:
    profiles: [creator_v3_c2]
    videos: ["https://m.tiktok.com/@creator_v3_c2/video/%s/?is_from_webapp=1&sender_device=pc"]
  photosocial:
    profiles: [studio_p9_c3]
    media: ["https://instagram.com/p/%s?utm_source=ig_web_copy_link&igsh=MzRlODBiNWFlZA=="]
expand: {videos: {}, video_comments: {}, posts: {}, post_comments: {}}
`, videos[1].ID, posts[0].Code))
	if sum := b.run(t, job); sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.noRefusals(t)
	asked := map[string]int{}
	for _, a := range b.sandbox.Arrivals(testKey) {
		if a.Endpoint == "/v2/instagram/post/comments" || a.Endpoint == "/v1/tiktok/video/comments" {
			q, _ := url.ParseQuery(a.Query)
			asked[a.Endpoint+" "+q.Get("url")]++
		}
	}
	for u, n := range asked {
		if n != 1 {
			t.Errorf("%s: bought %d times", u, n)
		}
	}
	if len(asked) != 9+3 {
		t.Errorf("comments of %d posts and videos bought, want 12: %v", len(asked), asked)
	}
	b.checkCounts(t, map[string]int64{
		`SELECT count(*) FROM crawl.tasks WHERE kind IN ('photosocial.comments', 'shortvideo.video_comments')`: 12,
		`SELECT count(*) FROM crawl.tasks WHERE kind IN ('photosocial.post', 'shortvideo.video')`:              2,
	})
}
