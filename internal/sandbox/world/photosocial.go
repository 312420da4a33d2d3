package world

import (
	"cmp"
	"html"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
)

// The photo-sharing platform's answers, as values both dialects encode:
// the contract's endpoints 13-18 (docs/upstream.md) and what the real
// service serves of them.

// ReelsPageSize is the fixed number of reels per page of the reels search;
// the upstream does not let the caller choose it.
const ReelsPageSize = 12

// The platform's site (post URLs, embeds) and media host.
const (
	PSSite = "https://www.photosocial.example"
	PSCDN  = "https://cdn.photosocial.example"
)

// PSAccountID is the id of an account on the photo-sharing platform.
func PSAccountID(handle string) string { return digitsAt('5', hashOf("account", handle, "psId"), 0) }

// PSProfile is a photo-sharing account as its profile shows it; Contact
// is nil unless the account is a business.
type PSProfile struct {
	Account
	ID, FullName, Biography, Picture string
	Posts                            int64
	Contact                          *Contact
}

// Contact is a business account's category and contact fields.
type Contact struct{ Category, Email, Phone, PublicEmail string }

// PSProfile is the photo-sharing profile of account a.
func (w *World) PSProfile(a Account) PSProfile {
	h := a.Handle
	id := PSAccountID(h)
	p := PSProfile{Account: a, ID: id, FullName: Nickname(h), Biography: signature(h),
		Picture: PSCDN + "/profile/" + id + ".jpg", Posts: w.postList(a).total()}
	if a.Business {
		host := cmp.Or(slug(h), "account") + ".example"
		p.Contact = &Contact{Category: categories[pick("account", h, "category", uint64(len(categories)))],
			Email: "contact@" + host, Phone: "+1555" + digitsAt('0', hashOf("account", h, "phone"), 0)[12:],
			PublicEmail: "hello@" + host}
	}
	return p
}

// PostCode reads the url parameter: an http(s) URL with a host whose path
// holds a segment p, reel or reels followed by the code
// ([A-Za-z0-9_-]+). Any host is accepted here (the real dialect checks
// its own).
func PostCode(p *api.Params) string {
	raw := p.Required("url")
	if !p.OK() {
		return ""
	}
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		for i := 0; i+1 < len(segs); i++ {
			if (segs[i] == "p" || segs[i] == "reel" || segs[i] == "reels") && isCode(segs[i+1]) {
				return segs[i+1]
			}
		}
	}
	p.Fail("parameter %q must be a post or reel URL like %s/p/<code>/", "url", PSSite)
	return ""
}

func isCode(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// PostExists answers 404 for the posts that do not exist: codes starting
// with "missing".
func PostExists(code string) error {
	if strings.HasPrefix(code, "missing") {
		return api.NotFound("post not found")
	}
	return nil
}

// takenAt is when a post or reel was published: up to a year before day 0.
func takenAt(kind, code string) int64 { return WorldEpoch - pick(kind, code, "takenAt", 365*86400) }

// Comment is a comment (or a reply) under a post.
type Comment struct {
	ID, Text, User  string
	CreatedAt       int64
	Likes, Children int64
	Parent          string // a reply's comment; "" for a comment
}

// commentsOf is the length of the comment list of the post code and its
// growth a day: its c<N> (and r<N>), else hash-derived.
func commentsOf(code string) (total, growth int64) {
	toks := splitTokens(code, "")
	total, ok := countToken(toks, 'c')
	if !ok {
		total = pick("post", code, "comments", 100)
	}
	growth, _ = growthToken(toks)
	return total, growth
}

// CommentCount is the comment_count of the post code at the world's
// day: the length of its comment list; in the content world its comments
// and their replies (postCommentCount).
func (w *World) CommentCount(code string) int64 {
	if law, ok := w.postCommentLaw(code); ok {
		return w.postCommentCount(code, law)
	}
	total, growth := commentsOf(code)
	return total + growth*w.day
}

// PostComments is the page at off of the comments under the post code,
// newest added first.
func (w *World) PostComments(code string, off int64) ([]Comment, Window) {
	if law, ok := w.postCommentLaw(code); ok {
		return w.contentPostComments(code, law, off)
	}
	total, growth := commentsOf(code)
	seed := hashOf("post", code, "comments")
	posted := takenAt("post", code)
	return pageOf(w, off, total+growth*w.day, func(p int64) Comment {
		i := w.headIndex(p, growth)
		id := digitsAt('1', seed, i)
		c := w.postComment(code, seed, i, id, posted)
		if i < 0 { // the k-th comment added after day 0 (k = -1-i), on day k/growth
			k := -1 - i
			c.CreatedAt = WorldEpoch + k*86400/growth + pick("comment", id, "createdAt", uint64(max(1, 86400/growth)))
		}
		return c
	})
}

// postComment is comment i (id id) of the post code posted at posted, as
// the linear world makes it.
func (w *World) postComment(code string, seed uint64, i int64, id string, posted int64) Comment {
	return Comment{ID: id, Text: sentence(hashOf("comment", id, "text"), 1, 12), User: handleAt(seed, i),
		CreatedAt: posted + 600*i + pick("comment", id, "createdAt", 600), Likes: w.grow("comment", id, "likeCount", 1_000, 5),
		Children: PostReplies(id)}
}

// PostReply is reply j to comment cid of the post code: derived from the
// comment, so the replies a comment shows and those its replies endpoint
// lists are the same; posted within a month after a day past the post.
func (w *World) PostReply(code, cid string, j int64) Comment {
	seed := hashOf("comment", cid, "replies")
	id := digitsAt('1', seed, j)
	return Comment{ID: id, Text: sentence(hashOf("comment", id, "text"), 1, 8), User: handleAt(seed, j),
		CreatedAt: takenAt("post", code) + 86400 + pick("comment", id, "createdAt", 30*86400),
		Likes:     w.grow("comment", id, "likeCount", 100, 1), Parent: cid}
}

// PostReplies is how many replies the post comment cid has.
func PostReplies(cid string) int64 { return pick("comment", cid, "childCommentCount", 20) }

// Reel is a reel of a reels search.
type Reel struct {
	ID, Code, Caption, Owner string
	Plays, Likes, TakenAt    int64
	Duration                 float64 // seconds
}

// reelCode is a shortcode for the i-th reel of a list: "D" + base62 of
// mix64(seed+i), distinct within the list and never a token.
func reelCode(seed uint64, i int64) string { return "D" + base62(mix64(seed+uint64(i))) }

// base62 is 11 base-62 digits of v, the lowest first.
func base62(v uint64) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 0, 11)
	for range 11 {
		b = append(b, digits[v%62])
		v /= 62
	}
	return string(b)
}

// ReelsSearch is page page (from 1) of a reels search for kw,
// ReelsPageSize reels a page; a page past the end is empty.
func (w *World) ReelsSearch(kw string, page int64) []Reel {
	total := searchTotal("reels", kw, 150)
	win := Window{}
	if page-1 < (total+ReelsPageSize-1)/ReelsPageSize {
		start := (page - 1) * ReelsPageSize
		win = Window{Start: start, End: min(start+ReelsPageSize, total)}
	}
	idSeed, codeSeed := hashOf("search", "reels", kw, "items"), hashOf("search", "reels", kw, "codes")
	out := make([]Reel, 0, win.Len())
	for i := win.Start; i < win.End; i++ {
		code := reelCode(codeSeed, i)
		out = append(out, Reel{ID: digitsAt('3', idSeed, i), Code: code,
			Caption: sentence(hashOf("reel", code, "caption"), 2, 10), Owner: handleAt(hashOf("reel", code, "owner"), 0),
			Plays: w.grow("reel", code, "playCount", 1_000_000, 10_000), Likes: w.grow("reel", code, "likeCount", 100_000, 1_000),
			TakenAt: takenAt("reel", code), Duration: 3 + float64(pick("reel", code, "duration", 900))/10})
	}
	return out
}

// Transcript is the speech of one media of a post.
type Transcript struct{ ID, Code, Text string }

// transcriptMax caps t<N>: transcripts are not paginated, and a body must
// stay O(page) whatever the token says.
const transcriptMax = 1000

// Transcripts of the post code: token nospeech -> none, t<N> ->
// min(N, transcriptMax) (one per carousel item), else one.
func Transcripts(code string) []Transcript {
	toks := splitTokens(code, "")
	n := int64(1)
	if hasToken(toks, "nospeech") {
		n = 0
	} else if c, ok := countToken(toks, 't'); ok {
		n = min(c, transcriptMax)
	}
	seed := hashOf("post", code, "media")
	out := make([]Transcript, 0, n)
	for i := range n {
		id := digitsAt('3', seed, i)
		out = append(out, Transcript{ID: id, Code: code, Text: sentence(hashOf("transcript", id, "text"), 5, 20)})
	}
	return out
}

// Embed is the markup that embeds handle's profile.
func Embed(h string) string {
	link := PSSite + "/" + url.PathEscape(h) + "/"
	return `<blockquote class="photosocial-media" data-instgrm-permalink="` + html.EscapeString(link) +
		`" data-instgrm-version="14"><a href="` + html.EscapeString(link) + `">@` + html.EscapeString(h) +
		` on photosocial</a></blockquote><script async src="` + PSSite + `/embed.js"></script>`
}

// Highlight is a highlight: its id (the digits), title, owner and items.
type Highlight struct {
	ID, Title, Owner string
	Items            []HighlightItem
}

// HighlightItem is a photo (MediaType 1) or a video (2) of a highlight.
type HighlightItem struct {
	ID        string
	MediaType int64
	TakenAt   int64
}

// ReadHighlightID reads the id parameter of a highlight: the bare digits;
// ids starting with 404 are not found.
func ReadHighlightID(p *api.Params) string {
	id := p.Required("id")
	switch {
	case !p.OK():
	case !api.IsDigits(id):
		p.Fail("parameter %q must be the digits of a highlight id, without the highlight: prefix", "id")
	case strings.HasPrefix(id, "404"):
		p.Keep(api.NotFound("highlight not found"))
	default:
		return id
	}
	return ""
}

// Highlight is highlight id: as many items as the value of its last two
// digits.
func (w *World) Highlight(id string) Highlight {
	n := int64(id[len(id)-1] - '0')
	if len(id) >= 2 {
		n += 10 * int64(id[len(id)-2]-'0')
	}
	seed := hashOf("highlight", id, "items")
	h := Highlight{ID: id, Title: HighlightTitle(id), Owner: handleAt(hashOf("highlight", id, "owner"), 0),
		Items: make([]HighlightItem, 0, n)}
	for i := range n {
		itemID := digitsAt('3', seed, i)
		item := HighlightItem{ID: itemID, MediaType: 1, TakenAt: takenAt("media", itemID)}
		if hashOf("highlight", id, "type", itoa(i))%2 == 0 {
			item.MediaType = 2
		}
		h.Items = append(h.Items, item)
	}
	return h
}

// HighlightTitle is the title of highlight id.
func HighlightTitle(id string) string { return sentence(hashOf("highlight", id, "title"), 1, 3) }
