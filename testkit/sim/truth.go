package sim

import (
	"encoding/base64"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// The ground truth: what the job's seeds reach in the world on a day, what
// each of those items costs, and which item a request the sandbox answered
// was for. Computed from the sandbox's world (sandbox.ChurnTruth and its
// documented token rules), never from what the crawler stored.

// item is a thing the crawler buys: an account's profile, a list.
type item struct {
	kind string // a task kind: "shortvideo.profile", "shortvideo.followers", ...
	key  string // the account's handle, or the post's code
}

func (it item) String() string { return it.kind + " " + it.key }

func profileItem(h string) item   { return item{"shortvideo.profile", h} }
func psProfileItem(h string) item { return item{"photosocial.profile", h} }
func commentsItem(u string) item  { return item{"photosocial.comments", codeOf(u)} }

// endpoint is how the sandbox names an endpoint the checkers follow, in
// each preset, and how a request's query says which item (key) and which
// page (offset) it is.
type endpoint struct {
	kind     string
	contract string // the path after /api
	real     string // the real preset's path
	// realSays: the real preset's answers say what they charged
	// (credits_charged in their envelope); the contract's say it with
	// RealServiceFields.
	realSays bool
	// content: one of the real service's own endpoints (no contract path).
	// max-age leaves them out: a transcript is bought once (refresh_after),
	// and a video's comments and their replies are bought when the video
	// is on a page of its creator's list walked tonight (stop_at_seen ends
	// a walk early: docs/upstream.md), so no revisit promise binds them.
	content bool
}

var endpoints = []endpoint{
	{"shortvideo.profile", "/shortvideo/profile", "/v1/tiktok/profile", false, false},
	{"shortvideo.followers", "/shortvideo/user/followers", "/v1/tiktok/user/followers", false, false},
	{"shortvideo.following", "/shortvideo/user/following", "/v1/tiktok/user/following", false, false},
	{"photosocial.comments", "/photosocial/post/comments", "/v2/instagram/post/comments", true, false},
	{"photosocial.profile", "/photosocial/profile", "/v1/instagram/profile", false, false},
	{"shortvideo.profile_videos", "", "/v3/tiktok/profile/videos", false, true},
	{"shortvideo.video_comments", "", "/v1/tiktok/video/comments", false, true},
	{"shortvideo.comment_replies", "", "/v1/tiktok/video/comment/replies", false, true},
	{"shortvideo.transcript", "", "/v1/tiktok/video/transcript", false, true},
	{"photosocial.user_posts", "", "/v2/instagram/user/posts", false, true},
	{"photosocial.user_reels", "", "/v1/instagram/user/reels", false, true},
	{"photosocial.highlights", "", "/v1/instagram/user/highlights", false, true},
}

// says reports whether the world's answers of kind say what they charged.
func (w World) says(kind string) bool {
	if w.Preset != sandbox.PresetScrapeCreators {
		return w.RealFields
	}
	e, _ := endpointOf(kind)
	return e.realSays
}

// path is the endpoint's Usage.ByEndpoint key under preset.
func (e endpoint) path(preset string) string {
	if preset == sandbox.PresetScrapeCreators {
		return e.real
	}
	return e.contract
}

func endpointOf(kind string) (endpoint, bool) {
	for _, e := range endpoints {
		if e.kind == kind {
			return e, true
		}
	}
	return endpoint{}, false
}

// request is a request the sandbox answered, as the checkers read it.
type request struct {
	it     item
	page   int64 // the list page asked for (0: the first), from its cursor
	query  string
	status int
	credit int64 // what it was charged (0: not billed)
	cut    bool  // a truncated 200
	// abandoned: answered after its client gave up (billed, never read).
	abandoned bool
}

// requestOf reads an arrival of the night at day: its item and page, ok
// false for endpoints the checkers do not follow.
func requestOf(preset string, pageSize int, day int64, a sandbox.Arrival) (request, bool) {
	var e endpoint
	found := false
	for _, x := range endpoints {
		if x.path(preset) == a.Endpoint {
			e, found = x, true
			break
		}
	}
	if !found {
		return request{}, false
	}
	q, err := url.ParseQuery(a.Query)
	if err != nil {
		return request{}, false
	}
	r := request{query: a.Endpoint + "?" + a.Query, status: a.Status, credit: a.Credits, cut: a.Truncated, abandoned: a.Abandoned}
	r.it.kind = e.kind
	var off int64
	switch e.kind {
	case "shortvideo.profile", "photosocial.profile":
		r.it.key = q.Get("handle")
	case "shortvideo.followers", "shortvideo.following":
		if preset == sandbox.PresetScrapeCreators {
			r.it.key = q.Get("handle")
			if mt := q.Get("min_time"); mt != "" {
				t, _ := strconv.ParseInt(mt, 10, 64)
				off = sandbox.WorldEpoch + day*86400 - t
			}
		} else {
			b, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(q.Get("secUid"), "MS4wLjABAAAA"))
			r.it.key = string(b)
			off, _ = strconv.ParseInt(q.Get("cursor"), 10, 64)
		}
	case "photosocial.comments":
		r.it.key = codeOf(q.Get("url"))
		c := q.Get("cursor")
		if preset == sandbox.PresetScrapeCreators {
			c = opaque(c)
		}
		off, _ = strconv.ParseInt(c, 10, 64)
	case "shortvideo.profile_videos":
		r.it.key = q.Get("handle")
		if mc := q.Get("max_cursor"); mc != "" {
			ms, _ := strconv.ParseInt(mc, 10, 64)
			off = sandbox.WorldEpoch + day*86400 - ms/1000
		}
	case "shortvideo.video_comments", "shortvideo.transcript":
		r.it.key = videoKey(q.Get("url"))
		off, _ = strconv.ParseInt(q.Get("cursor"), 10, 64)
	case "shortvideo.comment_replies":
		r.it.key = q.Get("comment_id")
		off, _ = strconv.ParseInt(q.Get("cursor"), 10, 64)
	case "photosocial.user_posts":
		r.it.key = q.Get("handle")
		off, _ = strconv.ParseInt(opaque(q.Get("next_max_id")), 10, 64)
	case "photosocial.user_reels", "photosocial.highlights":
		r.it.key = q.Get("handle")
		off, _ = strconv.ParseInt(opaque(q.Get("max_id")), 10, 64)
	}
	r.page = off / int64(max(1, pageSize))
	return r, true
}

// opaque is the offset a real preset's opaque cursor holds ("": none).
func opaque(c string) string {
	if c == "" {
		return ""
	}
	b, _ := base64.RawURLEncoding.DecodeString(c)
	return strings.TrimPrefix(string(b), "sbx:")
}

// videoKey is a video's item key, author/id, from its URL
// (…/@<author>/video/<id>).
func videoKey(u string) string {
	_, rest, _ := strings.Cut(u, "/@")
	author, id, _ := strings.Cut(rest, "/video/")
	id, _, _ = strings.Cut(id, "?")
	return author + "/" + strings.TrimSuffix(id, "/")
}

// codeOf is a post URL's code (the segment after /p/).
func codeOf(u string) string {
	_, rest, ok := strings.Cut(u, "/p/")
	if !ok {
		return u
	}
	code, _, _ := strings.Cut(rest, "/")
	return code
}

// reached is an item the seeds reach on a day: its depth, and for a list
// its length that day and the pages the job may walk of it.
type reached struct {
	depth   int
	size    int64 // list entries that day
	maxPage int   // page limit of a list
}

// pages is what a whole walk of a list reads (a profile: 1).
func (r reached) pages(pageSize int) int64 {
	if r.maxPage == 0 {
		return 1
	}
	return min(int64(r.maxPage), max(1, (r.size+int64(pageSize)-1)/int64(pageSize)))
}

// truth computes the world's truth for a scenario, caching each account
// and day.
type truth struct {
	s        *Scenario
	accounts map[accountDay]sandbox.AccountTruth
	worlds   map[int64]*world.World // the sandbox's world each day (content)
}

type accountDay struct {
	handle string
	day    int64
}

func newTruth(s *Scenario) *truth {
	return &truth{s: s, accounts: map[accountDay]sandbox.AccountTruth{}, worlds: map[int64]*world.World{}}
}

// followList is handle's followers or following list on day, as served
// (a private account's lists are served empty).
func (t *truth) followList(kind, handle string, day int64) ([]string, error) {
	at, ok := t.accounts[accountDay{handle, day}]
	if !ok {
		var err error
		if at, err = sandbox.ChurnTruthIn(t.s.World.Churn, handle, day); err != nil {
			return nil, fmt.Errorf("truth of %s on day %d: %w", handle, day, err)
		}
		t.accounts[accountDay{handle, day}] = at
	}
	switch {
	case at.Private:
		return nil, nil
	case kind == "shortvideo.following":
		return at.Following, nil
	}
	return at.Followers, nil
}

// reach is every item the job's seeds reach on day, breadth first: the
// seeds at depth 0, a profile's lists at its depth, the profiles of a
// list's entries (within its page limit) one deeper, up to max_depth.
func (t *truth) reach(day int64) (map[item]reached, error) { return t.reachUpTo(day, math.MaxInt64) }

// reachUpTo is reach, given up (with what it has) once the items reached
// take more than limit pages.
func (t *truth) reachUpTo(day, limit int64) (map[item]reached, error) {
	j, ps := &t.s.Job, t.s.World.PageSize
	var pages int64
	out := map[item]reached{}
	replies := map[item]int64{} // a comment's replies, as its video's comments list says
	level := []item{}
	for _, sd := range j.Seeds {
		for _, k := range seedKinds {
			if k.key == sd.Key && k.root != nil {
				level = append(level, k.root(sd.Value))
			}
		}
	}
	for depth := 0; len(level) > 0; depth++ {
		var next []item
		for i := 0; i < len(level); i++ { // level grows with the profiles' lists
			it := level[i]
			if _, seen := out[it]; seen {
				continue
			}
			r := reached{depth: depth}
			switch it.kind {
			case "shortvideo.profile":
				// A private account's lists are served empty: the crawler
				// rightly does not walk them.
				if t.gone(it.key) || strings.HasPrefix(it.key, "private") {
					out[it] = r
					continue
				}
				for _, l := range []struct {
					kind string
					edge *List
				}{{"shortvideo.followers", j.Followers}, {"shortvideo.following", j.Following}, {"shortvideo.profile_videos", j.Videos}} {
					if l.edge != nil {
						level = append(level, item{l.kind, it.key})
					}
				}
			case "shortvideo.followers", "shortvideo.following":
				entries, err := t.followList(it.kind, it.key, day)
				if err != nil {
					return nil, err
				}
				r.size, r.maxPage = int64(len(entries)), t.listPages(it.kind)
				if j.FollowerProfiles && depth+1 <= j.MaxDepth {
					for _, e := range entries[:min(len(entries), r.maxPage*ps)] {
						next = append(next, profileItem(e))
					}
				}
			case "photosocial.comments":
				r.size, r.maxPage = commentCount(it.key, day), t.listPages(it.kind)
			case "photosocial.profile":
				// A private profile's lists are not walked (its answer says
				// it is private).
				if t.gone(it.key) || strings.HasPrefix(it.key, "private") {
					break
				}
				for _, l := range []struct {
					kind string
					on   bool
				}{{"photosocial.user_posts", j.Posts != nil}, {"photosocial.user_reels", j.Reels != nil}, {"photosocial.highlights", j.Highlights}} {
					if l.on {
						level = append(level, item{l.kind, it.key})
					}
				}
			case "shortvideo.profile_videos", "photosocial.user_posts", "photosocial.user_reels":
				r.maxPage = t.listPages(it.kind)
				w, a, err := t.account(it.key, day)
				if err != nil {
					return nil, err
				}
				if it.kind != "shortvideo.profile_videos" {
					page := w.CreatorPosts
					if it.kind == "photosocial.user_reels" {
						page = w.CreatorReels
					}
					_, r.size = walkList(r.maxPage, func(off int64) ([]world.Post, world.Window) { return page(a, off) })
					break
				}
				var videos []world.Video
				videos, r.size = walkList(r.maxPage, func(off int64) ([]world.Video, world.Window) { return w.CreatorVideos(a, off) })
				// A video's comments and transcript are one hop deeper.
				if depth+1 <= j.MaxDepth {
					for _, v := range videos {
						if j.VideoComments != nil {
							next = append(next, item{"shortvideo.video_comments", it.key + "/" + v.ID})
						}
						if j.VideoTranscripts != nil {
							next = append(next, item{"shortvideo.transcript", it.key + "/" + v.ID})
						}
					}
				}
			case "shortvideo.video_comments":
				author, id, _ := strings.Cut(it.key, "/")
				w := t.world(day)
				r.maxPage = t.listPages(it.kind)
				var comments []world.Comment
				comments, r.size = walkList(r.maxPage, func(off int64) ([]world.Comment, world.Window) {
					cs, win, _ := w.VideoComments(id, author, off)
					return cs, win
				})
				// The replies of the comments on the pages walked: a list of
				// the comment's thread, at its depth.
				for _, c := range comments {
					if j.CommentReplies != nil && c.Children > 0 {
						ri := item{"shortvideo.comment_replies", c.ID}
						replies[ri] = c.Children
						level = append(level, ri)
					}
				}
			case "shortvideo.comment_replies":
				r.size, r.maxPage = replies[it], t.listPages(it.kind)
			}
			out[it] = r
			if pages += r.pages(ps); pages > limit {
				return out, nil
			}
		}
		level = next
	}
	return out, nil
}

// listPages is the page limit of a list kind: its edge's, else
// limits.max_pages.
func (t *truth) listPages(kind string) int {
	j := t.s.Job
	l := map[string]*List{
		"shortvideo.followers": j.Followers, "shortvideo.following": j.Following, "photosocial.comments": j.Comments,
		"shortvideo.profile_videos": j.Videos, "shortvideo.video_comments": j.VideoComments, "shortvideo.comment_replies": j.CommentReplies,
		"photosocial.user_posts": j.Posts, "photosocial.user_reels": j.Reels,
	}[kind]
	if l != nil && l.MaxPages > 0 {
		return l.MaxPages
	}
	return j.MaxPages
}

// world is the sandbox's world on day (the real preset's content).
func (t *truth) world(day int64) *world.World {
	w, ok := t.worlds[day]
	if !ok {
		w = world.New(t.s.World.PageSize, day, t.s.World.Churn)
		t.worlds[day] = w
	}
	return w
}

// account is handle's account in the world of day.
func (t *truth) account(handle string, day int64) (*world.World, world.Account, error) {
	w := t.world(day)
	a, err := w.Account(handle)
	if err != nil {
		return nil, world.Account{}, fmt.Errorf("truth of %s on day %d: %w", handle, day, err)
	}
	return w, a, nil
}

// walkList reads a list of the world page after page, at most limit
// pages: the entries on them, and the list's length as far as a walk can
// tell (one more than it read when the list goes on past the limit:
// reached.pages is then the limit).
func walkList[T any](limit int, page func(off int64) ([]T, world.Window)) ([]T, int64) {
	var out []T
	off := int64(0)
	for range max(1, limit) {
		es, win := page(off)
		out = append(out, es...)
		if !win.More {
			return out, int64(len(out))
		}
		off = win.Next
	}
	return out, int64(len(out)) + 1
}

// gone reports whether an account (or post) has nothing to walk: missing
// (404), or blocked under the real preset (403; the contract serves it).
// Neither is ever billed.
func (t *truth) gone(name string) bool {
	return strings.HasPrefix(name, "missing") ||
		strings.HasPrefix(name, "blocked") && t.s.World.Preset == sandbox.PresetScrapeCreators
}

// commentCount is the comments of post code on day: c<N>, plus r<K> a day
// (docs/sandbox.md, "List growth").
func commentCount(code string, day int64) int64 {
	n, _ := tokenCount(code, 'c')
	r, _ := tokenCount(code, 'r')
	return n + r*day
}

// tokenCount is N of the first token <letter><digits> of s (tokens split
// on "_").
func tokenCount(s string, letter byte) (int64, bool) {
	for tok := range strings.SplitSeq(s, "_") {
		if len(tok) < 2 || tok[0] != letter {
			continue
		}
		if n, err := strconv.ParseInt(tok[1:], 10, 64); err == nil && n >= 0 {
			return n, true
		}
	}
	return 0, false
}

// price is what one billed answer of kind costs in the scenario's world.
func (t *truth) price(kind string) int64 {
	if kind == "photosocial.comments" && t.s.Job.IncludeReplies {
		return 15
	}
	if p, ok := t.s.World.Prices[kind]; ok {
		return p
	}
	return 1
}

// cost is an upper bound of what visiting it costs on a day: its whole
// walk (or one answer) at its price; 0 for what is never billed.
func (t *truth) cost(it item, r reached) int64 {
	if t.gone(it.key) || it.kind == "photosocial.profile" && strings.HasPrefix(it.key, "private") {
		return 0
	}
	return t.price(it.kind) * r.pages(t.s.World.PageSize)
}

// estimateNight is what a night at day 0 would cost without reuse and
// the requests it would send: every item reached, walked whole. Past
// limit requests it stops counting.
func (t *truth) estimateNight(limit int64) (credits, requests int64, err error) {
	r, err := t.reachUpTo(0, limit)
	if err != nil {
		return 0, 0, err
	}
	for it, rr := range r {
		credits += t.cost(it, rr)
		requests += rr.pages(t.s.World.PageSize)
	}
	return credits, requests, nil
}
