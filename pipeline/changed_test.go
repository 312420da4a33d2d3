package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/pipeline/budget"
	"github.com/socialcrawl/crawler/plan"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// changedJob harvests a creator posting 2 videos a day (12 at day 0, 6
// comments each, 0 to 3 replies each) and a photo-sharing account's 6
// posts (4 comments each, some with more replies than shown), with their
// comments and replies, the creators' lists with stop_at_seen; edges adds
// keys to the content edges.
func changedJob(videoComments, replies, postComments string) string {
	return fmt.Sprintf(`
  preset: scrapecreators
limits: {workers: 4, max_pages: 100}
comments: {include_replies: true}
seeds: {shortvideo: {profiles: [daily_v12_r2_c6]}, photosocial: {profiles: [studio_p6_c4]}}
expand:
  videos: {stop_at_seen: true}
  video_comments: {%s}
  comment_replies: {%s}
  posts: {stop_at_seen: true}
  post_comments: {%s}
`, videoComments, replies, postComments)
}

// The real service's content endpoints, as the sandbox counts them.
const (
	epVideos       = "/v3/tiktok/profile/videos"
	epVideoComms   = "/v1/tiktok/video/comments"
	epVideoReplies = "/v1/tiktok/video/comment/replies"
	epPosts        = "/v2/instagram/user/posts"
	epPostComms    = "/v2/instagram/post/comments"
	epPostReplies  = "/v1/instagram/post/comment/replies"
)

// contentNight is one run of job on a sandbox of world day day over the shared
// database: its run id and its billable requests per endpoint, and credits.
type contentNight struct {
	b       *bundle
	run     int64
	pages   map[string]int64
	credits int64
}

func runNight(t *testing.T, b *bundle, job string) contentNight {
	t.Helper()
	sum := b.run(t, b.job(t, job))
	if sum.State != "done" {
		t.Fatalf("run: %+v", sum)
	}
	b.noRefusals(t)
	u := b.sandbox.Usage(testKey)
	n := contentNight{b: b, run: sum.RunID, pages: map[string]int64{}, credits: u.Credits}
	for ep, e := range u.ByEndpoint {
		n.pages[ep] = e.Billable
	}
	return n
}

// want compares the night's billable pages of the content endpoints and
// its credits.
func (n contentNight) want(t *testing.T, what string, pages map[string]int64, credits int64) {
	t.Helper()
	for _, ep := range []string{epVideos, epVideoComms, epVideoReplies, epPosts, epPostComms, epPostReplies} {
		if n.pages[ep] != pages[ep] {
			t.Errorf("%s: %d pages of %s, want %d", what, n.pages[ep], ep, pages[ep])
		}
	}
	if n.credits != credits {
		t.Errorf("%s: %d credits, want %d (pages %v)", what, n.credits, credits, n.pages)
	}
}

// planOf is crawler plan's view of job now.
func (b *bundle) planOf(t *testing.T, job string) *plan.Plan {
	t.Helper()
	tx, err := b.pool.BeginTx(context.Background(), pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	p, err := plan.Make(context.Background(), tx, b.job(t, job), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (b *bundle) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// Content is bought again only when the counter on the parent page the run
// bought says it changed (issue 32): on an unchanged world the second night
// buys the profiles and the lists' first pages, nothing under them; a
// counter that moved buys exactly its list again, a fall also marks the
// comments no longer there as deleted (rows kept); new videos' comments
// are bought; refresh_after forces a walk of lists past it; changed_only
// false buys every list again, as before.
func TestContentBoughtOnlyWhenChanged(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	job := changedJob("", "", "")

	first := runNight(t, realAtDay(t, pool, 0, 10), job)
	b := first.b
	// 12 videos on 2 pages, a comments page each; a replies page per
	// comment with replies; 6 posts on a page, a comments page each at
	// 15 credits (replies shown); a replies page per comment with more
	// replies than shown.
	svReplies := b.count(t, `SELECT count(*) FROM shortvideo.comments WHERE parent_comment_id IS NULL AND reply_count > 0`)
	psReplies := b.count(t, `SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL AND child_comment_count > 3`)
	// A post comment's replies, 10 a page.
	psReplyPages := b.count(t, `SELECT sum(ceil(child_comment_count / 10.0))::bigint FROM photosocial.comments WHERE parent_comment_id IS NULL AND child_comment_count > 3`)
	if svReplies == 0 || psReplies == 0 || psReplyPages == psReplies {
		t.Fatalf("%d video comments and %d post comments with replies to walk (%d pages): the test shows nothing", svReplies, psReplies, psReplyPages)
	}
	first.want(t, "night 1", map[string]int64{epVideos: 2, epVideoComms: 12, epVideoReplies: svReplies, epPosts: 1, epPostComms: 6, epPostReplies: psReplyPages},
		2+2+12+svReplies+1+6*15+psReplyPages)
	if n := b.count(t, `SELECT count(*) FROM crawl.content_walks WHERE count IS NOT NULL`); n != 12+svReplies+6+psReplies {
		t.Errorf("%d content walks recorded with their counter, want %d", n, 12+svReplies+6+psReplies)
	}

	// crawler plan after night 1 expects the content lists it walked to
	// cost nothing tonight (that run found no counter moving: none was
	// known), and the rest what night 1 spent: 2 profiles, 3 list pages
	// (stop_at_seen's saving is not estimated).
	if p := b.planOf(t, job); p.Estimate != 2+3 || len(p.Content) != 4 {
		t.Errorf("plan after night 1: estimate %d, %d content kinds; want 5 and 4 (%v)", p.Estimate, len(p.Content), p.Reuse)
	}

	// Night 2, nothing changed: the profiles and the lists' first pages.
	second := runNight(t, realAtDay(t, pool, 0, 10), job)
	second.want(t, "night 2 (unchanged)", map[string]int64{epVideos: 1, epPosts: 1}, 2+1+1)
	// The lists skipped: the 10 videos of the page walked, the 6 posts,
	// and the replies lists their stored comments lead to.
	pageReplies2 := b.count(t, `SELECT count(*) FROM shortvideo.comments c JOIN crawl.tasks l ON l.run_id = $1 AND l.kind = 'shortvideo.video_comments'
		AND c.video_id = regexp_replace(l.key, '.*/video/([0-9]+).*', '\1') WHERE c.parent_comment_id IS NULL AND c.reply_count > 0`, second.run)
	if n := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND outcome = 'skipped_unchanged' AND reason LIKE 'unchanged: counter as at its last walk: %'`, second.run); n != 10+6+pageReplies2+psReplies {
		t.Errorf("night 2: %d lists skipped unchanged, want %d", n, 10+6+pageReplies2+psReplies)
	}
	if n := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND state <> 'skipped' AND kind IN ('shortvideo.comment_replies', 'photosocial.comment_replies')`, second.run); n != 0 {
		t.Errorf("night 2: %d replies lists not skipped", n)
	}
	if n := b.count(t, `SELECT coalesce(sum(credits_saved), 0) FROM crawl.tasks WHERE run_id = $1 AND outcome = 'skipped_unchanged'`, second.run); n != 10+6*15+pageReplies2+psReplyPages {
		t.Errorf("night 2: %d credits saved by unchanged lists, want %d", n, 10+6*15+pageReplies2+psReplyPages)
	}

	// After night 2 the plan expects what it cost: no list moved.
	if p := b.planOf(t, job); p.Estimate != 4 {
		t.Errorf("plan after night 2: estimate %d, want 4 (%v)", p.Estimate, p.Reuse)
	}

	// Night 3: one video's counter rose since its walk (its walk saw one
	// comment less): exactly that list is bought again; its comments'
	// replies, counters unchanged, are not.
	var rose string
	if err := pool.QueryRow(context.Background(), `SELECT key FROM crawl.tasks WHERE run_id = $1 AND outcome = 'skipped_unchanged'
		AND kind = 'shortvideo.video_comments' ORDER BY key LIMIT 1`, second.run).Scan(&rose); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `UPDATE crawl.content_walks SET count = count - 1 WHERE kind = 'shortvideo.video_comments' AND key = $1`, rose)
	third := runNight(t, realAtDay(t, pool, 0, 10), job)
	third.want(t, "night 3 (a rise)", map[string]int64{epVideos: 1, epVideoComms: 1, epPosts: 1}, 2+1+1+1)
	if n := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND kind = 'shortvideo.video_comments' AND state = 'done' AND key = $2`, third.run, rose); n != 1 {
		t.Errorf("night 3: the list whose counter moved was not the one walked")
	}

	// Night 4: another video's counter fell: its list is walked to its end
	// and the stored comment it no longer holds is marked deleted by this
	// night, its row kept; the others are not.
	var fell string
	if err := pool.QueryRow(context.Background(), `SELECT key FROM crawl.tasks WHERE run_id = $1 AND outcome = 'skipped_unchanged'
		AND kind = 'shortvideo.video_comments' AND key <> $2 ORDER BY key LIMIT 1`, second.run, rose).Scan(&fell); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `UPDATE crawl.content_walks SET count = count + 1 WHERE kind = 'shortvideo.video_comments' AND key = $1`, fell)
	b.exec(t, `INSERT INTO shortvideo.comments (comment_id, video_id, text, raw, first_seen_run, last_seen_run)
		SELECT 'gone1', video_id, 'deleted since', '{}', $2, $2 FROM shortvideo.comments
		WHERE video_id = regexp_replace($1, '.*/video/([0-9]+).*', '\1') LIMIT 1`, fell, first.run)
	fourth := runNight(t, realAtDay(t, pool, 0, 10), job)
	fourth.want(t, "night 4 (a fall)", map[string]int64{epVideos: 1, epVideoComms: 1, epPosts: 1}, 2+1+1+1)
	b.checkCounts(t, map[string]int64{
		fmt.Sprintf(`SELECT count(*) FROM shortvideo.comments WHERE comment_id = 'gone1' AND deleted_run = %d`, fourth.run): 1,
		`SELECT count(*) FROM shortvideo.comments WHERE deleted_run IS NOT NULL`:                                            1,
		`SELECT count(*) FROM photosocial.comments WHERE deleted_run IS NOT NULL`:                                           0,
	})

	// Night 5, a day later: 2 new videos at the head of the list; their
	// comments and replies are bought, nothing else under the lists.
	fifth := runNight(t, realAtDay(t, pool, 1, 10), job)
	newReplies := b.count(t, `SELECT count(*) FROM shortvideo.comments WHERE parent_comment_id IS NULL AND reply_count > 0 AND first_seen_run = $1`, fifth.run)
	fifth.want(t, "night 5 (2 new videos)", map[string]int64{epVideos: 2, epVideoComms: 2, epVideoReplies: newReplies, epPosts: 1},
		2+2+2+newReplies+1)
	if n := b.count(t, `SELECT count(*) FROM shortvideo.comments WHERE first_seen_run = $1 AND parent_comment_id IS NULL`, fifth.run); n != 2*6 {
		t.Errorf("night 5: %d new comments stored, want 12", n)
	}

	// Night 6: video_comments' refresh_after has passed since every walk:
	// the 10 videos of the page walked are bought again, not their
	// comments' replies (no refresh_after), nor the posts' comments.
	b.exec(t, `UPDATE crawl.content_walks SET walked_at = walked_at - interval '2 hours'`)
	sixth := runNight(t, realAtDay(t, pool, 1, 10), changedJob("refresh_after: 1h", "", ""))
	sixth.want(t, "night 6 (refresh_after)", map[string]int64{epVideos: 1, epVideoComms: 10, epPosts: 1}, 2+1+10+1)

	// Night 7, changed_only false: every list under the pages walked is
	// bought again, as before the rule: night 1's cost for those lists.
	seventh := runNight(t, realAtDay(t, pool, 1, 10), changedJob("changed_only: false", "changed_only: false", "changed_only: false"))
	pageReplies := b.count(t, `SELECT count(*) FROM shortvideo.comments c JOIN crawl.tasks l ON l.run_id = $1 AND l.kind = 'shortvideo.video_comments'
		AND c.video_id = regexp_replace(l.key, '.*/video/([0-9]+).*', '\1') WHERE c.parent_comment_id IS NULL AND c.reply_count > 0`, seventh.run)
	seventh.want(t, "night 7 (changed_only: false)", map[string]int64{epVideos: 1, epVideoComms: 10, epVideoReplies: pageReplies,
		epPosts: 1, epPostComms: 6, epPostReplies: psReplyPages}, 2+1+10+pageReplies+1+6*15+psReplyPages)
	if n := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND outcome = 'skipped_unchanged'`, seventh.run); n != 0 {
		t.Errorf("night 7: %d lists skipped unchanged with changed_only false", n)
	}
}

// Under a binding budget at the real service's prices (a post's comments
// with replies, 15 credits a page) and two processes a night, the content
// a night could not afford is bought on the following nights and nothing
// is bought twice: the lists walked are skipped as unchanged, the replies
// lists of a walked comments list that the budget cut off are bought from
// the stored comments, until the whole of it is stored. max_credits 18:
// the profile, the posts page and one comments list (15), then a few of
// its replies lists; the rest of them wait for the next night (without the
// expansion of a skipped list from its stored comments, they were never
// bought).
func TestContentUnderABindingBudget(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	const maxCredits = 18
	job := `
  preset: scrapecreators
limits: {workers: 2, max_pages: 100, max_credits: 18}
comments: {include_replies: true}
seeds: {photosocial: {profiles: [studio_p6_c4]}}
expand: {posts: {}, post_comments: {}, comment_replies: {}}
`
	bought := map[string]int{}
	pages := map[string]int64{}
	nights := 0
	for ; nights < 20; nights++ {
		b := realAtDay(t, pool, 0, 20)
		j := b.job(t, job)
		runID := b.start(t, j)
		errs := make(chan error, 2)
		for i := range 2 {
			go func() {
				opts := b.options(j, testKey)
				opts.Owner = fmt.Sprintf("proc%d", i)
				_, err := pipeline.Run(context.Background(), opts, j, runID)
				errs <- err
			}()
		}
		stopped := false
		for range 2 {
			switch err := <-errs; {
			case errors.Is(err, budget.ErrExhausted):
				stopped = true
			case err != nil:
				t.Fatalf("night %d: %v", nights+1, err)
			}
		}
		b.noRefusals(t)
		u := b.sandbox.Usage(testKey)
		if u.Credits > maxCredits {
			t.Errorf("night %d: %d credits, over max_credits %d", nights+1, u.Credits, maxCredits)
		}
		for ep, e := range u.ByEndpoint {
			pages[ep] += e.Billable
		}
		for _, a := range b.sandbox.Arrivals(testKey) {
			if a.Status == 200 && (a.Endpoint == epPostComms || a.Endpoint == epPostReplies) {
				if bought[a.Endpoint+"?"+a.Query]++; bought[a.Endpoint+"?"+a.Query] == 2 {
					t.Errorf("night %d bought again %s?%s", nights+1, a.Endpoint, a.Query)
				}
			}
		}
		if !stopped {
			break
		}
	}
	if nights == 0 || nights == 20 {
		t.Fatalf("%d nights stopped by the budget: want some, then one that ends", nights)
	}
	b := &bundle{pool: pool}
	replies := b.count(t, `SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL AND child_comment_count > 3`)
	b.checkCounts(t, map[string]int64{
		// Every comment and every reply each comment says it has.
		`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL`: 6 * 4,
		`SELECT sum(child_comment_count) - (SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NOT NULL)
		   FROM photosocial.comments WHERE parent_comment_id IS NULL`: 0,
		`SELECT count(*) FROM crawl.content_walks`: 6 + replies,
	})
	if pages[epPostComms] != 6 || pages[epPostReplies] != replies {
		t.Errorf("over %d nights: %d comments pages and %d replies pages, want 6 and %d (each list once)", nights+1, pages[epPostComms], pages[epPostReplies], replies)
	}
	t.Logf("%d nights at max_credits %d: %v", nights+1, maxCredits, pages)
}

// Older videos' counters (docs/revisit.md, "Content lists"): a creator's
// list cut by stop_at_seen shows only its newest videos' counters; its
// full walks (reuse.full_walk_every) show every video's, a credit a page,
// and buy the comments of the older videos whose counter moved, only
// those.
func TestOlderCountersOnFullWalks(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	job := `
  preset: scrapecreators
limits: {workers: 4, max_pages: 100}
reuse: {full_walk_every: 2}
seeds: {shortvideo: {profiles: [old_v12_c6]}}
expand: {videos: {stop_at_seen: true}, video_comments: {}}
`
	first := runNight(t, realAtDay(t, pool, 0, 10), job)
	first.want(t, "night 1", map[string]int64{epVideos: 2, epVideoComms: 12}, 1+2+12)
	b := first.b
	// Every video got a comment since its walk.
	b.exec(t, `UPDATE crawl.content_walks SET count = count - 1 WHERE kind = 'shortvideo.video_comments'`)
	// Night 2 stops at the first page: the 2 older videos' counters are
	// not seen, only the 10 newest videos' comments are bought.
	second := runNight(t, realAtDay(t, pool, 0, 10), job)
	second.want(t, "night 2 (cut at the first page)", map[string]int64{epVideos: 1, epVideoComms: 10}, 1+1+10)
	// Night 3 walks the list whole (full_walk_every 2): every counter is
	// seen, and the 2 older videos' comments are bought, only those.
	third := runNight(t, realAtDay(t, pool, 0, 10), job)
	third.want(t, "night 3 (a full walk)", map[string]int64{epVideos: 2, epVideoComms: 2}, 1+2+2)
}

// readmeJob is the README's first job ("# real.yaml"), pointed at base,
// each pair of replace (old, new) replacing a line's text of it.
func readmeJob(t *testing.T, base string, replace ...string) *jobfile.Job {
	t.Helper()
	text, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(text), "```yaml\n# real.yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("README.md: no ```yaml block starting # real.yaml")
	}
	block = strings.Replace(block, "  preset: scrapecreators", "  preset: scrapecreators\n  base_url: "+base+"\n  max_retries: 1", 1)
	block = strings.Replace(block, "key_env: CRAWLER_API_KEY", "key_env: CRAWLER_TEST_KEY", 1)
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(block, replace[i]) {
			t.Fatalf("README.md's real.yaml has no %q", replace[i])
		}
		block = strings.Replace(block, replace[i], replace[i+1], 1)
	}
	job, err := jobfile.Parse("real.yaml", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	return job
}

// The README's first job as TestReadmeJobNights runs it: two smaller
// creators (60 videos at day 0, 3 and 2 more a day, 3 comments each, 0 to
// 3 replies each) for @nasa and natgeo's ~600, and a budget scaled to
// them, so the backlog still takes three nights.
var readmeSmaller = []string{
	`profiles: ["@nasa", natgeo]`, `profiles: ["@nasa_v60_r3_c3", natgeo_v60_r2_c3]`,
	"max_credits: 2000", "max_credits: 200",
}

// The README's first job on the sandbox's real preset, a night a world
// day: its first nights buy the creators' backlog within max_credits,
// then a night buys the lists' first pages and what is under the videos
// posted or commented since; no list is bought again with the counter of
// its last walk. The last night is also run with changed_only false on
// its content edges, from a copy of the same database (the state after
// the night before) at the same world day: it buys every comments list of
// the pages walked again. The README quotes the figures this logs.
func TestReadmeJobNights(t *testing.T) {
	t.Parallel()
	const nights = 6
	ctx := context.Background()
	pool, dbURL := pgtest.Pool(t)
	stopped := map[int]bool{} // changed_only nights the budget stopped, by day
	night := func(pool *pgxpool.Pool, day int64, policy string) int64 {
		t.Helper()
		b := realAtDay(t, pool, day, 0)
		job := readmeJob(t, b.baseURL, readmeSmaller...)
		if policy == "buy again" {
			off := false
			job.Expand.VideoComments.ChangedOnly = &off
			job.Expand.CommentReplies.ChangedOnly = &off
		}
		runID := b.start(t, job)
		_, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
		if err != nil && !errors.Is(err, budget.ErrExhausted) {
			t.Fatalf("%s, night %d: %v", policy, day+1, err)
		}
		b.noRefusals(t)
		u := b.sandbox.Usage(testKey)
		t.Logf("%s, night %d: %d credits (budget stop: %v): %v", policy, day+1, u.Credits, err != nil, u.ByEndpoint)
		if policy == "changed_only" {
			stopped[int(day)] = err != nil
			// No list bought again with the counter its last walk saw.
			if n := b.count(t, `SELECT count(*) FROM crawl.tasks t WHERE t.run_id = $1 AND t.state = 'done'
				AND t.kind IN ('shortvideo.video_comments', 'shortvideo.comment_replies')
				AND (SELECT p.params->>'count' FROM crawl.tasks p WHERE p.kind = t.kind AND p.key = t.key AND p.run_id < t.run_id
				     AND p.state = 'done' ORDER BY p.run_id DESC LIMIT 1) = t.params->>'count'`, runID); n != 0 {
				t.Errorf("night %d bought %d lists again whose counter had not moved", day+1, n)
			}
		}
		return u.Credits
	}
	var c []int64
	for day := range int64(nights - 1) {
		c = append(c, night(pool, day, "changed_only"))
	}
	// The last night twice from the same state: as is, and buying again.
	pool.Close()
	again := connectPool(t, pgtest.Clone(t, dbURL))
	c = append(c, night(connectPool(t, dbURL), nights-1, "changed_only"))
	a := night(again, nights-1, "buy again")
	t.Logf("credits a night: changed_only %v; night %d buying again: %d", c, nights, a)
	// The backlog takes the first nights' budgets; once it is stored (the
	// last two nights end under budget), a night costs a fraction of
	// buying the lists again.
	if !stopped[0] || !stopped[1] {
		t.Errorf("nights 1 and 2 (%d and %d credits) ended under their budget of 200: no backlog", c[0], c[1])
	}
	if n := nights - 1; stopped[n-1] || stopped[n] || 3*c[n] > a {
		t.Errorf("nights %d and %d: %d and %d credits with changed_only, %d buying again: want under budget and under a third",
			n, n+1, c[n-1], c[n], a)
	}
}

// connectPool is a pool on the database at url, closed when the test ends.
func connectPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// contentAtDay is a bundle on the sandbox's content world (real preset)
// at world day day, pages of pageSize, over pool.
func contentAtDay(t *testing.T, pool *pgxpool.Pool, day int64, pageSize int) *bundle {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}, Preset: sandbox.PresetScrapeCreators, Churn: sandbox.ChurnContent,
		WorldTime: day, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	return &bundle{pool: pool, sandbox: sb, srv: srv, baseURL: srv.URL}
}

// A new reply under an old comment is captured (issue 32), and the
// comments list is read only down to the page that explains its
// counter's rise: the video's comment count counts replies, as the
// platforms display it, so it moves; its comments list is walked down to
// the page holding the last comment whose reply count moved (the rise
// explained: pages past it are not bought), and those replies lists, only
// they, are bought down to their new replies. reuse.full_walk_every 1
// walks every list whole, as before. Found in the sandbox's content
// world: a creator whose only change on a day is new replies under
// comments older than that day, one of them on a comments page before
// the list's last, and one replies list gaining fewer replies than it
// holds (fails when the walks go on to the end).
func TestReplyUnderOldCommentBought(t *testing.T) {
	t.Parallel()
	const pageSize = 2
	pages := func(n int64) int64 { return max(1, (n+pageSize-1)/pageSize) }
	var (
		h                           string
		day                         int64
		d                           sandbox.ContentDiff
		commentPages, wholeComments int64
		replyPages, wholeReplies    int64
		newReplies                  []string
	)
	for i := 0; h == "" && i < 400; i++ {
		cand := fmt.Sprintf("ro%d_v2_c5", i)
		for k := int64(1); k <= 3 && h == ""; k++ {
			c, err := sandbox.CreatorContentChanges(sandbox.ChurnContent, cand, k-1, k)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.NewVideos) != 0 || c.NewComments != 0 || c.Deleted != 0 || c.NewReplies == 0 {
				continue
			}
			before, _ := sandbox.ContentAt(sandbox.ChurnContent, k-1)
			truth, _ := sandbox.ContentAt(sandbox.ChurnContent, k)
			var cp, wc, rp, wr int64
			var nr []string
			for _, l := range c.Lists {
				switch l.Kind {
				case sandbox.ListVideoComments:
					if len(l.New)+len(l.Gone) != 0 || l.CountTo <= l.CountFrom {
						t.Fatalf("%s day %d: %+v: want a comments list moved by replies alone", cand, k, l)
					}
					// Down to the page of the last comment whose reply
					// count moved.
					now, was := truth.VideoComments(l.Video, cand), before.VideoComments(l.Video, cand)
					last := -1
					for j := range now {
						if now[j].ID != was[j].ID {
							t.Fatalf("%s day %d: the comments of %s moved", cand, k, l.Video)
						}
						if now[j].Replies != was[j].Replies {
							last = j
						}
					}
					cp += pages(int64(last + 1))
					wc += pages(int64(len(now)))
				case sandbox.ListCommentReplies:
					// New replies at the head; a list never walked (no
					// replies before) is walked whole.
					if l.CountFrom == 0 {
						rp += pages(l.CountTo)
					} else {
						rp += pages(l.CountTo - l.CountFrom)
					}
					wr += pages(l.CountTo)
					nr = append(nr, l.New...)
				}
			}
			if cp < wc && rp < wr {
				h, day, d = cand, k, c
				commentPages, wholeComments, replyPages, wholeReplies, newReplies = cp, wc, rp, wr, nr
			}
		}
	}
	if h == "" {
		t.Fatal("no creator whose only change on a day is new replies above its comments lists' last pages")
	}
	job := fmt.Sprintf(`
  preset: scrapecreators
limits: {workers: 2, max_pages: 100, max_depth: 1}
seeds: {shortvideo: {profiles: [%s]}}
expand: {videos: {stop_at_seen: true}, video_comments: {}, comment_replies: {}}
`, h)
	url := pgtest.DB(t)
	pool := connectPool(t, url)
	runNight(t, contentAtDay(t, pool, day-1, pageSize), job)
	pool.Close()
	whole := connectPool(t, pgtest.Clone(t, url))
	t.Logf("%s, day %d: comments pages %d (whole %d), replies pages %d (whole %d), new replies %v; %+v",
		h, day, commentPages, wholeComments, replyPages, wholeReplies, newReplies, d.Lists)
	for _, c := range []struct {
		name                    string
		pool                    *pgxpool.Pool
		job                     string
		comments, replies, cuts int64
	}{
		{"explained", connectPool(t, url), job, commentPages, replyPages, -1},
		{"full_walk_every: 1", whole, job + "reuse: {full_walk_every: 1}\n", wholeComments, wholeReplies, 0},
	} {
		second := runNight(t, contentAtDay(t, c.pool, day, pageSize), c.job)
		second.want(t, fmt.Sprintf("%s: %s, day %d (%d new replies)", c.name, h, day, len(newReplies)),
			map[string]int64{epVideos: 1, epVideoComms: c.comments, epVideoReplies: c.replies}, 1+1+c.comments+c.replies)
		b := second.b
		if n := b.count(t, `SELECT count(*) FROM shortvideo.comments WHERE comment_id = ANY($1) AND last_seen_run = $2`, newReplies, second.run); n != int64(len(newReplies)) {
			t.Errorf("%s: %d of the %d new replies %v stored by the second night", c.name, n, len(newReplies), newReplies)
		}
		cuts := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND outcome = 'done_stop_at_seen' AND reason LIKE 'explained: page % accounts for the counter''s rise of %'`, second.run)
		if c.cuts == 0 && cuts != 0 || c.cuts != 0 && cuts == 0 {
			t.Errorf("%s: %d walks cut where the rise was explained", c.name, cuts)
		}
		// Nothing marked deleted: a cut walk does not reach the end.
		if n := b.count(t, `SELECT count(*) FROM shortvideo.comments WHERE deleted_run IS NOT NULL`); n != 0 {
			t.Errorf("%s: %d comments marked deleted", c.name, n)
		}
	}
}

// A binding budget goes first where the content grew (issue 32 point 2;
// docs/revisit.md, "Content lists"): the content lists of a run are
// leased by their counter's move since their last walk per credit of
// that walk, not in the order they were found. A photo-sharing account's
// 6 posts (comments with replies, 15 credits a page): since night 1 each
// post gained a comment, the last one found (the highest key, leased
// last breadth first) 3; max_credits 17 buys the profile, the posts page
// and one comments list: the fastest-growing one, its 3 comments stored,
// the other 5 lists left for the next night. Fails when the lists are
// leased in the order found (the first post's comments bought, 1 new
// comment stored).
func TestContentBudgetGoesWhereCommentsGrew(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	job := func(budget string) string {
		return `
  preset: scrapecreators
limits: {workers: 1, max_pages: 100` + budget + `}
comments: {include_replies: true}
seeds: {photosocial: {profiles: [studio_p6_c4]}}
expand: {posts: {}, post_comments: {}, comment_replies: {}}
`
	}
	first := runNight(t, realAtDay(t, pool, 0, 20), job(""))
	b := first.b
	posts := walkedPostComments(t, pool, 6)
	// Since night 1, every post gained a comment, the last one found 3: as
	// if they were new, they are not stored and the counters of the walks
	// are lower by as many.
	grew := map[string]int64{}
	for i, p := range posts {
		grew[p] = 1
		if i == len(posts)-1 {
			grew[p] = 3
		}
		b.exec(t, `DELETE FROM photosocial.comments WHERE comment_key IN (SELECT comment_key FROM photosocial.comments
			WHERE post_url = $1 AND parent_comment_id IS NULL ORDER BY created_at DESC, comment_key LIMIT $2)`, p, grew[p])
		b.exec(t, `UPDATE crawl.content_walks SET count = count - $2 WHERE kind = 'photosocial.comments' AND key = $1`, p, grew[p])
	}
	fastest := posts[len(posts)-1]
	b = realAtDay(t, pool, 0, 20)
	j := b.job(t, job(", max_credits: 17"))
	runID := b.start(t, j)
	if _, err := pipeline.Run(context.Background(), b.options(j, testKey), j, runID); !errors.Is(err, budget.ErrExhausted) {
		t.Fatalf("night 2: %v, want a stop on the budget", err)
	}
	b.noRefusals(t)
	u := b.sandbox.Usage(testKey)
	second := contentNight{b: b, run: runID, pages: map[string]int64{}, credits: u.Credits}
	for ep, e := range u.ByEndpoint {
		second.pages[ep] = e.Billable
	}
	second.want(t, "night 2 at max_credits 17", map[string]int64{epPosts: 1, epPostComms: 1}, 1+1+15)
	b.checkCounts(t, map[string]int64{
		// The fastest-growing list, walked tonight, alone.
		fmt.Sprintf(`SELECT count(*) FROM crawl.content_walks WHERE kind = 'photosocial.comments' AND run_id = %d`, runID):                         1,
		fmt.Sprintf(`SELECT count(*) FROM crawl.content_walks WHERE kind = 'photosocial.comments' AND run_id = %d AND key = '%s'`, runID, fastest): 1,
		// Its 3 new comments stored; the other posts' 5 wait.
		fmt.Sprintf(`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL AND first_seen_run = %d`, runID):                              3,
		fmt.Sprintf(`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL AND first_seen_run = %d AND post_url = '%s'`, runID, fastest): 3,
		`SELECT count(*) FROM photosocial.comments WHERE parent_comment_id IS NULL`:                                                                          6*4 - 5,
	})
}

// A post's comments are read down to the page that explains its counter's
// rise too (issue 32): the photo-sharing post's comment_count counts the
// replies, as the app shows it; a new comment adds 1 and its
// child_comment_count, a stored comment the move of its
// child_comment_count. A profile's 4 posts of 12 comments each at day 0,
// pages of 3, on the sandbox's content world; the second night, at the
// first day where a post's rise is explained above its list's last page,
// buys of each post whose counter rose the comments pages down to its
// last change (whole when a comment was deleted or the counter fell), of
// a new post its whole list; what is stored of the posts is then the
// day's truth, the pages not read included: their comments and reply
// counts had not moved (fails when a rise walks the list whole).
func TestPostCommentsReadDownToTheirChange(t *testing.T) {
	t.Parallel()
	const pageSize = 3
	const handle = "pcy_p4_c12"
	pages := func(n int) int64 { return int64(max(1, (n+pageSize-1)/pageSize)) }
	job := `
  preset: scrapecreators
limits: {workers: 2, max_pages: 100, max_depth: 1}
seeds: {photosocial: {profiles: [` + handle + `]}}
expand: {posts: {}, post_comments: {}, comment_replies: {}}
`
	pool := testPool(t)
	runNight(t, contentAtDay(t, pool, 0, pageSize), job)
	posts := walkedPostComments(t, pool, 4)
	day0, err := sandbox.ContentAt(sandbox.ChurnContent, 0)
	if err != nil {
		t.Fatal(err)
	}
	counter := func(cs []sandbox.ContentComment) (n int64) {
		for _, c := range cs {
			n += 1 + c.Replies
		}
		return n
	}
	// want is the comments pages a night at day buys of the night-1
	// posts, and whether a walk is cut above its list's last page.
	want := func(day int64) (want int64, cut bool, newComments []string) {
		now, _ := sandbox.ContentAt(sandbox.ChurnContent, day)
		for _, p := range posts {
			code := sinks.PostCode(p)
			was, is := day0.PostComments(code), now.PostComments(code)
			before := map[string]int64{}
			for _, c := range was {
				before[c.ID] = c.Replies
			}
			gone := len(was)
			last := 0
			for i, c := range is {
				r, ok := before[c.ID]
				if ok {
					gone--
				} else {
					newComments = append(newComments, c.ID)
				}
				if !ok || r != c.Replies {
					last = i + 1
				}
			}
			switch from, to := counter(was), counter(is); {
			case to == from:
			case to < from || gone > 0:
				want += pages(len(is))
			default:
				want += pages(last)
				cut = cut || pages(last) < pages(len(is))
			}
		}
		return want, cut, newComments
	}
	day := int64(1)
	for ; day <= 10; day++ {
		if _, cut, _ := want(day); cut {
			break
		}
	}
	if day > 10 {
		t.Fatal("no day within 10 where a post's rise is explained above its list's last page: the test shows nothing")
	}
	second := runNight(t, contentAtDay(t, pool, day, pageSize), job)
	b := second.b
	comments, _, newComments := want(day)
	if len(newComments) > 0 {
		t.Logf("new comments: %v", newComments)
	}
	// A post new since night 1: its comments walked whole.
	now, _ := sandbox.ContentAt(sandbox.ChurnContent, day)
	rows, err := pool.Query(context.Background(), `SELECT key FROM crawl.content_walks WHERE kind = 'photosocial.comments' AND NOT key = ANY($1)`, posts)
	var added []string
	if err == nil {
		added, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range added {
		comments += pages(len(now.PostComments(sinks.PostCode(p))))
	}
	t.Logf("%s, day %d: %d comments pages (%d new posts)", handle, day, comments, len(added))
	if second.pages[epPostComms] != comments {
		t.Errorf("day %d: %d pages of %s, want %d", day, second.pages[epPostComms], epPostComms, comments)
	}
	// What is stored of night 1's posts is the day's truth, the pages not
	// read included: every comment there, none marked deleted that is
	// not, each with its reply count.
	for _, p := range posts {
		var got []string
		rows, err := pool.Query(context.Background(), `SELECT comment_id || ':' || coalesce(child_comment_count, 0) FROM photosocial.comments
			WHERE post_code = $1 AND parent_comment_id IS NULL AND (deleted_run IS NULL OR deleted_run <= last_seen_run) ORDER BY 1`, sinks.PostCode(p))
		if err == nil {
			got, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, c := range now.PostComments(sinks.PostCode(p)) {
			want = append(want, fmt.Sprintf("%s:%d", c.ID, c.Replies))
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("post %s as stored after day %d: %v, the sandbox lists %v", p, day, got, want)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM crawl.tasks WHERE run_id = $1 AND kind = 'photosocial.comments' AND outcome = 'done_stop_at_seen' AND reason LIKE 'explained: %'`, second.run); n == 0 {
		t.Error("no post's comments cut where the rise was explained")
	}
}

// crawler plan expects of tonight's content lists what the night buys,
// and what a walk cut short saves is its pages not read at the page's
// price in the job's dialect (issue 32): a post's comments with replies
// cost 15 credits a page at the real service's prices. A profile's 6
// posts of 4 comments each, 2 a page. Since night 1 a comment on one
// post's first page gained a reply, and another post's counter fell (its
// walk's counter raised by one). The plan made before night 2 expects
// the profile, the posts pages, the first post's first page (its rise
// explained there) and the second post's whole list: what night 2 bills
// (the plan's former estimate, a share of the lists' last walks, said
// 4); with full_walk_every 1, both lists whole. Night 2 records 15
// credits saved for the page the first walk did not read (1 before the
// fix) and 30 for each list skipped unchanged.
func TestContentNightPlannedAndSavedAtRealPrices(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	job := `
  preset: scrapecreators
limits: {workers: 2, max_pages: 100}
comments: {include_replies: true}
seeds: {photosocial: {profiles: [studio_p6_c4]}}
expand: {posts: {}, post_comments: {}}
`
	first := runNight(t, realAtDay(t, pool, 0, 2), job)
	b := first.b
	first.want(t, "night 1", map[string]int64{epPosts: 3, epPostComms: 6 * 2}, 1+3+6*2*15)
	posts := walkedPostComments(t, pool, 6)
	// A reply since under the comment the first post's first page shows
	// (the oldest: the sandbox lists a post's comments oldest first): its
	// stored reply count and its walk's counter lower by one.
	var id string
	if err := pool.QueryRow(context.Background(), `SELECT comment_id FROM photosocial.comments
		WHERE post_url = $1 AND parent_comment_id IS NULL AND child_comment_count > 0 ORDER BY created_at, comment_key LIMIT 1`, posts[0]).Scan(&id); err != nil {
		t.Fatal(err)
	}
	b.exec(t, `UPDATE photosocial.comments SET child_comment_count = child_comment_count - 1 WHERE comment_id = $1`, id)
	b.exec(t, `UPDATE crawl.content_walks SET count = count - 1 WHERE kind = 'photosocial.comments' AND key = $1`, posts[0])
	// A fall on the second post.
	b.exec(t, `UPDATE crawl.content_walks SET count = count + 1 WHERE kind = 'photosocial.comments' AND key = $1`, posts[1])

	const night2 = 1 + 3 + 15 + 2*15
	if p := b.planOf(t, job); p.Estimate != night2 || len(p.Content) != 1 || p.Content[0].Unchanged != 4 || p.Content[0].Rise != 1 || p.Content[0].Whole != 1 {
		t.Errorf("plan before night 2: estimate %d, want %d; content %+v", p.Estimate, night2, p.Content)
	}
	// With a full walk due at every walk, the rise too is walked whole.
	if p := b.planOf(t, job+"reuse: {full_walk_every: 1}\n"); p.Estimate != 1+3+2*2*15 {
		t.Errorf("plan with full_walk_every 1: estimate %d, want %d; content %+v", p.Estimate, 1+3+2*2*15, p.Content)
	}
	second := runNight(t, realAtDay(t, pool, 0, 2), job)
	second.want(t, "night 2", map[string]int64{epPosts: 3, epPostComms: 1 + 2}, night2)
	b.checkCounts(t, map[string]int64{
		fmt.Sprintf(`SELECT credits_saved FROM crawl.tasks WHERE run_id = %d AND outcome = 'done_stop_at_seen' AND key = '%s'`, second.run, posts[0]): 15,
		fmt.Sprintf(`SELECT sum(credits_saved) FROM crawl.tasks WHERE run_id = %d AND outcome = 'skipped_unchanged'`, second.run):                     4 * 2 * 15,
		fmt.Sprintf(`SELECT credits_saved FROM crawl.tasks WHERE run_id = %d AND outcome = 'done_end' AND key = '%s'`, second.run, posts[1]):          0,
		fmt.Sprintf(`SELECT credits_saved FROM crawl.run_ledger WHERE run_id = %d`, second.run):                                                       4*2*15 + 15,
		fmt.Sprintf(`SELECT credits_not_walked FROM crawl.run_ledger WHERE run_id = %d`, second.run):                                                  15,
	})
	// Every list's walk now saw its counter: the plan expects none bought.
	if p := b.planOf(t, job); p.Estimate != 1+3 {
		t.Errorf("plan after night 2: estimate %d, want 4; content %+v", p.Estimate, p.Content)
	}
}

// walkedPostComments is the keys of the posts whose comments a run walked
// (crawl.content_walks), which must be want.
func walkedPostComments(t *testing.T, pool *pgxpool.Pool, want int) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT key FROM crawl.content_walks WHERE kind = 'photosocial.comments' ORDER BY key`)
	var posts []string
	if err == nil {
		posts, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || len(posts) != want {
		t.Fatalf("night 1 walked the comments of %v, want %d: %v", posts, want, err)
	}
	return posts
}
