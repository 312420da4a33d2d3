package sandbox

import (
	"strings"
)

// The world's creator content, served by the real preset's own endpoints
// (real_content.go; the contract has none): a creator's videos, posts and
// reels, the comments under a video and their replies, transcripts and
// highlights. Every answer derives from hashes of the keys, as the rest of
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
func (w *world) creatorMedia(a account, c counterLaw, letter byte) creatorList {
	base := pick("account", a.handle, c.field, c.baseMod)
	added := w.counter(a, c) - base
	toks := splitTokens(a.handle, "")
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
func (w *world) videoList(a account) creatorList { return w.creatorMedia(a, videoCounter, 'v') }
func (w *world) postList(a account) creatorList  { return w.creatorMedia(a, postsCounter, 'p') }

// creatorVideoID is the id of the video at index i of handle's videos.
func creatorVideoID(handle string, i int64) string {
	return digitsAt('7', hashOf("account", handle, "items"), i)
}

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
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	v := mix64(hashOf("account", handle, "posts") + uint64(i))
	b := []byte{postTypes[postType(i)].letter}
	for range 11 {
		b = append(b, digits[v%62])
		v /= 62
	}
	if n, ok := countToken(splitTokens(handle, ""), 'c'); ok {
		b = append(b, "_c"+itoa(n)...)
	}
	return string(b)
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
