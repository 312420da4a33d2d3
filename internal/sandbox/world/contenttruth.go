package world

import (
	"errors"
	"fmt"
	"strings"
)

// Ground truth of the content world (ChurnContent), for tests and
// benchmarks: what the content endpoints serve at a day, and what changed
// between two days, list by list. Pure functions, computed by the
// handlers' own code (no server needed). They answer for every world; in
// a world other than ChurnContent comments and replies never change (but
// for a post code's r<N>).

// Content is the world churn at a day, read as ground truth.
type Content struct{ w *World }

// ContentVideo is a video of a creator's list: its id, when it was posted
// and its comment count (in the content world its comments and their
// replies, else its comments list's length).
type ContentVideo struct {
	ID       string
	Posted   int64
	Comments int64
}

// ContentComment is a comment or a reply: its id, when it was posted, and
// for a comment its reply count (its replies list's length).
type ContentComment struct {
	ID      string
	Created int64
	Replies int64
}

// ContentAt is world churn (any Config.Churn) at day. The page size does
// not matter: lists are read whole.
func ContentAt(churn string, day int64) (Content, error) {
	switch {
	case churn != ChurnLinear && !IsChurnWorld(churn):
		return Content{}, fmt.Errorf("sandbox: %q is not a world (%s, %s)", churn, ChurnLinear, strings.Join(churnWorlds, ", "))
	case day < 0:
		return Content{}, fmt.Errorf("sandbox: day must not be negative, got %d", day)
	}
	return Content{New(1000, day, churn)}, nil
}

// Day is the content's day.
func (c Content) Day() int64 { return c.w.day }

func (c Content) account(handle string) (Account, error) {
	if handle == "" || handle[0] == '@' {
		return Account{}, fmt.Errorf("sandbox: %q is not a handle (non-empty, without the leading @)", handle)
	}
	a, err := c.w.Account(handle)
	if err != nil {
		return a, errors.New("sandbox: no account " + handle + ": handles starting with missing do not exist")
	}
	return a, nil
}

// whole reads a paged list to its end.
func whole[T any](page func(off int64) ([]T, Window)) []T {
	var out []T
	for off := int64(0); ; {
		items, win := page(off)
		out = append(out, items...)
		if !win.More {
			return out
		}
		off = win.Next
	}
}

// CreatorVideos are handle's videos, newest first (a private account's
// too, though its list is served empty).
func (c Content) CreatorVideos(handle string) ([]ContentVideo, error) {
	a, err := c.account(handle)
	if err != nil {
		return nil, err
	}
	a.Private = false
	vs := whole(func(off int64) ([]Video, Window) { return c.w.CreatorVideos(a, off) })
	out := make([]ContentVideo, len(vs))
	for i, v := range vs {
		out[i] = ContentVideo{ID: v.ID, Posted: v.CreateTime, Comments: v.Comments}
	}
	return out, nil
}

func asContent(cs []Comment) []ContentComment {
	out := make([]ContentComment, len(cs))
	for i, c := range cs {
		out[i] = ContentComment{ID: c.ID, Created: c.CreatedAt, Replies: c.Children}
	}
	return out
}

// VideoComments are the comments under video id by author, as its
// comments endpoint lists them.
func (c Content) VideoComments(id, author string) []ContentComment {
	return asContent(whole(func(off int64) ([]Comment, Window) {
		cs, win, _ := c.w.VideoComments(id, author, off)
		return cs, win
	}))
}

// CommentReplies are the replies to comment cid of video id by author.
func (c Content) CommentReplies(id, author, cid string) []ContentComment {
	return asContent(whole(func(off int64) ([]Comment, Window) {
		cs, win, _ := c.w.VideoCommentReplies(id, author, cid, off)
		return cs, win
	}))
}

// PostComments are the comments under the post code.
func (c Content) PostComments(code string) []ContentComment {
	return asContent(whole(func(off int64) ([]Comment, Window) { return c.w.PostComments(code, off) }))
}

// PostCommentReplies are the replies to comment cid of the post code.
func (c Content) PostCommentReplies(code, cid string) []ContentComment {
	return asContent(whole(func(off int64) ([]Comment, Window) { return c.w.PostCommentReplies(code, cid, off) }))
}

// The kinds of list a ListChange names.
const (
	ListVideoComments      = "video_comments"       // Video's comments
	ListCommentReplies     = "comment_replies"      // the replies to Comment of Video
	ListPostComments       = "post_comments"        // Post's comments
	ListPostCommentReplies = "post_comment_replies" // the replies to Comment of Post
)

// ListChange is one list that differs between two days: its entries new
// (present at To, not at From; newest first) and gone (present at From,
// not at To: deleted), and its counter at both days (the count its parent
// shows: comment_count, reply_comment_total, child_comment_count; in the
// content world a video's or post's counts the replies too, so a comments
// list whose only change is a new reply is listed, its New and Gone
// empty). A list whose parent is new (a new video, a new comment) has
// From empty and CountFrom 0.
type ListChange struct {
	Kind                 string
	Video, Post, Comment string
	CountFrom, CountTo   int64
	New, Gone            []string
}

// ContentDiff is what changed under a creator from day From to day To:
// the videos new on its list, then every comments and replies list under
// its videos (at To) that differs, and the totals.
type ContentDiff struct {
	Handle    string
	From, To  int64
	NewVideos []string
	Lists     []ListChange
	// NewComments and NewReplies count the entries new at To; Deleted
	// the comments and replies present at From and gone at To.
	NewComments, NewReplies, Deleted int
}

func (d *ContentDiff) add(l ListChange) {
	if len(l.New) == 0 && len(l.Gone) == 0 && l.CountFrom == l.CountTo {
		return
	}
	d.Lists = append(d.Lists, l)
	if l.Kind == ListVideoComments || l.Kind == ListPostComments {
		d.NewComments += len(l.New)
	} else {
		d.NewReplies += len(l.New)
	}
	d.Deleted += len(l.Gone)
}

// diffIDs is the ids of to not in from (in to's order), and of from not
// in to (in from's order).
func diffIDs(from, to []ContentComment) (added, gone []string) {
	in := func(l []ContentComment) map[string]bool {
		m := make(map[string]bool, len(l))
		for _, c := range l {
			m[c.ID] = true
		}
		return m
	}
	f, t := in(from), in(to)
	for _, c := range to {
		if !f[c.ID] {
			added = append(added, c.ID)
		}
	}
	for _, c := range from {
		if !t[c.ID] {
			gone = append(gone, c.ID)
		}
	}
	return added, gone
}

// CreatorContentChanges is what changed under handle's videos from day
// from to day to (from <= to) in world churn: O(videos · comments ·
// days).
func CreatorContentChanges(churn, handle string, from, to int64) (ContentDiff, error) {
	if from < 0 || from > to {
		return ContentDiff{}, fmt.Errorf("sandbox: CreatorContentChanges: need 0 <= from <= to, got %d, %d", from, to)
	}
	cf, err := ContentAt(churn, from)
	if err != nil {
		return ContentDiff{}, err
	}
	ct, _ := ContentAt(churn, to)
	vf, err := cf.CreatorVideos(handle)
	if err != nil {
		return ContentDiff{}, err
	}
	vt, _ := ct.CreatorVideos(handle)
	known := map[string]int64{} // video -> its comment count at from
	for _, v := range vf {
		known[v.ID] = v.Comments
	}
	d := ContentDiff{Handle: handle, From: from, To: to}
	for _, v := range vt {
		var before []ContentComment
		countFrom, ok := known[v.ID]
		if ok {
			before = cf.VideoComments(v.ID, handle)
		} else {
			d.NewVideos = append(d.NewVideos, v.ID)
		}
		after := ct.VideoComments(v.ID, handle)
		added, gone := diffIDs(before, after)
		d.add(ListChange{Kind: ListVideoComments, Video: v.ID, CountFrom: countFrom, CountTo: v.Comments, New: added, Gone: gone})
		old := map[string]bool{}
		for _, c := range before {
			old[c.ID] = true
		}
		for _, cm := range after {
			var rb []ContentComment
			if old[cm.ID] {
				rb = cf.CommentReplies(v.ID, handle, cm.ID)
			}
			ra := ct.CommentReplies(v.ID, handle, cm.ID)
			added, gone := diffIDs(rb, ra)
			d.add(ListChange{Kind: ListCommentReplies, Video: v.ID, Comment: cm.ID, CountFrom: int64(len(rb)), CountTo: cm.Replies,
				New: added, Gone: gone})
		}
	}
	return d, nil
}

// PostContentChanges is what changed under the post code from day from
// to day to in world churn: its comments list and the replies lists of
// its comments at to, those that differ.
func PostContentChanges(churn, code string, from, to int64) (ContentDiff, error) {
	if from < 0 || from > to {
		return ContentDiff{}, fmt.Errorf("sandbox: PostContentChanges: need 0 <= from <= to, got %d, %d", from, to)
	}
	cf, err := ContentAt(churn, from)
	if err != nil {
		return ContentDiff{}, err
	}
	ct, _ := ContentAt(churn, to)
	d := ContentDiff{From: from, To: to}
	before, after := cf.PostComments(code), ct.PostComments(code)
	newComments, gone := diffIDs(before, after)
	d.add(ListChange{Kind: ListPostComments, Post: code, CountFrom: cf.w.CommentCount(code), CountTo: ct.w.CommentCount(code), New: newComments, Gone: gone})
	fresh := map[string]bool{}
	for _, id := range newComments {
		fresh[id] = true
	}
	for _, cm := range after {
		var rb []ContentComment
		if !fresh[cm.ID] {
			rb = cf.PostCommentReplies(code, cm.ID)
		}
		ra := ct.PostCommentReplies(code, cm.ID)
		added, gone := diffIDs(rb, ra)
		d.add(ListChange{Kind: ListPostCommentReplies, Post: code, Comment: cm.ID, CountFrom: int64(len(rb)), CountTo: cm.Replies,
			New: added, Gone: gone})
	}
	return d, nil
}
