package world

import (
	"cmp"
	"math"
	"slices"
)

// ChurnContent is the world whose content changes from day to day: its
// accounts are the heavytail world's (follow lists, counters, and the
// creators' videos and posts lists growing at their head by the daily
// draws of their counters), and under every video and post the comments
// and replies change too: new ones at the head of their lists, many under
// recent videos and few under old ones, and deleted comments. A new video
// is dated on the day it arrives and starts with no comments. Counters
// follow the lists: a comment's reply count (reply_comment_total,
// child_comment_count) is its replies list's length, and a video's
// comment count (statistics.comment_count, the comments list's total) and
// a post's comment_count are, as the platforms display them, its
// comments and all their replies (shownCount): a new reply under an old
// comment moves its video's or post's counter too. At WorldTime 0 it
// serves the other worlds' comments, with those counters.
// Ground truth: ContentAt, CreatorContentChanges, PostContentChanges
// (contenttruth.go).
const ChurnContent = "content"

// The mixes of the content world's rates, declared once (docs/sandbox.md
// copies them): a video's or post's comments arrive at a peak rate (a day,
// when it is new) from commentsMix, a comment's replies at one from
// repliesMix, and a comments list loses comments at a rate from
// deletionsMix.
var (
	commentsMix  = rateMix{{RateStill, 350, 0, 0}, {RateSlow, 350, 0.2, 2}, {RateModerate, 250, 2, 20}, {RateFast, 50, 20, 150}}
	repliesMix   = rateMix{{RateStill, 600, 0, 0}, {RateSlow, 300, 0.1, 1}, {RateModerate, 100, 1, 5}}
	deletionsMix = rateMix{{RateStill, 800, 0, 0}, {RateSlow, 170, 0.01, 0.1}, {RateModerate, 30, 0.2, 1}}
)

// How attention decays with age: a day's rate is the peak rate times
// 2^(-age/contentHalfLife) plus a tail (a share of the peak that never
// decays: old videos and posts still get the odd comment). Age is in days
// at the end of the day, from the parent's time (the video's or post's;
// a new comment's for its replies).
const (
	contentHalfLife     = 2.0
	videoTail, postTail = 0.002, 0.01
	secondsPerDay       = 86400
)

// ageRate is the mean arrivals of day k on a list whose parent was
// posted at parent and whose peak rate is peak.
func ageRate(peak float64, parent, k int64, tail float64) float64 {
	age := float64(WorldEpoch+k*secondsPerDay-parent) / secondsPerDay
	if age <= 0 || peak <= 0 {
		return 0
	}
	return peak * (math.Exp2(-age/contentHalfLife) + tail)
}

// contentLaw is how one content list (a video's or post's comments, a
// comment's replies) changes. Entries keep the indexes of List growth (0
// .. day0-1 the day-0 list, -1, -2, ... those added since, in order of
// arrival); the list shows them by ascending index, so new ones first.
type contentLaw struct {
	day0 int64
	// peak is the arrivals' peak rate; parent the time the rate's age
	// counts from; tail the share of the peak that never decays.
	peak         ChurnRate
	parent       int64
	tail         float64
	lose         ChurnRate
	seed, loseSd uint64
}

// contentState is a content list at a day: a followState (its indexes
// and removals) and the arrivals of days 1..day (cum[k-1] through day k),
// which date the new entries.
type contentState struct {
	followState
	cum []int64
}

// at is the list at day, as followLaw.at: day k first removes (each
// removal draw picks an index uniformly among those that existed at the
// end of day k-1; a pick of an entry already gone removes nothing), then
// adds its Poisson draw at ageRate. O(day + removals·log).
func (l contentLaw) at(day int64) contentState {
	s := contentState{followState: followState{day0: l.day0}, cum: make([]int64, 0, max(0, day))}
	lose := newPoisson(l.lose.PerDay)
	var gone map[int64]bool
	for k := int64(1); k <= day; k++ {
		s.removeDay(k, lose, l.loseSd, &gone)
		if rate := ageRate(l.peak.PerDay, l.parent, k, l.tail); rate > 0 {
			r := dayRNG(l.seed, k)
			s.arrived += newPoisson(rate).draw(&r)
		}
		s.cum = append(s.cum, s.arrived)
	}
	slices.SortFunc(s.removed, func(a, b removal) int { return cmp.Compare(a.index, b.index) })
	return s
}

// arrivedOn is the day entry index i < 0 arrived on, its rank among that
// day's arrivals and their number.
func arrivedOn(cum []int64, i int64) (day, rank, of int64) {
	k := -1 - i
	d, _ := slices.BinarySearch(cum, k+1) // the first day whose total passes k
	before := int64(0)
	if d > 0 {
		before = cum[d-1]
	}
	return int64(d) + 1, k - before, cum[d] - before
}

// newTime dates entry i < 0 of a list whose arrivals are cum: during the
// day it arrived on, after its parent (posted at parent), in order of
// arrival, each arrival in its own slice of the day plus a jitter
// H(kind, id, "createdAt") within it.
func newTime(cum []int64, i, parent int64, kind, id string) int64 {
	day, rank, of := arrivedOn(cum, i)
	start := max(WorldEpoch+(day-1)*secondsPerDay, parent+1)
	end := WorldEpoch + day*secondsPerDay
	span := max(1, end-start)
	step := max(1, span/max(1, of))
	return min(end-1, start+rank*span/max(1, of)+pick(kind, id, "createdAt", uint64(step)))
}

// mediaCum is the cumulative number of entries added to account a's
// media list counted by c on days 1..day: the heavytail draws of its
// counter, or a linear law's fixed number a day (creatorMedia's added).
func (w *World) mediaCum(a Account, c counterLaw, letter byte) []int64 {
	cum := make([]int64, 0, w.day)
	if !a.churn {
		g := w.creatorMedia(a, c, letter).added / max(1, w.day)
		for k := int64(1); k <= w.day; k++ {
			cum = append(cum, g*k)
		}
		return cum
	}
	rate, seed, n := c.mix.draw(a.Handle, c.field).PerDay, hashOf("churn", a.Handle, c.field), int64(0)
	p := newPoisson(rate)
	for k := int64(1); k <= w.day; k++ {
		if rate > 0 {
			r := dayRNG(seed, k)
			n += p.draw(&r)
		}
		cum = append(cum, n)
	}
	return cum
}

// unlistedVideoTime is when video id was posted when no creator's list
// places it: hashed, within a year before WorldEpoch.
func unlistedVideoTime(id string) int64 {
	return WorldEpoch - pick("video", id, "createTime", 365*86400)
}

// videoPosted is when video id by author was posted and whether it is a
// video its author added after day 0 (fresh): in the content world a
// fresh video is dated on the day it arrived, found among the author's
// new videos; any other video keeps its time of the other worlds.
func (w *World) videoPosted(id, author string) (posted int64, fresh bool) {
	static := unlistedVideoTime(id)
	if at, ok := w.creatorVideoTime(author, id); ok {
		static = at // its place in its creator's list (content_time.go)
	}
	if !w.content || author == "" {
		return static, false
	}
	a, err := w.Account(author)
	if err != nil {
		return static, false
	}
	l := w.videoList(a)
	seed := creatorVideoSeed(author)
	for k := range l.added {
		if digitsAt('7', seed, -1-k) == id {
			return newTime(w.mediaCum(a, videoCounter, 'v'), -1-k, 0, "video", id), true
		}
	}
	return static, false
}

// videoCommentLaw is the law of the comments under video id by author,
// posted at posted: the other worlds' comments at day 0 (none for a fresh
// video), a peak rate from commentsMix, the video tail, deletions.
func videoCommentLaw(id, author string, posted int64, fresh bool) contentLaw {
	day0 := videoComments(id, author)
	if fresh {
		day0 = 0
	}
	return contentLaw{day0: day0, peak: commentsMix.draw(id, "video.comments"), parent: posted, tail: videoTail,
		lose: deletionsMix.draw(id, "video.comments.loss"), seed: hashOf("churn", id, "video.comments"),
		loseSd: hashOf("churn", id, "video.comments.loss")}
}

// replyLaw is the law of the replies to comment cid: its replies of the
// other worlds at day 0 (day0; none for a fresh comment), a peak rate
// from repliesMix decaying from parent (the comment's time when fresh,
// else its video's or post's), no deletions.
func replyLaw(cid string, day0, parent int64, fresh bool, tail float64) contentLaw {
	if fresh {
		day0 = 0
	}
	return contentLaw{day0: day0, peak: repliesMix.draw(cid, "replies"), parent: parent, tail: tail,
		seed: hashOf("churn", cid, "replies")}
}

// postCommentLaw is the law of the comments under the post code in the
// content world, and whether it has one: a code with r<N> keeps the
// linear law (N a day, nothing removed). Its rate decays from the post's
// time, with the post tail.
func (w *World) postCommentLaw(code string) (contentLaw, bool) {
	total, growth := commentsOf(code)
	if !w.content || growth > 0 {
		return contentLaw{}, false
	}
	return contentLaw{day0: total, peak: commentsMix.draw(code, "post.comments"), parent: takenAt("post", code), tail: postTail,
		lose: deletionsMix.draw(code, "post.comments.loss"), seed: hashOf("churn", code, "post.comments"),
		loseSd: hashOf("churn", code, "post.comments.loss")}, true
}

// contentComments builds the comments at positions [win.Start, win.End)
// of a list in state st: entry i's id is digitsAt(lead, seed, i); a
// day-0 entry is made by old, a new one by fresh with its time.
func contentComments(st contentState, win Window, lead byte, seed uint64, parent int64, old func(i int64, id string) Comment,
	fresh func(i int64, id string, created int64) Comment) []Comment {
	idx := st.indexes(win.Start, win.End)
	out := make([]Comment, 0, len(idx))
	for _, i := range idx {
		id := digitsAt(lead, seed, i)
		if i >= 0 {
			out = append(out, old(i, id))
			continue
		}
		out = append(out, fresh(i, id, newTime(st.cum, i, parent, "comment", id)))
	}
	return out
}

// findNew is the time of the new entry of a list in state st whose id
// (digitsAt(lead, seed, i)) is id, if it is one of them.
func findNew(st contentState, lead byte, seed uint64, parent int64, id string) (int64, bool) {
	for k := range st.arrived {
		if digitsAt(lead, seed, -1-k) == id {
			return newTime(st.cum, -1-k, parent, "comment", id), true
		}
	}
	return 0, false
}

// replyCount is the reply count at the world's day of comment i (id
// cid) of a comments list in state st whose parent was posted at parent:
// a day-0 comment's replies start at day0(cid) and count from parent, a
// new comment's start at none and count from its own time.
func (w *World) replyCount(st contentState, i int64, cid string, parent int64, day0 func(string) int64, tail float64) int64 {
	if i >= 0 {
		return replyLaw(cid, day0(cid), parent, false, tail).at(w.day).length()
	}
	return replyLaw(cid, 0, newTime(st.cum, i, parent, "comment", cid), true, tail).at(w.day).length()
}

// shownCount is the comment count a video or post shows in the content
// world: its comments (a list in state st, ids digitsAt(lead, seed, i))
// and all their replies, as the platforms' displayed totals count them
// (docs/sandbox.md, "A content world that changes"); a deleted
// comment's replies go with it. O(comments · days).
func (w *World) shownCount(st contentState, lead byte, seed uint64, parent int64, day0 func(string) int64, tail float64) int64 {
	n := st.length()
	for _, i := range st.indexes(0, n) {
		n += w.replyCount(st, i, digitsAt(lead, seed, i), parent, day0, tail)
	}
	return n
}

// videoCommentCount is the comment count video id by author shows in the
// content world (shownCount).
func (w *World) videoCommentCount(id, author string, posted int64, fresh bool) int64 {
	st := videoCommentLaw(id, author, posted, fresh).at(w.day)
	return w.shownCount(st, '7', hashOf("video", id, "comments"), posted, commentReplies, videoTail)
}

// contentVideoComments is VideoComments in the content world: the page's
// total is the video's comment count (comments and replies), as the real
// service's is.
func (w *World) contentVideoComments(id, author string, off int64) ([]Comment, Window, int64) {
	posted, freshVideo := w.videoPosted(id, author)
	st := videoCommentLaw(id, author, posted, freshVideo).at(w.day)
	win := w.Page(off, st.length())
	seed := hashOf("video", id, "comments")
	out := contentComments(st, win, '7', seed, posted, func(i int64, cid string) Comment {
		c := w.videoComment(seed, i, cid, posted)
		c.Children = w.replyCount(st, i, cid, posted, commentReplies, videoTail)
		return c
	}, func(i int64, cid string, created int64) Comment {
		c := w.videoComment(seed, i, cid, posted)
		c.CreatedAt = created
		c.Children = w.replyCount(st, i, cid, posted, commentReplies, videoTail)
		return c
	})
	return out, win, w.shownCount(st, '7', seed, posted, commentReplies, videoTail)
}

// videoComment is comment i (id cid) of a video posted at posted, as
// the other worlds make it.
func (w *World) videoComment(seed uint64, i int64, cid string, posted int64) Comment {
	return Comment{ID: cid, Text: sentence(hashOf("comment", cid, "text"), 1, 12), User: handleAt(seed, i),
		CreatedAt: posted + 60*(i+1) + pick("comment", cid, "createdAt", 60),
		Likes:     w.grow("comment", cid, "likeCount", 1_000, 5), Children: commentReplies(cid)}
}

// videoReplyLaw is the law of the replies to comment cid of video id by
// author in the content world, the time its new replies count from, and
// the video's.
func (w *World) videoReplyLaw(id, author, cid string) (law contentLaw, parent, posted int64) {
	posted, freshVideo := w.videoPosted(id, author)
	comments := videoCommentLaw(id, author, posted, freshVideo).at(w.day)
	if created, ok := findNew(comments, '7', hashOf("video", id, "comments"), posted, cid); ok {
		return replyLaw(cid, 0, created, true, videoTail), created, posted
	}
	return replyLaw(cid, commentReplies(cid), posted, false, videoTail), posted, posted
}

// contentVideoCommentReplies is VideoCommentReplies in the content world.
func (w *World) contentVideoCommentReplies(id, author, cid string, off int64) ([]Comment, Window, int64) {
	law, parent, posted := w.videoReplyLaw(id, author, cid)
	st := law.at(w.day)
	total := st.length()
	win := w.Page(off, total)
	out := contentComments(st, win, '7', hashOf("comment", cid, "replies"), parent, func(j int64, rid string) Comment {
		return w.videoReply(posted, cid, j, rid)
	}, func(j int64, rid string, created int64) Comment {
		r := w.videoReply(posted, cid, j, rid)
		r.CreatedAt = created
		return r
	})
	return out, win, total
}

// contentPostComments is PostComments in the content world (law from
// postCommentLaw).
func (w *World) contentPostComments(code string, law contentLaw, off int64) ([]Comment, Window) {
	st := law.at(w.day)
	win := w.Page(off, st.length())
	seed := hashOf("post", code, "comments")
	out := contentComments(st, win, '1', seed, law.parent, func(i int64, id string) Comment {
		c := w.postComment(code, seed, i, id, law.parent)
		c.Children = w.replyCount(st, i, id, law.parent, PostReplies, postTail)
		return c
	}, func(i int64, id string, created int64) Comment {
		c := w.postComment(code, seed, i, id, law.parent)
		c.CreatedAt = created
		c.Children = w.replyCount(st, i, id, law.parent, PostReplies, postTail)
		return c
	})
	return out, win
}

// postCommentCount is the comment_count the post code shows in the
// content world (its law law): shownCount.
func (w *World) postCommentCount(code string, law contentLaw) int64 {
	return w.shownCount(law.at(w.day), '1', hashOf("post", code, "comments"), law.parent, PostReplies, postTail)
}

// postReplyLaw is the law of the replies to comment cid of the post code
// in the content world, and the time its new replies count from.
func (w *World) postReplyLaw(code, cid string, law contentLaw) (contentLaw, int64) {
	comments := law.at(w.day)
	if created, ok := findNew(comments, '1', hashOf("post", code, "comments"), law.parent, cid); ok {
		return replyLaw(cid, 0, created, true, postTail), created
	}
	return replyLaw(cid, PostReplies(cid), law.parent, false, postTail), law.parent
}

// contentPostReplies are the replies to comment cid of the post code at
// positions [win.Start, win.End) in the content world, win cut from
// their number by cut.
func (w *World) contentPostReplies(code, cid string, law contentLaw, cut func(total int64) Window) ([]Comment, Window) {
	rl, parent := w.postReplyLaw(code, cid, law)
	st := rl.at(w.day)
	win := cut(st.length())
	out := contentComments(st, win, '1', hashOf("comment", cid, "replies"), parent, func(j int64, _ string) Comment {
		return w.PostReply(code, cid, j)
	}, func(j int64, _ string, created int64) Comment {
		r := w.PostReply(code, cid, j)
		r.CreatedAt = created
		return r
	})
	return out, win
}
