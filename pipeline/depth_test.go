package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/kinds"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/frontier"
)

// tasksAt lists the run's tasks as "kind key depth state", sorted.
func (b *bundle) tasksAt(t *testing.T) string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT kind || ' ' || key || ' ' || depth || ' ' || state FROM crawl.tasks ORDER BY kind, key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

// Depth does not depend on which worker found a task first. A profile
// fetched at depth 1 (at max_depth: its followers' profiles are not
// fetched) and then found at depth 0 by a walk still in progress ends as
// if it had been found at depth 0 first: expanded again from what it
// stored, without a request, its lists too, and its followers' profiles
// fetched. The tasks, their depths and the credits equal a run that found
// it at depth 0 first.
func TestDepthIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const body = "limits: {max_depth: 1}\nexpand: {followers: {}, following: {}, follower_profiles: {}}\nseeds: {shortvideo: {profiles: [det_f10_g4]}}\n"

	clean := setup(t)
	if sum := clean.run(t, clean.job(t, body)); sum.State != "done" {
		t.Fatalf("clean run: %+v", sum)
	}

	late := setup(t)
	job := late.job(t, body)
	runID := late.start(t, job)
	// Found first one hop away: fetched at depth 1, at max_depth.
	if _, err := late.pool.Exec(ctx, `UPDATE crawl.tasks SET depth = 1`); err != nil {
		t.Fatal(err)
	}
	if sum, err := pipeline.Run(ctx, late.options(job, testKey), job, runID); err != nil || sum.State != "done" {
		t.Fatalf("first pass: %v %+v", err, sum)
	}
	if n := late.count(t, `SELECT count(*) FROM crawl.tasks`); n != 3 {
		t.Fatalf("first pass made %d tasks, want the profile and its two lists", n)
	}
	bought := late.sandbox.Usage(testKey).Billable
	// Then found at depth 0, as a walk still in progress would.
	if err := frontier.AddTasks(ctx, late.pool, runID, []kinds.NewTask{{Kind: "shortvideo.profile", Key: "det_f10_g4", Depth: 0, Params: map[string]string{}}}); err != nil {
		t.Fatal(err)
	}
	if sum, err := pipeline.Run(ctx, late.options(job, testKey), job, runID); err != nil || sum.State != "done" {
		t.Fatalf("second pass: %v %+v", err, sum)
	}
	if got, want := late.tasksAt(t), clean.tasksAt(t); got != want {
		t.Errorf("tasks after the late find:\n%s\nwant (found at depth 0 first):\n%s", got, want)
	}
	u, c := late.sandbox.Usage(testKey), clean.sandbox.Usage(testKey)
	if u.Billable != c.Billable || u.ByEndpoint["/shortvideo/profile"].Billable-1 != 14 {
		t.Errorf("billable %d (first pass %d), clean run %d; want equal, with the 14 followers' and followees' profiles", u.Billable, bought, c.Billable)
	}
	if late.count(t, `SELECT count(*) FROM crawl.tasks WHERE reexpand`) != 0 {
		t.Error("a task is still marked to expand again")
	}
}

// Every kind whose tasks make children is expanded again from what its
// fetch stored, not only profiles and follow lists: a song (and its videos
// list), searches, a feed and a reels search fetched first at max_depth (their
// children dropped) and then found at depth 0 end with the tasks, depths
// and credits of a run that found them at depth 0 first. The song's videos
// list was fetched at depth 1 too: it is lowered with its song and expanded
// again in turn.
func TestDepthIsDeterministicForEveryExpandingKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, seeds, expand string
		kind                string // the seed's
	}{
		{"song", "shortvideo: {songs: [tune_v6]}", "song_videos: {}, video_authors: {}", "shortvideo.song"},
		{"top_search", "shortvideo: {top_searches: [mixed n8]}", "search_results: {}, video_authors: {}, song_videos: {}", "shortvideo.top_search"},
		{"keyword_search", "shortvideo: {keyword_searches: [dance n5]}", "search_results: {}", "shortvideo.keyword_search"},
		{"trending_feed", "shortvideo: {trending_feed: true}", "video_authors: {}", "shortvideo.trending_feed"},
		{"reels_search", "photosocial: {reels_searches: [surf n5]}", "reel_comments: {}, reel_transcripts: {}", "photosocial.reels_search"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			body := "limits: {max_depth: 1}\nexpand: {" + c.expand + "}\nseeds: {" + c.seeds + "}\n"

			// The clean run's database is read, then given back before the
			// late one takes one: a database a subtest, not two at once.
			pool, done := pkgDBs.get(t)
			clean := setupOn(t, pool, sandbox.Config{})
			if sum := clean.run(t, clean.job(t, body)); sum.State != "done" {
				done()
				t.Fatalf("clean run: %+v", sum)
			}
			all, cleanTasks := clean.count(t, `SELECT count(*) FROM crawl.tasks`), clean.tasksAt(t)
			done()

			late := setupWith(t, sandbox.Config{})
			job := late.job(t, body)
			runID := late.start(t, job)
			// Found first one hop away: fetched at max_depth.
			if _, err := late.pool.Exec(ctx, `UPDATE crawl.tasks SET depth = 1`); err != nil {
				t.Fatal(err)
			}
			if sum, err := pipeline.Run(ctx, late.options(job, testKey), job, runID); err != nil || sum.State != "done" {
				t.Fatalf("first pass: %v %+v", err, sum)
			}
			first := late.count(t, `SELECT count(*) FROM crawl.tasks`)
			if first >= all {
				t.Fatalf("first pass made %d tasks, the clean run %d: nothing left to expand again", first, all)
			}
			// Then found at depth 0, as a walk still in progress would.
			seed := kinds.NewTask{Kind: c.kind}
			var params []byte
			if err := late.pool.QueryRow(ctx, `SELECT key, params FROM crawl.tasks WHERE kind = $1`, c.kind).Scan(&seed.Key, &params); err != nil {
				t.Fatalf("seed task %s: %v", c.kind, err)
			}
			if err := json.Unmarshal(params, &seed.Params); err != nil {
				t.Fatal(err)
			}
			if err := frontier.AddTasks(ctx, late.pool, runID, []kinds.NewTask{seed}); err != nil {
				t.Fatal(err)
			}
			if sum, err := pipeline.Run(ctx, late.options(job, testKey), job, runID); err != nil || sum.State != "done" {
				t.Fatalf("second pass: %v %+v", err, sum)
			}
			if got, want := late.tasksAt(t), cleanTasks; got != want {
				t.Errorf("tasks after the late find:\n%s\nwant (found at depth 0 first):\n%s", got, want)
			}
			if u, cu := late.sandbox.Usage(testKey), clean.sandbox.Usage(testKey); u.Billable != cu.Billable {
				t.Errorf("billable %d, clean run %d; want equal", u.Billable, cu.Billable)
			}
			if late.count(t, `SELECT count(*) FROM crawl.tasks WHERE reexpand`) != 0 {
				t.Error("a task is still marked to expand again")
			}
		})
	}
}
