package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
)

// keyRow shows that a job-file key changes what a run does: the same job
// without and with it, run runs times each on a database in the migrated
// state and a new sandbox, asks the sandbox different requests.
type keyRow struct {
	key  string
	real bool // the scrapecreators preset (else the contract's)
	page int  // the sandbox's page size (0: 10)
	runs int  // 0: 1
	// between, when set, is SQL run on the database between runs (to age
	// the first night's walks).
	between string
	// without and with are the job's sections after api:.
	without, with string
}

const (
	svFollow        = "seeds: {shortvideo: {profiles: [a_f25_g25]}}\n"
	svSong          = "seeds: {shortvideo: {songs: [\"7012345678\"]}}\n"
	svTrending      = "seeds: {shortvideo: {trending_feed: true}}\n"
	svSearch        = "seeds: {shortvideo: {keyword_searches: [cats n5]}}\n"
	psPost          = "seeds: {photosocial: {posts: [\"https://www.photosocial.example/p/post_c25/\"]}}\n"
	psReels         = "seeds: {photosocial: {reels_searches: [surf n5]}}\n"
	svCreator       = "  preset: scrapecreators\nseeds: {shortvideo: {profiles: [creator_v25_c3]}}\n"
	svThread        = "  preset: scrapecreators\nseeds: {shortvideo: {profiles: [creator_v2_c25]}}\n"
	psStudio        = "  preset: scrapecreators\nseeds: {photosocial: {profiles: [studio_p90_c2_h2]}}\n"
	psThread        = "  preset: scrapecreators\nseeds: {photosocial: {profiles: [studio_p3_c25]}}\n"
	jobHeadContract = "name: x\napi:\n  base_url: http://127.0.0.1:9/api\n"
	adaptiveLimits  = "limits: {max_credits: 1000}\n"
	psMedia         = "  preset: scrapecreators\nseeds: {photosocial: {media: [\"https://www.instagram.com/studio_p3_c25/p/Dseed01_c25/\"]}}\n"
	psReelsReal     = "  preset: scrapecreators\nseeds: {photosocial: {reels_searches: [surf n5]}}\n"
	// agedWalks makes every content list walked 2 hours ago.
	agedWalks = "UPDATE crawl.content_walks SET walked_at = walked_at - interval '2 hours'"
)

func edgeRow(key string, real bool, seeds, without, with string) keyRow {
	return keyRow{key: key, real: real, without: seeds + "expand: {" + without + "}\n", with: seeds + "expand: {" + with + "}\n"}
}

func twice(r keyRow) keyRow { r.runs = 2; return r }

func paged(r keyRow, n int) keyRow { r.page = n; return r }

// aged runs r twice, the first night's content walks aged 2 hours
// between.
func aged(r keyRow) keyRow { r.runs, r.between = 2, agedWalks; return r }

// keyRows: a row for each key that applies.
var keyRows = []keyRow{
	// The edges: on or off.
	edgeRow("expand.followers", false, svFollow, "", "followers: {}"),
	edgeRow("expand.following", false, svFollow, "", "following: {}"),
	edgeRow("expand.follower_profiles", false, svFollow, "followers: {max_pages: 1}", "followers: {max_pages: 1}, follower_profiles: {}"),
	edgeRow("expand.song_videos", false, svSong, "", "song_videos: {}"),
	edgeRow("expand.video_authors", false, svTrending, "", "video_authors: {}"),
	edgeRow("expand.search_results", false, svSearch, "", "search_results: {}"),
	edgeRow("expand.reel_comments", false, psReels, "", "reel_comments: {}"),
	edgeRow("expand.reel_transcripts", false, psReels, "", "reel_transcripts: {}"),
	edgeRow("expand.videos", true, svCreator, "", "videos: {}"),
	edgeRow("expand.video_comments", true, svCreator, "videos: {}", "videos: {}, video_comments: {}"),
	edgeRow("expand.video_transcripts", true, svCreator, "videos: {}", "videos: {}, video_transcripts: {}"),
	edgeRow("expand.comment_replies", true, svCreator, "videos: {}, video_comments: {}", "videos: {}, video_comments: {}, comment_replies: {}"),
	edgeRow("expand.posts", true, psStudio, "", "posts: {}"),
	edgeRow("expand.reels", true, psStudio, "", "reels: {}"),
	edgeRow("expand.highlights", true, psStudio, "", "highlights: {}"),
	edgeRow("expand.highlight_details", true, psStudio, "highlights: {}", "highlights: {}, highlight_details: {}"),
	edgeRow("expand.post_comments", true, psStudio, "posts: {max_pages: 1}", "posts: {max_pages: 1}, post_comments: {}"),
	edgeRow("expand.post_transcripts", true, psStudio, "posts: {max_pages: 1}", "posts: {max_pages: 1}, post_transcripts: {}"),
	// max_pages, where lists take it.
	edgeRow("expand.followers.max_pages", false, svFollow, "followers: {}", "followers: {max_pages: 1}"),
	edgeRow("expand.following.max_pages", false, svFollow, "following: {}", "following: {max_pages: 1}"),
	paged(edgeRow("expand.song_videos.max_pages", false, svSong, "song_videos: {}", "song_videos: {max_pages: 1}"), 2),
	edgeRow("expand.comments.max_pages", false, psPost, "", "comments: {max_pages: 1}"),
	edgeRow("expand.videos.max_pages", true, svCreator, "videos: {}", "videos: {max_pages: 1}"),
	edgeRow("expand.video_comments.max_pages", true, svThread, "videos: {}, video_comments: {}", "videos: {}, video_comments: {max_pages: 1}"),
	paged(edgeRow("expand.comment_replies.max_pages", true, svThread, "videos: {}, video_comments: {max_pages: 1}, comment_replies: {}",
		"videos: {}, video_comments: {max_pages: 1}, comment_replies: {max_pages: 1}"), 1),
	edgeRow("expand.posts.max_pages", true, psStudio, "posts: {}", "posts: {max_pages: 1}"),
	edgeRow("expand.reels.max_pages", true, psStudio, "reels: {}", "reels: {max_pages: 1}"),
	// A post's comments along post_comments, from a profile's posts and
	// from a media seed (issue 32: it took expand.comments' limit).
	edgeRow("expand.post_comments.max_pages", true, psThread, "posts: {}, post_comments: {}", "posts: {}, post_comments: {max_pages: 1}"),
	edgeRow("expand.post_comments.max_pages", true, psMedia, "post_comments: {}", "post_comments: {max_pages: 1}"),
	// stop_at_seen: the second run stops at its first page of known entries.
	twice(edgeRow("expand.followers.stop_at_seen", false, svFollow, "followers: {}", "followers: {stop_at_seen: true}")),
	twice(edgeRow("expand.following.stop_at_seen", false, svFollow, "following: {}", "following: {stop_at_seen: true}")),
	twice(paged(edgeRow("expand.song_videos.stop_at_seen", false, svSong, "song_videos: {}", "song_videos: {stop_at_seen: true}"), 2)),
	twice(edgeRow("expand.comments.stop_at_seen", false, psPost, "comments: {max_pages: 5}", "comments: {max_pages: 5, stop_at_seen: true}")),
	twice(edgeRow("expand.videos.stop_at_seen", true, svCreator, "videos: {}", "videos: {stop_at_seen: true}")),
	twice(edgeRow("expand.posts.stop_at_seen", true, psStudio, "posts: {}", "posts: {stop_at_seen: true}")),
	twice(edgeRow("expand.reels.stop_at_seen", true, psStudio, "reels: {}", "reels: {stop_at_seen: true}")),
	// refresh_after: the second run skips what the first fetched.
	twice(edgeRow("expand.follower_profiles.refresh_after", false, svFollow, "followers: {max_pages: 1}, follower_profiles: {}",
		"followers: {max_pages: 1}, follower_profiles: {refresh_after: 24h}")),
	twice(edgeRow("expand.video_authors.refresh_after", false, svTrending, "video_authors: {}", "video_authors: {refresh_after: 24h}")),
	twice(edgeRow("expand.search_results.refresh_after", false, svSearch, "search_results: {}", "search_results: {refresh_after: 24h}")),
	twice(edgeRow("expand.reel_transcripts.refresh_after", false, psReels, "reel_transcripts: {}", "reel_transcripts: {refresh_after: 24h}")),
	twice(edgeRow("expand.video_transcripts.refresh_after", true, svCreator, "videos: {max_pages: 1}, video_transcripts: {}",
		"videos: {max_pages: 1}, video_transcripts: {refresh_after: 24h}")),
	twice(edgeRow("expand.highlight_details.refresh_after", true, psStudio, "highlights: {}, highlight_details: {}",
		"highlights: {}, highlight_details: {refresh_after: 24h}")),
	twice(edgeRow("expand.post_transcripts.refresh_after", true, psStudio, "posts: {max_pages: 1}, post_transcripts: {}",
		"posts: {max_pages: 1}, post_transcripts: {refresh_after: 24h}")),
	// Content lists (the real preset's pages carry their counters): on
	// an unchanged second night, changed_only false buys them again; with
	// the first night's walks 2 hours old, refresh_after 1h does.
	twice(edgeRow("expand.video_comments.changed_only", true, svCreator, "videos: {max_pages: 1}, video_comments: {}",
		"videos: {max_pages: 1}, video_comments: {changed_only: false}")),
	aged(edgeRow("expand.video_comments.refresh_after", true, svCreator, "videos: {max_pages: 1}, video_comments: {}",
		"videos: {max_pages: 1}, video_comments: {refresh_after: 1h}")),
	twice(edgeRow("expand.comment_replies.changed_only", true, svCreator, "videos: {max_pages: 1}, video_comments: {changed_only: false}, comment_replies: {}",
		"videos: {max_pages: 1}, video_comments: {changed_only: false}, comment_replies: {changed_only: false}")),
	aged(edgeRow("expand.comment_replies.refresh_after", true, svCreator, "videos: {max_pages: 1}, video_comments: {changed_only: false}, comment_replies: {}",
		"videos: {max_pages: 1}, video_comments: {changed_only: false}, comment_replies: {refresh_after: 1h}")),
	twice(edgeRow("expand.post_comments.changed_only", true, psStudio, "posts: {max_pages: 1}, post_comments: {}",
		"posts: {max_pages: 1}, post_comments: {changed_only: false}")),
	aged(edgeRow("expand.post_comments.refresh_after", true, psStudio, "posts: {max_pages: 1}, post_comments: {}",
		"posts: {max_pages: 1}, post_comments: {refresh_after: 1h}")),
	twice(edgeRow("expand.reel_comments.changed_only", true, psReelsReal, "reel_comments: {}", "reel_comments: {changed_only: false}")),
	aged(edgeRow("expand.reel_comments.refresh_after", true, psReelsReal, "reel_comments: {}", "reel_comments: {refresh_after: 1h}")),
	// Date windows (the sandbox's entry i of a creator's list was posted
	// i+1 days before 2025-01-01).
	edgeRow("expand.videos.posted_after", true, svCreator, "videos: {}", "videos: {posted_after: 2024-12-25}"),
	edgeRow("expand.videos.posted_before", true, svCreator, "videos: {}", "videos: {posted_before: 2024-12-25}"),
	edgeRow("expand.posts.posted_after", true, psStudio, "posts: {}", "posts: {posted_after: 2024-12-25}"),
	edgeRow("expand.posts.posted_before", true, psStudio, "posts: {}", "posts: {posted_before: 2024-12-25}"),
	edgeRow("expand.reels.posted_after", true, psStudio, "reels: {}", "reels: {posted_after: 2024-12-25}"),
	edgeRow("expand.reels.posted_before", true, psStudio, "reels: {}", "reels: {posted_before: 2024-12-25}"),
	// limits.
	{key: "limits.max_pages", without: svFollow + "expand: {followers: {}}\n", with: svFollow + "limits: {max_pages: 1}\nexpand: {followers: {}}\n"},
	{key: "limits.max_depth", without: svFollow + "limits: {max_depth: 1}\nexpand: {followers: {max_pages: 1}, follower_profiles: {}}\n",
		with: svFollow + "limits: {max_depth: 2}\nexpand: {followers: {max_pages: 1}, follower_profiles: {}}\n"},
	{key: "limits.max_credits", without: svFollow + "expand: {followers: {}}\n", with: svFollow + "limits: {max_credits: 2}\nexpand: {followers: {}}\n"},
	// reuse: the second run reuses the first.
	{key: "reuse.refresh_after", runs: 2, without: svFollow + "expand: {}\n", with: svFollow + "expand: {}\nreuse: {refresh_after: 24h}\n"},
	{key: "reuse.seeds", runs: 2, without: svFollow + "expand: {}\n", with: svFollow + "expand: {}\nreuse: {seeds: {shortvideo.profiles: 24h}}\n"},
	{key: "reuse.full_walk_every", runs: 2, without: svFollow + "expand: {followers: {stop_at_seen: true}}\n",
		with: svFollow + "expand: {followers: {stop_at_seen: true}}\nreuse: {full_walk_every: 1}\n"},
	{key: "reuse.full_walk_after", runs: 2, without: svFollow + "expand: {followers: {stop_at_seen: true}}\n",
		with: svFollow + "expand: {followers: {stop_at_seen: true}}\nreuse: {full_walk_after: 1ms}\n"},
	// Adaptive revisits: the second night's schedule. A floor no visit
	// reaches skips every known item; max_age or importance lift them.
	{key: "reuse.adaptive", runs: 2, without: svFollow + adaptiveLimits + "expand: {followers: {}}\n",
		with: svFollow + adaptiveLimits + "expand: {followers: {}}\nreuse: {adaptive: true}\n"},
	{key: "reuse.min_yield", runs: 2, without: svFollow + adaptiveLimits + "expand: {followers: {}}\nreuse: {adaptive: true}\n",
		with: svFollow + adaptiveLimits + "expand: {followers: {}}\nreuse: {adaptive: true, min_yield: 1000}\n"},
	{key: "reuse.max_age", runs: 2, without: svFollow + adaptiveLimits + "expand: {followers: {}}\nreuse: {adaptive: true, min_yield: 1000}\n",
		with: svFollow + adaptiveLimits + "expand: {followers: {}}\nreuse: {adaptive: true, min_yield: 1000, max_age: 1ms}\n"},
	// A visit's yield grows with the seconds between the runs: the floor
	// sits far from both (about 4e-7 at weight 1 and 0.3 at 1e6 a second
	// on), so the row holds on a fast machine and a loaded one.
	{key: "reuse.importance", runs: 2, without: svFollow + adaptiveLimits + "expand: {followers: {}}\nreuse: {adaptive: true, min_yield: 0.001}\n",
		with: svFollow + adaptiveLimits + "expand: {followers: {}}\nreuse: {adaptive: true, min_yield: 0.001, importance: {shortvideo.profiles: 1000000}}\n"},
	{key: "reuse.upstream_cache", real: true, runs: 2, without: svCreator + "expand: {}\n", with: svCreator + "expand: {}\nreuse: {upstream_cache: 1d}\n"},
}

// keysElsewhere are the keys whose effect needs what a run of a few
// requests cannot show (concurrency, a dead process, the clock, nights of
// history), with the test that shows it.
var keysElsewhere = map[string]string{
	"limits.workers":       "TestWorkersCapRequestsInFlight",
	"limits.lease_timeout": "TestBudgetStopOutlivesADeadProcessLease",
}

// keysUnshown are keys no test shows at a job's level yet, and why.
var keysUnshown = map[string]string{
	"reuse.counter_weight": "needs a profile whose graph counters move between nights: the bundle's sandbox answers one world day",
}

// documentedKeys are the expand, limits and reuse keys the job file
// accepts: every edge and every edge option, and the fields of limits and
// reuse.
func documentedKeys() []string {
	var keys []string
	for name := range (&kinds.Expand{}).Edges() {
		keys = append(keys, "expand."+name)
		for opt := range yamlstrict.Fields(reflect.TypeFor[kinds.Edge]()) {
			keys = append(keys, "expand."+name+"."+opt)
		}
	}
	for opt := range yamlstrict.Fields(reflect.TypeFor[jobfile.Limits]()) {
		keys = append(keys, "limits."+opt)
	}
	for opt := range yamlstrict.Fields(reflect.TypeFor[jobfile.Reuse]()) {
		keys = append(keys, "reuse."+opt)
	}
	slices.Sort(keys)
	return keys
}

// observed runs the job body r.runs times on a database in the migrated
// state (recycled by pkgDBs) and a new sandbox (r.between between runs) and
// returns the rows each run wrote and the requests the sandbox answered,
// sorted.
func observed(t *testing.T, r keyRow, body string) []string {
	cfg := sandbox.Config{PageSize: cmpOr(r.page, 10)}
	if r.real {
		cfg.Preset = sandbox.PresetScrapeCreators
	}
	pool, done := pkgDBs.get(t)
	defer done()
	b := setupOn(t, pool, cfg)
	if r.real {
		b.baseURL = b.srv.URL // the real service has no /api segment
	}
	job := b.job(t, body)
	var out []string
	for i := range max(r.runs, 1) {
		if i > 0 && r.between != "" {
			b.exec(t, r.between)
		}
		// A run its budget stops ends with an error: its rows are what it did.
		sum, err := pipeline.Run(context.Background(), b.options(job, testKey), job, b.start(t, job))
		if err != nil && !strings.Contains(err.Error(), "credit budget") {
			t.Fatalf("run: %v\n%s", err, body)
		}
		if sum == nil {
			sum = &pipeline.Summary{}
		}
		out = append(out, fmt.Sprintf("run %d: %d rows", i+1, sum.Rows))
	}
	for _, a := range b.sandbox.Arrivals(testKey) {
		out = append(out, fmt.Sprintf("%d %s?%s", a.Status, a.Endpoint, a.Query))
	}
	slices.Sort(out)
	return out
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// Every expand, limits and reuse key the job file accepts takes effect:
// a run with it asks the sandbox something else than a run without it; a
// key that applies nowhere is refused by key and line; the keys whose
// effect needs a process killed, the clock or nights of history name the
// test that shows it. Every key is documented in docs/jobfile.md (issue
// 32, point 5).
func TestEveryKeyTakesEffect(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs about a hundred small jobs")
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "jobfile.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, r := range keyRows {
		rows[r.key] = true
	}
	applies := map[string][]string{"max_pages": kinds.MaxPagesKeys(), "stop_at_seen": kinds.StopAtSeenKeys(),
		"refresh_after": slices.Concat(kinds.RefreshKeys(), kinds.ChangeKeys()), "changed_only": kinds.ChangeKeys(), "posted_after": kinds.WindowKeys(), "posted_before": kinds.WindowKeys()}
	for _, key := range documentedKeys() {
		parts := strings.Split(key, ".")
		if !strings.Contains(string(doc), parts[len(parts)-1]+":") {
			t.Errorf("%s: not in docs/jobfile.md", key)
		}
		if rows[key] || keysElsewhere[key] != "" {
			continue
		}
		if why := keysUnshown[key]; why != "" {
			t.Logf("%s: not shown here: %s", key, why)
			continue
		}
		// A key that turns no edge on is refused alone.
		if len(parts) == 2 && parts[0] == "expand" && !kinds.IsEdgeKey(parts[1]) {
			_, err := jobfile.Parse("j.yaml", []byte(jobHeadContract+psPost+"expand: {"+parts[1]+": {}}\n"))
			if err == nil || !strings.Contains(err.Error(), "j.yaml:5: "+key+": ") {
				t.Errorf("%s: accepted alone, where it sets nothing (%v)", key, err)
			}
			continue
		}
		// An edge option that applies to no list of the edge is refused.
		if len(parts) == 3 && parts[0] == "expand" && !slices.Contains(applies[parts[2]], parts[1]) {
			val := map[string]string{"max_pages": "2", "stop_at_seen": "true", "refresh_after": "1h", "changed_only": "false", "posted_after": "2025-01-01", "posted_before": "2025-01-01"}[parts[2]]
			text := fmt.Sprintf("name: x\napi:\n  preset: scrapecreators\nseeds: {shortvideo: {profiles: [a]}}\nexpand:\n  %s: {%s: %s}\n", parts[1], parts[2], val)
			_, err := jobfile.Parse("j.yaml", []byte(text))
			if err == nil || !strings.Contains(err.Error(), "j.yaml:6: "+key+": ") {
				t.Errorf("%s: accepted where it does nothing (%v)", key, err)
			}
			continue
		}
		t.Errorf("%s: accepted, and no row shows what it changes", key)
	}
	// A content edge's keys where they cannot apply: the contract's reels
	// carry no comment count; refresh_after bounds nothing when
	// changed_only false buys every list.
	for _, c := range []struct{ key, text string }{
		{"expand.reel_comments.changed_only", jobHeadContract + psReels + "expand: {reel_comments: {changed_only: false}}\n"},
		{"expand.reel_comments.refresh_after", jobHeadContract + psReels + "expand: {reel_comments: {refresh_after: 1h}}\n"},
		{"expand.video_comments.refresh_after", jobHeadContract + svCreator + "expand: {videos: {}, video_comments: {changed_only: false, refresh_after: 1h}}\n"},
	} {
		line := strings.Count(c.text, "\n")
		if _, err := jobfile.Parse("j.yaml", []byte(c.text)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("j.yaml:%d: %s: ", line, c.key)) {
			t.Errorf("%s: accepted where it cannot apply (%v)\n%s", c.key, err, c.text)
		}
	}
	for key, test := range keysElsewhere {
		if !testExists(t, test) {
			t.Errorf("%s: the test %s that shows it is gone", key, test)
		}
	}
	var mu sync.Mutex
	seen := map[string][]string{}
	look := func(t *testing.T, r keyRow, body string) []string {
		id := fmt.Sprintf("%v/%d/%d/%s/%s", r.real, r.page, r.runs, r.between, body)
		mu.Lock()
		got, ok := seen[id]
		mu.Unlock()
		if ok {
			return got
		}
		got = observed(t, r, body)
		mu.Lock()
		seen[id] = got
		mu.Unlock()
		return got
	}
	for _, r := range keyRows {
		t.Run(r.key, func(t *testing.T) {
			t.Parallel()
			without, with := look(t, r, r.without), look(t, r, r.with)
			if slices.Equal(without, with) {
				t.Errorf("%s changes nothing: the same %d requests with and without it\n%s", r.key, len(with), strings.Join(with, "\n"))
			}
		})
	}
}

// testExists reports whether a test function named name is declared in
// the module.
func testExists(t *testing.T, name string) bool {
	found := false
	_ = filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "func "+name) {
			found = true
		}
		return nil
	})
	return found
}
