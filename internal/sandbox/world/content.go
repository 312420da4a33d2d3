package world

import (
	"strings"
)

// The world's creator content, served by the real preset's own endpoints
// (package real, content.go; the contract has none): a creator's videos,
// posts and reels, the comments under a video and their replies,
// transcripts and highlights. Every answer derives from hashes of the keys, as the rest of
// the world does (docs/sandbox.md, "Creator content").

// creatorList is one of a creator's media lists at the world's day, newest
// first: the day0 entries of day 0 (indexes 0 .. day0-1) and the added
// ones since (indexes -added .. -1), at the head (see headIndex).
type creatorList struct{ day0, added int64 }

func (l creatorList) total() int64 { return l.day0 + l.added }

// index is the entry at position p (0 = the newest).
func (l creatorList) index(p int64) int64 { return p - l.added }

// creatorMedia is account a's media list counted by counter c: its length
// is the profile's counter (c), which grows as that counter does (the
// linear world's rate, the heavytail world's daily draws). A token
// <letter><N> fixes its day-0 length at N; it then grows by the handle's
// r<N> a day, or by the heavytail draws, else not at all.
func (w *World) creatorMedia(a Account, c counterLaw, letter byte) creatorList {
	base := pick("account", a.Handle, c.field, c.baseMod)
	added := w.counter(a, c) - base
	toks := splitTokens(a.Handle, "")
	if n, ok := countToken(toks, letter); ok {
		base = n
		if !a.churn {
			added = 0
			if r, ok := growthToken(toks); ok {
				added = r * w.day
			}
		}
	}
	return creatorList{day0: base, added: added}
}

// videoList is a short-video creator's videos (token v<N>); postList a
// photo-sharing account's posts (token p<N>).
func (w *World) videoList(a Account) creatorList { return w.creatorMedia(a, videoCounter, 'v') }
func (w *World) postList(a Account) creatorList  { return w.creatorMedia(a, postsCounter, 'p') }

// creatorVideoID is the id of the video at index i of handle's videos.
func creatorVideoID(handle string, i int64) string {
	return digitsAt('7', creatorVideoSeed(handle), i)
}

// creatorVideoSeed is the seed of handle's video ids: hashed once for a
// scan of its list, not once per entry.
func creatorVideoSeed(handle string) uint64 { return hashOf("account", handle, "items") }

// videoComments is how many comments the video id by author has: the
// author's c<N>, else hash-derived (below 60). The video's commentCount
// says the same.
func videoComments(id, author string) int64 {
	if n, ok := countToken(splitTokens(author, ""), 'c'); ok {
		return n
	}
	return pick("video", id, "commentCount", 60)
}

// commentReplies is how many replies the video comment cid has (0 to 3).
func commentReplies(cid string) int64 { return pick("comment", cid, "replies", 4) }

// The post types of a photo-sharing creator's posts, by index: a reel, a
// photo, a carousel, in turn. A post's code starts with its type's letter,
// so a post asked for by URL tells its type.
var postTypes = [3]struct {
	letter      byte
	mediaType   int64
	productType string
}{{'D', 2, "clips"}, {'C', 1, "feed"}, {'B', 8, "carousel_container"}}

// postType is the type of the post at index i (Euclidean: indexes of the
// head are negative).
func postType(i int64) int { return int(((i % 3) + 3) % 3) }

// postCodeAt is the code of the post at index i of handle's posts: its
// type's letter and 11 base-62 characters of a bijection of the index, so
// codes are distinct within an account, then the handle's c<N> token when
// it has one: each of its posts has exactly N comments (the post code
// grammar).
func postCodeAt(handle string, i int64) string {
	code := string(postTypes[postType(i)].letter) + base62(mix64(hashOf("account", handle, "posts")+uint64(i)))
	if n, ok := countToken(splitTokens(handle, ""), 'c'); ok {
		code += "_c" + itoa(n)
	}
	return code
}

// postKind is the type of the post whose code is code (its first letter;
// a code of the contract's world, D... from a reels search included, is a
// reel when it starts with D, else a photo).
func postKind(code string) int {
	for i, t := range postTypes {
		if strings.HasPrefix(code, string(t.letter)) {
			return i
		}
	}
	return 1
}

// reelsOf is the position, in the posts list l, of the p-th reel (the
// posts whose index is a multiple of 3), and how many reels l holds.
func reelsOf(l creatorList) (first, count int64) {
	lo := -l.added
	first = lo + ((3-lo%3)%3+3)%3 // the smallest multiple of 3 >= lo
	if first >= l.day0 {
		return first, 0
	}
	return first, (l.day0-1-first)/3 + 1
}

// highlightCount is how many highlights handle lists (its h<N>, else 0 to
// 5), highlightIDAt the id at index i: 19 digits starting with 1, its
// media_count the value of its last two digits, as the highlight detail
// says.
func highlightCount(handle string) int64 {
	if n, ok := countToken(splitTokens(handle, ""), 'h'); ok {
		return min(n, 100)
	}
	return pick("account", handle, "highlights", 6)
}

func highlightIDAt(handle string, i int64) string {
	return digitsAt('1', hashOf("account", handle, "highlights"), i)
}

// webvtt is a transcript of the video id: three timed cues.
func webvtt(id string) string {
	var b strings.Builder
	b.WriteString("WEBVTT\n")
	for i := range int64(3) {
		start := 2 * i
		b.WriteString("\n00:00:0" + itoa(start) + ".000 --> 00:00:0" + itoa(start+2) + ".000\n")
		b.WriteString(sentence(hashOf("video", id, "transcript", itoa(i)), 3, 9) + "\n")
	}
	return b.String()
}

// pageOf is the page at off of a list of total items, item i being at(i).
func pageOf[T any](w *World, off, total int64, at func(i int64) T) ([]T, Window) {
	win := w.Page(off, total)
	out := make([]T, 0, win.Len())
	for i := win.Start; i < win.End; i++ {
		out = append(out, at(i))
	}
	return out, win
}

// shown is a list's length as its owner's lists show it: none when
// private.
func shown(a Account, n int64) int64 {
	if a.Private {
		return 0
	}
	return n
}

// CreatorVideos is the page at off of account a's videos, newest first.
func (w *World) CreatorVideos(a Account, off int64) ([]Video, Window) {
	l := w.videoList(a)
	return pageOf(w, off, shown(a, l.total()), w.creatorVideos(a, l))
}

// creatorVideos is the video at position p of account a's videos l; in
// the content world a video added after day 0 is dated on its day, in
// the others by its place in the list (content_time.go).
func (w *World) creatorVideos(a Account, l creatorList) func(p int64) Video {
	var cum []int64
	if w.content && l.added > 0 {
		cum = w.mediaCum(a, videoCounter, 'v')
	}
	seed := creatorVideoSeed(a.Handle)
	return func(p int64) Video {
		i := l.index(p)
		id := digitsAt('7', seed, i)
		if cum != nil && i < 0 {
			return w.videoAt(id, a.Handle, newTime(cum, i, 0, "video", id), true)
		}
		return w.videoAt(id, a.Handle, w.postedAt(l, i), false) // its place in the list (content_time.go)
	}
}

// VideoComments is the page at off of the comments under video id by
// author, and their number; each says how many replies it has.
func (w *World) VideoComments(id, author string, off int64) ([]Comment, Window, int64) {
	if w.content {
		return w.contentVideoComments(id, author, off)
	}
	total := videoComments(id, author)
	posted := w.Video(id, author).CreateTime
	seed := hashOf("video", id, "comments")
	out, win := pageOf(w, off, total, func(i int64) Comment {
		return w.videoComment(seed, i, digitsAt('7', seed, i), posted)
	})
	return out, win, total
}

// VideoCommentReplies is the page at off of the replies to comment cid
// of video id by author, and their number.
func (w *World) VideoCommentReplies(id, author, cid string, off int64) ([]Comment, Window, int64) {
	if w.content {
		return w.contentVideoCommentReplies(id, author, cid, off)
	}
	total := commentReplies(cid)
	posted := w.Video(id, author).CreateTime
	seed := hashOf("comment", cid, "replies")
	out, win := pageOf(w, off, total, func(j int64) Comment {
		return w.videoReply(posted, cid, j, digitsAt('7', seed, j))
	})
	return out, win, total
}

// videoReply is reply j (id rid) to comment cid of a video posted at
// posted, as the other worlds make it: within a month after a day past
// the video.
func (w *World) videoReply(posted int64, cid string, j int64, rid string) Comment {
	return Comment{ID: rid, Text: sentence(hashOf("comment", rid, "text"), 1, 8), User: handleAt(hashOf("comment", cid, "replies"), j),
		CreatedAt: posted + 86400 + pick("comment", rid, "createdAt", 30*86400),
		Likes:     w.grow("comment", rid, "likeCount", 100, 1), Parent: cid}
}

// VideoTranscript is the transcript of video id by author: nil when the
// author's handle has the token nospeech.
func VideoTranscript(id, author string) *string {
	if hasToken(splitTokens(author, ""), "nospeech") {
		return nil
	}
	t := webvtt(id)
	return &t
}

// Post is a photo-sharing post (a reel, a photo or a carousel) as the
// lists and the post endpoint show it.
type Post struct {
	PK, Code, Caption, Owner string
	TakenAt                  int64
	MediaType                int64 // 2 a reel, 1 a photo, 8 a carousel
	ProductType              string
	Comments, Likes          int64
	Plays                    int64 // a reel's; 0 otherwise
}

// Post is the post code by owner: derived from the code, so every answer
// that shows the post agrees.
func (w *World) Post(code, owner string) Post {
	p := w.post(code, owner)
	if at, ok := w.creatorPostTime(owner, code); ok {
		p.TakenAt = at // its place in its owner's list (content_time.go)
	}
	return p
}

// post is the post code by owner, as a search shows it.
func (w *World) post(code, owner string) Post {
	t := postTypes[postKind(code)]
	p := Post{PK: digitsAt('3', hashOf("post", code, "pk"), 0), Code: code,
		Caption: sentence(hashOf("post", code, "caption"), 3, 12), Owner: owner, TakenAt: takenAt("post", code),
		MediaType: t.mediaType, ProductType: t.productType, Comments: w.CommentCount(code),
		Likes: w.grow("post", code, "likeCount", 10_000, 50)}
	if t.mediaType == 2 {
		p.Plays = w.grow("reel", code, "playCount", 1_000_000, 10_000)
	}
	return p
}

// PostOwner is the owner of a post known by its code alone.
func PostOwner(code string) string { return handleAt(hashOf("post", code, "owner"), 0) }

// CreatorPosts is the page at off of account a's posts (reels included),
// newest first.
func (w *World) CreatorPosts(a Account, off int64) ([]Post, Window) {
	l := w.postList(a)
	return pageOf(w, off, shown(a, l.total()), func(p int64) Post {
		return w.creatorPost(l, a.Handle, l.index(p))
	})
}

// CreatorReels is the page at off of account a's reels: its posts that
// are reels, in their order.
func (w *World) CreatorReels(a Account, off int64) ([]Post, Window) {
	l := w.postList(a)
	first, total := reelsOf(l)
	return pageOf(w, off, shown(a, total), func(p int64) Post {
		return w.creatorPost(l, a.Handle, first+3*p)
	})
}

// PostCommentReplies is the page at off of the replies to comment cid of
// the post code: all of its Children.
func (w *World) PostCommentReplies(code, cid string, off int64) ([]Comment, Window) {
	if law, ok := w.postCommentLaw(code); ok {
		return w.contentPostReplies(code, cid, law, func(total int64) Window { return w.Page(off, total) })
	}
	return pageOf(w, off, PostReplies(cid), func(j int64) Comment { return w.PostReply(code, cid, j) })
}

// FirstPostReplies are the first n replies to comment cid of the post
// code (those a comment shows with include_replies), as its replies
// endpoint lists them.
func (w *World) FirstPostReplies(code, cid string, n int64) []Comment {
	if law, ok := w.postCommentLaw(code); ok {
		out, _ := w.contentPostReplies(code, cid, law, func(total int64) Window { return Paginate(0, total, n) })
		return out
	}
	out := make([]Comment, 0, n)
	for j := range n {
		out = append(out, w.PostReply(code, cid, j))
	}
	return out
}

// Highlights are the ids of account a's highlights (none when private).
func Highlights(a Account) []string {
	n := shown(a, highlightCount(a.Handle))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, highlightIDAt(a.Handle, i))
	}
	return out
}
