package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/sim"
)

// Workload 22: content nights on a changing world at equal budget (issue
// 32). M short-video creators of the sandbox's content world (the real
// preset, --churn content) are harvested as the README's first job does:
// their profiles, their videos (stop_at_seen), every video's comments and
// every comment's replies. Night 0 (world day 0) buys everything, C
// credits; its database is copied for every policy and budget. Then N
// changing nights (world days 1..N) and one unchanged night (day N
// again), each a new run on a new sandbox at that day, the database aged
// by a day before each. Policies: the crawler's default, the crawler told
// to buy every list again (changed_only: false), and an oracle simulated
// from the sandbox's truth (sandbox.ContentAt) that buys the creators'
// profiles and video lists down to their first known video, then only the
// comments and replies lists that changed since it last walked them: down
// to their first known entry when entries were only added, whole when
// some were deleted, greedily by changes per credit within the budget.
// At no budget a stricter reference is scored beside it, a realizable
// oracle: it knows which lists changed, but reads a comment's reply count
// only on the comments page that shows it, as a crawler must.
// Scored against the truth: credits (and how many went to lists that had
// not changed since the policy last bought them), new comments and
// replies captured, deleted comments marked.

// contentBuyAll is what the policy "buy every list again" adds to the
// job: changed_only off on the content edges (issue 32).
const contentBuyAll = ", changed_only: false"

const (
	contentJob      = "bench-content"
	contentPageSize = 10
	contentWorkers  = 2
)

type contentSizes struct {
	first, creators, videos, nights int       // creators cn<first>..
	shares                          []float64 // binding budgets, as shares of night 0
}

func (e *env) contentSizes() contentSizes {
	if e.cfg.Smoke {
		// cn01_v4 alone changes on days 1-2 (13 new comments, 30 new
		// replies, the deletion cn00..01 had), so every figure is
		// computed and every kind of change is crawled: 91 lists at day
		// 0 (cn00 added 74 more and no new kind of change).
		return contentSizes{first: 1, creators: 1, videos: 4, nights: 2, shares: []float64{0.1}}
	}
	return contentSizes{creators: 12, videos: 8, nights: 4, shares: []float64{0.1}}
}

// contentHandles are n creators cn<NN>_v<videos> from cn<first> (videos
// videos at day 0).
func contentHandles(first, n, videos int) []string {
	h := make([]string, n)
	for i := range h {
		h[i] = fmt.Sprintf("cn%02d_v%d", first+i, videos)
	}
	return h
}

// contentYAML is the job of a night; extra is appended to the
// video_comments and comment_replies edges; budget 0 is no max_credits.
func contentYAML(baseURL string, handles []string, budget int64, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\napi:\n  preset: scrapecreators\n  base_url: %s\n  key_env: CRAWLER_API_KEY\n", contentJob, baseURL)
	fmt.Fprintf(&b, "limits:\n  workers: %d\n  max_pages: 100\n  max_depth: 1\n", contentWorkers)
	if budget > 0 {
		fmt.Fprintf(&b, "  max_credits: %d\n", budget)
	}
	fmt.Fprintf(&b, "seeds:\n  shortvideo:\n    profiles: [%s]\n", strings.Join(handles, ", "))
	fmt.Fprintf(&b, "expand:\n  videos: {max_pages: 10, stop_at_seen: true}\n  video_comments: {max_pages: 100%s}\n  comment_replies: {max_pages: 100%s}\n", extra, extra)
	return b.String()
}

// contentTruth is the content under the creators at days 0..N: every
// comments list ("c/<video>") and replies list ("r/<video>/<comment>"),
// newest first.
type contentTruth struct {
	handles []string
	nights  int
	lists   []map[string][]string // by day
	videos  []map[string][]string // by day: handle -> its videos
	kind    map[string]string     // an entry new on days 1..N -> "comment" or "reply"
	gone    []goneEntry           // comments deleted on days 1..N
	// newComments and newReplies count kind's entries.
	newComments, newReplies int
}

// goneEntry is a comment deleted on day day from list list.
type goneEntry struct {
	id, list string
	day      int
}

func commentsKey(video string) string     { return "c/" + video }
func repliesKey(video, cid string) string { return "r/" + video + "/" + cid }
func contentIDs(cs []sandbox.ContentComment) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func loadContentTruth(handles []string, nights int) (*contentTruth, error) {
	t := &contentTruth{handles: handles, nights: nights, kind: map[string]string{}}
	for d := range nights + 1 {
		c, err := sandbox.ContentAt(sandbox.ChurnContent, int64(d))
		if err != nil {
			return nil, err
		}
		lists, videos := map[string][]string{}, map[string][]string{}
		for _, h := range handles {
			vs, err := c.CreatorVideos(h)
			if err != nil {
				return nil, err
			}
			for _, v := range vs {
				videos[h] = append(videos[h], v.ID)
				cs := c.VideoComments(v.ID, h)
				lists[commentsKey(v.ID)] = contentIDs(cs)
				for _, cm := range cs {
					if cm.Replies > 0 {
						lists[repliesKey(v.ID, cm.ID)] = contentIDs(c.CommentReplies(v.ID, h, cm.ID))
					}
				}
			}
		}
		t.lists, t.videos = append(t.lists, lists), append(t.videos, videos)
		if d == 0 {
			continue
		}
		for key, ids := range lists {
			before := t.lists[d-1][key]
			added, gone := diffList(before, ids)
			for _, id := range added {
				if _, ok := t.kind[id]; ok {
					continue
				}
				if strings.HasPrefix(key, "c/") {
					t.kind[id] = "comment"
					t.newComments++
				} else {
					t.kind[id] = "reply"
					t.newReplies++
				}
			}
			for _, id := range gone {
				t.gone = append(t.gone, goneEntry{id: id, list: key, day: d})
			}
		}
	}
	return t, nil
}

// diffList is the ids of to not in from, and of from not in to.
func diffList(from, to []string) (added, gone []string) {
	f, tt := map[string]bool{}, map[string]bool{}
	for _, id := range from {
		f[id] = true
	}
	for _, id := range to {
		tt[id] = true
		if !f[id] {
			added = append(added, id)
		}
	}
	for _, id := range from {
		if !tt[id] {
			gone = append(gone, id)
		}
	}
	return added, gone
}

// dayOf is the world day of night n: 1..N, then N again (the unchanged
// night).
func (t *contentTruth) dayOf(n int) int { return min(n, t.nights) }

// contentScore is what a policy did over the nights.
type contentScore struct {
	name string
	// credits of the changing nights and of the unchanged one; overhead
	// the credits on profiles and video lists (every night); unchanged
	// those of the changing nights on comments and replies lists that had
	// not changed since the policy last bought them (on the unchanged
	// night every list is unchanged).
	credits, quiet, overhead, unchanged int64
	comments, replies, deleted          int // new captured, deleted marked
}

func (s *contentScore) captured() int { return s.comments + s.replies }

// listOf is the list a content request reads ("" for anything else).
func listOf(endpoint, query string) string {
	q, err := url.ParseQuery(query)
	if err != nil {
		return ""
	}
	u, err := url.Parse(q.Get("url"))
	if err != nil {
		return ""
	}
	video := path.Base(u.Path)
	switch endpoint {
	case "/v1/tiktok/video/comments":
		return commentsKey(video)
	case "/v1/tiktok/video/comment/replies":
		return repliesKey(video, q.Get("comment_id"))
	}
	return ""
}

func runContent(ctx context.Context, e *env) (*outcome, error) {
	cs := e.contentSizes()
	handles := contentHandles(cs.first, cs.creators, cs.videos)
	out := &outcome{}
	truth, err := loadContentTruth(handles, cs.nights)
	if err != nil {
		return out, err
	}
	tmpl, err := e.freshDB(ctx, "ct0")
	if err != nil {
		return out, err
	}
	pool, err := e.pool(ctx, tmpl, contentWorkers)
	if err != nil {
		return out, err
	}
	_, full, _, err := contentNight(ctx, pool, 0, func(u string) string { return contentYAML(u, handles, 0, "") })
	pool.Close()
	if err != nil {
		return out, fmt.Errorf("night 0: %w", err)
	}
	buyAll := contentBuyAll
	budgets := []int64{0}
	for _, s := range cs.shares {
		budgets = append(budgets, int64(math.Round(s*float64(full))))
	}
	// Every policy at every budget starts from its own copy of night 0's
	// database and its own sandboxes. In smoke mode they run at once, as
	// pipelines waiting on round trips: the smoke test checks that the
	// figures are computed, and which lists a budget buys first may then
	// differ with the machine's load. A benchmark runs them one at a time.
	policies := []struct{ name, extra string }{{"default", ""}, {"buy every list again", buyAll}}
	scores := make([][]*contentScore, len(budgets))
	g, gctx := errgroup.WithContext(ctx)
	if !e.cfg.Smoke {
		g.SetLimit(1)
	}
	for i, budget := range budgets {
		scores[i] = make([]*contentScore, len(policies))
		for j, p := range policies {
			dsn, err := e.cloneDB(ctx, "ct", tmpl)
			if err != nil {
				return out, err
			}
			g.Go(func() error {
				s, err := e.contentPolicy(gctx, p.name, p.extra, dsn, truth, budget)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", budgetLabel(budget, full), p.name, err)
				}
				e.log.Info("content policy", "budget", budget, "policy", p.name, "credits", s.credits, "unchanged", s.unchanged, "captured", s.captured())
				scores[i][j] = s
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return out, err
	}
	for i, budget := range budgets {
		refs := []*contentScore{contentOracle(truth, budget)}
		if budget == 0 {
			refs = []*contentScore{contentOracle(truth, budget, true), refs[0]}
		}
		out.figures = append(out.figures, contentFigures(budgetLabel(budget, full), truth, budget, append(scores[i], refs...))...)
	}
	merged := "buy every list again = changed_only: false on video_comments and comment_replies"
	out.setup = fmt.Sprintf("%d short-video creators cn<NN>_v%d of the sandbox's content world (real preset, --churn content, page size %d): seeds = their profiles, "+
		"expand videos {max_pages: 10, stop_at_seen: true}, video_comments and comment_replies {max_pages: 100}, max_depth 1, %d workers, the pipeline in process. "+
		"Night 0 (world day 0) buys everything: C = %d credits, its database copied for every policy and budget. Then %d changing nights (world days 1..%d) and one unchanged night (day %d again), "+
		"each a new run on a new sandbox at that day, the database aged by a day before. Truth over days 1..%d: %d new comments, %d new replies, %d comments deleted. "+
		"Policies: the crawler's default; buy every list again (%s); an oracle simulated from sandbox.ContentAt (profiles and video lists down to the first known video each night, "+
		"then only the comments and replies lists changed since it last walked them: down to the first known entry when only added to, whole when some were deleted, greedily by changes per credit); "+
		"at no budget also a realizable oracle, a stricter reference (issue 32's oracle and aims unchanged): it knows which lists changed too, but reads a comment's reply count only on the comments page that shows it, as a crawler must, "+
		"so a comments list whose comments' reply counts moved is read down to the page of its last change (a new comment or a moved reply count), whole when some were deleted. "+
		"Budgets: none, and max_credits %s of C. Unchanged credits: comments and replies pages of lists identical to what they were when the policy last bought them. "+
		"A deleted comment is marked when the crawler marked it: deleted_run after its last_seen_run (a later walk of its list to the end no longer found it).",
		cs.creators, cs.videos, contentPageSize, contentWorkers, full, cs.nights, cs.nights, cs.nights, cs.nights, truth.newComments, truth.newReplies, len(truth.gone), merged, shares(cs.shares))
	return out, nil
}

// budgetLabel names a budget of the content workload (full: night 0's
// credits).
func budgetLabel(budget, full int64) string {
	if budget == 0 {
		return "no budget"
	}
	return fmt.Sprintf("budget %d (%.0f%% of night 0)", budget, 100*float64(budget)/float64(full))
}

// contentNight runs one night at world day of the content world: a new
// run of the job yaml makes, to its end. It returns the run, the credits
// billed and the sandbox's arrivals.
func contentNight(ctx context.Context, pool *pgxpool.Pool, day int64, yaml func(baseURL string) string) (runID, credits int64, arrivals []sandbox.Arrival, err error) {
	up, err := newUpstream(sandbox.Config{Preset: sandbox.PresetScrapeCreators, Churn: sandbox.ChurnContent, WorldTime: day, PageSize: contentPageSize}, false)
	if err != nil {
		return 0, 0, nil, err
	}
	defer up.close()
	job, err := jobfile.Parse(contentJob+".yaml", []byte(yaml(strings.TrimSuffix(up.url, "/api"))))
	if err != nil {
		return 0, 0, nil, err
	}
	runID, err = pipeline.Start(ctx, pool, job)
	if err != nil {
		return 0, 0, nil, err
	}
	sum, err := (&inProcess{pool: pool, job: job, runID: runID}).run(ctx)
	if se := (*pipeline.StopError)(nil); errors.As(err, &se) && strings.Contains(se.Err.Error(), "credit budget exhausted") {
		err = nil
	} else if err == nil && sum.State != "done" {
		err = fmt.Errorf("run %d ended %s: %s", runID, sum.State, sum.Reason)
	}
	if err != nil {
		return runID, 0, nil, err
	}
	return runID, up.sb.Usage(apiKey).Credits, up.sb.Arrivals(apiKey), nil
}

// contentPolicy runs the nights of one policy on dsn, a copy of night 0's
// database, and scores them against the truth.
func (e *env) contentPolicy(ctx context.Context, name, extra, dsn string, truth *contentTruth, budget int64) (*contentScore, error) {
	pool, err := e.pool(ctx, dsn, contentWorkers)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	s := &contentScore{name: name}
	last := map[string]int{} // list -> the day of the policy's last walk (0: night 0 bought every list)
	for n := 1; n <= truth.nights+1; n++ {
		day := truth.dayOf(n)
		if err := sim.AgeDB(ctx, pool); err != nil {
			return nil, err
		}
		_, credits, arrivals, err := contentNight(ctx, pool, int64(day), func(u string) string { return contentYAML(u, truth.handles, budget, extra) })
		if err != nil {
			return nil, fmt.Errorf("night %d: %w", n, err)
		}
		if n > truth.nights {
			s.quiet += credits
		} else {
			s.credits += credits
		}
		walked := map[string]bool{}
		for _, a := range arrivals {
			if a.Credits == 0 {
				continue
			}
			l := listOf(a.Endpoint, a.Query)
			if l == "" {
				s.overhead += a.Credits
				continue
			}
			if n <= truth.nights && slices.Equal(truth.lists[last[l]][l], truth.lists[day][l]) {
				s.unchanged += a.Credits
			}
			walked[l] = true
		}
		for l := range walked {
			last[l] = day
		}
	}
	return s, scoreStored(ctx, pool, truth, s)
}

// scoreStored counts the new comments and replies stored and the deleted
// comments marked.
func scoreStored(ctx context.Context, pool *pgxpool.Pool, truth *contentTruth, s *contentScore) error {
	rows, err := pool.Query(ctx, `SELECT comment_id, last_seen_run FROM shortvideo.comments`)
	if err != nil {
		return err
	}
	seen := map[string]int64{}
	var id string
	var run int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &run}, func() error { seen[id] = run; return nil }); err != nil {
		return err
	}
	for id := range seen {
		switch truth.kind[id] {
		case "comment":
			s.comments++
		case "reply":
			s.replies++
		}
	}
	// Marked: the crawler's own marker, a walk to the list's end that no
	// longer found it (deleted_run after last_seen_run, migration 00053).
	rows, err = pool.Query(ctx, `SELECT comment_id FROM shortvideo.comments WHERE deleted_run > last_seen_run`)
	if err != nil {
		return err
	}
	marked := map[string]bool{}
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { marked[id] = true; return nil }); err != nil {
		return err
	}
	for _, g := range truth.gone {
		if marked[g.id] {
			s.deleted++
		}
	}
	return nil
}

// contentOracle simulates the policy that knows which lists changed.
// realizable: the stricter reference a crawler could match (issue 32's
// oracle is not one): it knows which lists changed too, but reads a
// comment's reply count only on the comments page that shows it, so a
// comments list whose comments' reply counts moved is read down to the
// page of its last change (a new comment, or a reply count other than
// it last read), whole when some were deleted.
func contentOracle(t *contentTruth, budget int64, realizable ...bool) *contentScore {
	s := &contentScore{name: "oracle"}
	byPage := len(realizable) > 0 && realizable[0]
	if byPage {
		s.name = "realizable oracle"
	}
	have := map[string][]string{}
	for l, ids := range t.lists[0] {
		have[l] = ids
	}
	// counts are the reply counts the realizable oracle last read.
	counts := map[string]int{}
	replies := func(day int, l, id string) int {
		return len(t.lists[day][repliesKey(strings.TrimPrefix(l, "c/"), id)])
	}
	if byPage {
		for l, ids := range t.lists[0] {
			if strings.HasPrefix(l, "c/") {
				for _, id := range ids {
					counts[repliesKey(strings.TrimPrefix(l, "c/"), id)] = replies(0, l, id)
				}
			}
		}
	}
	known := map[string]int{} // handle -> videos known
	for _, h := range t.handles {
		known[h] = len(t.videos[0][h])
	}
	pages := func(n int) int64 { return int64(max(1, (n+contentPageSize-1)/contentPageSize)) }
	captured := map[string]bool{}
	for n := 1; n <= t.nights+1; n++ {
		day := t.dayOf(n)
		left, spent := budget, int64(0)
		take := func(c int64) bool {
			if budget > 0 && c > left {
				return false
			}
			left -= c
			spent += c
			return true
		}
		for _, h := range t.handles {
			all := len(t.videos[day][h])
			fresh := all - known[h]
			if take(1 + min(int64(fresh/contentPageSize+1), pages(all))) {
				s.overhead += 1 + min(int64(fresh/contentPageSize+1), pages(all))
				known[h] = all
			}
		}
		type change struct {
			list        string
			added, gone []string
			cost        int64
			moved       int // comments whose reply count moved (realizable)
		}
		var cs []change
		for l, ids := range t.lists[day] {
			before, seen := have[l]
			added, gone := diffList(before, ids)
			moved, last := 0, 0
			if byPage && strings.HasPrefix(l, "c/") {
				isNew := map[string]bool{}
				for _, id := range added {
					isNew[id] = true
				}
				for i, id := range ids {
					if isNew[id] {
						last = i + 1
					} else if counts[repliesKey(strings.TrimPrefix(l, "c/"), id)] != replies(day, l, id) {
						moved++
						last = i + 1
					}
				}
			}
			if len(added)+len(gone)+moved == 0 {
				continue
			}
			cost := pages(len(ids))
			switch {
			case byPage && strings.HasPrefix(l, "c/") && seen && len(gone) == 0:
				cost = min(pages(last), cost)
			case seen && len(gone) == 0:
				cost = min(int64(len(added)/contentPageSize+1), cost)
			}
			cs = append(cs, change{l, added, gone, cost, moved})
		}
		slices.SortFunc(cs, func(a, b change) int {
			va, vb := float64(len(a.added)+len(a.gone)+a.moved)/float64(a.cost), float64(len(b.added)+len(b.gone)+b.moved)/float64(b.cost)
			return cmp.Or(cmp.Compare(vb, va), strings.Compare(a.list, b.list))
		})
		for _, c := range cs {
			if !take(c.cost) {
				continue
			}
			have[c.list] = t.lists[day][c.list]
			if byPage && strings.HasPrefix(c.list, "c/") {
				for _, id := range t.lists[day][c.list] {
					counts[repliesKey(strings.TrimPrefix(c.list, "c/"), id)] = replies(day, c.list, id)
				}
			}
			for _, id := range c.added {
				if k := t.kind[id]; k != "" && !captured[id] {
					captured[id] = true
					if k == "comment" {
						s.comments++
					} else {
						s.replies++
					}
				}
			}
			s.deleted += len(c.gone)
		}
		if n > t.nights {
			s.quiet += spent
		} else {
			s.credits += spent
		}
	}
	return s
}

// contentFigures are one budget's figures: the default against the
// oracle (credits of the changing nights, of the unchanged night, new
// entries captured), then each policy's.
func contentFigures(label string, t *contentTruth, budget int64, scores []*contentScore) []Figure {
	def, oracle := scores[0], scores[len(scores)-1]
	total := t.newComments + t.newReplies
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return math.NaN()
		}
		return a / b
	}
	why := "a list whose counter rose is read down to the page where the rise is explained (new comments with their replies, and the moves of the stored comments' reply counts; whole when comments were deleted), where the oracle buys only the pages down to the first known entry: " +
		"a new reply under an old comment moves its video's counter (which counts replies), so its comments list is read down to that comment's page, where the oracle buys that replies list alone, which no crawler can (it learns a reply count only on the comments page showing it)"
	for _, r := range scores {
		if r.name == "realizable oracle" && r.credits > 0 {
			why += fmt.Sprintf("; the realizable oracle, which knows which lists changed but reads a reply count only there, spends %d credits, %.2f times the oracle's, and the default %.3f times it", r.credits, float64(r.credits)/float64(oracle.credits), float64(def.credits)/float64(r.credits))
		}
	}
	why += "; and at a binding budget the default policy leases a depth's content lists by their counter's move per credit since their last walk, but only among those pending when a worker leases (a list found later does not overtake one already leased), and a list moved by replies under old comments ranks as if they were new comments, though its walk finds only their reply counts."
	var figs []Figure
	if budget == 0 {
		figs = append(figs,
			Figure{Name: label + ": default ÷ oracle: credits of the changing nights", Value: ratio(float64(def.credits), float64(oracle.credits)), Aim: atMost(1.5),
				Detail: fmt.Sprintf("default %d, oracle %d credits over %d nights", def.credits, oracle.credits, t.nights), Why: why},
			Figure{Name: label + ": default ÷ oracle: credits of the unchanged night", Value: ratio(float64(def.quiet), float64(oracle.quiet)), Aim: atMost(1.5),
				Detail: fmt.Sprintf("default %d, oracle %d credits (the profiles and first video pages)", def.quiet, oracle.quiet), Why: why},
			Figure{Name: label + ": default: new comments and replies captured", Value: ratio(float64(def.captured()), float64(total)), Aim: atLeast(0.98),
				Detail: fmt.Sprintf("%d of %d (%d comments of %d, %d replies of %d)", def.captured(), total, def.comments, t.newComments, def.replies, t.newReplies)})
		for _, r := range scores {
			if r.name == "realizable oracle" {
				figs = append(figs, Figure{Name: label + ": default ÷ realizable oracle: credits of the changing nights", Value: ratio(float64(def.credits), float64(r.credits)),
					Detail: fmt.Sprintf("default %d, realizable oracle %d credits over %d nights: it knows which lists changed, but reads a comment's reply count only on the comments page showing it "+
						"(a changed comments list down to the page of its last change, whole when some were deleted), which no crawler can skip", def.credits, r.credits, t.nights)})
			}
		}
	} else {
		figs = append(figs, Figure{Name: label + ": default ÷ oracle: new comments and replies captured", Value: ratio(float64(def.captured()), float64(oracle.captured())),
			Aim: atLeast(0.9), Detail: fmt.Sprintf("default %d, oracle %d of %d", def.captured(), oracle.captured(), total), Why: why})
	}
	for _, s := range scores {
		figs = append(figs, Figure{Name: label + ": " + s.name, Value: float64(s.credits),
			Text: fmt.Sprintf("%d credits (%d on unchanged lists), %d on the unchanged night; %.1f%% of new comments and replies captured; %d of %d deleted marked",
				s.credits, s.unchanged, s.quiet, 100*ratio(float64(s.captured()), float64(total)), s.deleted, len(t.gone)),
			Detail: fmt.Sprintf("credits of the %d changing nights %d, of the unchanged night %d; of all, %d on profiles and video lists; of the changing nights', %d on comments and replies lists unchanged since the policy last bought them; "+
				"new comments captured %d of %d, new replies %d of %d; deleted comments marked %d of %d", t.nights, s.credits, s.quiet, s.overhead, s.unchanged,
				s.comments, t.newComments, s.replies, t.newReplies, s.deleted, len(t.gone))})
	}
	return figs
}
