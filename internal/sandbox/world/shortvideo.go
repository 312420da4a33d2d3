package world

import (
	"cmp"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
)

// The short-video platform's answers, as values both dialects encode: the
// contract's endpoints 1-12 (docs/upstream.md) and what the real service
// serves of them.

// FeedSize is the fixed length of the trending feed, popular videos and
// popular creators lists.
const FeedSize = 20

// The platform's site (creator pages) and media host (avatars, song
// covers and sounds).
const (
	SVSite = "https://www.shortvideo.example"
	cdn    = "https://cdn.shortvideo.example"
)

// Avatar is the picture of the account whose id is id.
func Avatar(id string) string { return cdn + "/avatar/" + id + ".jpeg" }

// Video is a video: every field but the author derives from the id, so a
// video looks the same in every list.
type Video struct {
	ID         string
	Desc       string
	CreateTime int64
	Plays      int64
	Diggs      int64
	Comments   int64
	Shares     int64
	Author     string // its handle
}

// Video is the video with that id; author "" means the hashed author of
// the id.
func (w *World) Video(id, author string) Video {
	if author == "" {
		// Not found by its creator's list: no list place to date it by.
		author = handleAt(hashOf("video", id, "author"), 0)
		return w.videoAt(id, author, unlistedVideoTime(id), false)
	}
	posted, fresh := w.videoPosted(id, author)
	return w.videoAt(id, author, posted, fresh)
}

// videoAt is the video id by author posted at posted (fresh: added to
// its author's list after day 0). Its comment count is its comments
// list's length; in the content world its comments and their replies.
func (w *World) videoAt(id, author string, posted int64, fresh bool) Video {
	comments := videoComments(id, author)
	if w.content {
		comments = w.videoCommentCount(id, author, posted, fresh)
	}
	r := rng{hashOf("video", id, "tags")}
	return Video{
		ID:         id,
		Desc:       sentence(hashOf("video", id, "desc"), 3, 9) + " #" + r.word() + " #" + r.word(),
		CreateTime: posted,
		Plays:      w.grow("video", id, "playCount", 1_000_000, 10_000),
		Diggs:      w.grow("video", id, "diggCount", 100_000, 1_000),
		Comments:   comments,
		Shares:     pick("video", id, "shareCount", 2_000),
		Author:     author,
	}
}

// videosAt builds the videos of list seed at ranks [win.Start, win.End),
// rank i holding the list's item order.at(i).
func (w *World) videosAt(seed uint64, win Window, order permutation) []Video {
	out := make([]Video, 0, win.Len())
	for i := win.Start; i < win.End; i++ {
		out = append(out, w.Video(digitsAt('7', seed, order.at(i)), ""))
	}
	return out
}

// ReadKeyword normalizes the search term raw of parameter name (see
// KeywordOf); a blank one is 400.
func ReadKeyword(p *api.Params, raw, name string) string {
	kw := KeywordOf(raw)
	if kw == "" {
		p.Fail("parameter %q must not be blank", name)
	}
	return kw
}

// HashtagCID is the cid of hashtag name, as the videos carrying it show
// it.
func HashtagCID(name string) string { return digitsAt('1', hashOf("hashtag", name, "cid"), 0)[:7] }

// VideoSong is the sound of a video found outside a song's list.
func VideoSong(videoID string) string { return digitsAt('6', hashOf("video", videoID, "music"), 0) }

// TcmID is handle's id on the platform's creator marketplace.
func TcmID(handle string) string { return digitsAt('7', hashOf("account", handle, "tcm"), 0) }

// Keyword search filters: the values of date_posted and sort_by.
var (
	DatePostedValues = []string{"yesterday", "this-week", "this-month", "last-3-months", "last-6-months", "all-time"}
	SortByValues     = []string{"relevance", "most-liked", "date-posted"}
)

// KeywordQuery is a keyword search: the term, the filters that reorder
// its results (the zero Filter, or all-time, relevance and no region,
// keeps the rank), whether the answer is trimmed, and the offset.
type KeywordQuery struct {
	Keyword string
	Filter
	Trim   bool
	Offset int64
}

// Filter is date_posted, sort_by and region.
type Filter struct{ DatePosted, SortBy, Region string }

// ReadKeywordQuery reads a keyword search as both dialects name its
// parameters, the term being raw (of parameter query): the filters, trim
// and cursor.
func ReadKeywordQuery(p *api.Params, raw string) KeywordQuery {
	return KeywordQuery{Keyword: ReadKeyword(p, raw, "query"),
		Filter: Filter{DatePosted: p.Enum("date_posted", DatePostedValues), SortBy: p.Enum("sort_by", SortByValues),
			Region: p.Country("region")},
		Trim: p.Bool("trim"), Offset: p.Offset("cursor")}
}

// key is the permutation key of the filter for keyword kw: 0 keeps the
// rank.
func (f Filter) key(kw string) uint64 {
	date, sortBy, region := cmp.Or(f.DatePosted, "all-time"), cmp.Or(f.SortBy, "relevance"), strings.ToUpper(f.Region)
	if date == "all-time" && sortBy == "relevance" && region == "" {
		return 0
	}
	return hashOf("search.order", kw, date, sortBy, region) | 1
}

// KeywordSearch is the page of the videos a keyword search finds,
// reordered by its filter; the filters only reorder the result set.
func (w *World) KeywordSearch(kq KeywordQuery) ([]Video, Window) {
	total := searchTotal("keyword", kq.Keyword, 120)
	win := w.Page(kq.Offset, total)
	seed := hashOf("search", "keyword", kq.Keyword, "items")
	return w.videosAt(seed, win, newPermutation(total, kq.Filter.key(kq.Keyword))), win
}

// Hashtag is a hashtag and its counters; the 7-day growth is what the
// counters gained over the last 7 world days (7 * their daily rate).
type Hashtag struct {
	Name              string
	Views, Videos     int64
	Views7d, Videos7d int64
}

func (w *World) hashtag(name string) Hashtag {
	return Hashtag{
		Name:     name,
		Views:    w.grow("hashtag", name, "viewCount", 1_000_000_000, 1_000_000),
		Videos:   w.grow("hashtag", name, "videoCount", 1_000_000, 1_000),
		Views7d:  7 * rate("hashtag", name, "viewCount", 1_000_000),
		Videos7d: 7 * rate("hashtag", name, "videoCount", 1_000),
	}
}

// keywordBase is the keyword without its control tokens (n<N>, mixed), as a
// slug for hashtag names; "tag" when nothing is left.
func keywordBase(kw string) string {
	var b strings.Builder
	for _, t := range splitTokens(kw, " ") {
		if _, isCount := countToken([]string{t}, 'n'); isCount || t == "mixed" {
			continue
		}
		b.WriteString(slug(t))
	}
	if b.Len() == 0 {
		return "tag"
	}
	return b.String()
}

// hashtagName is the i-th hashtag of a search: base + a word + i (i omitted
// for 0). The word is letters only, so the trailing digits make names
// distinct within a list.
func hashtagName(kind, kw string, i int64) string {
	r := rng{hashOf("search", kind, kw, "name", itoa(i))}
	name := keywordBase(kw) + r.word()
	if i > 0 {
		name += itoa(i)
	}
	return name
}

// HashtagSearch is the page at off of the hashtags a search for kw finds.
func (w *World) HashtagSearch(kw string, off int64) ([]Hashtag, Window) {
	return pageOf(w, off, searchTotal("hashtag", kw, 120), func(i int64) Hashtag {
		return w.hashtag(hashtagName("hashtag", kw, i))
	})
}

// HashtagVideos is the page at off of the videos under hashtag tag: as
// many as a hashtag search for it finds hashtags, so n<N> sets the count.
func (w *World) HashtagVideos(tag string, off int64) ([]Video, Window) {
	win := w.Page(off, searchTotal("hashtag", tag, 120))
	return w.videosAt(hashOf("search", "hashtag.videos", tag), win, permutation{}), win
}

// TopResult is an entry of a top search: its Type says which field holds
// it (a sound's id and title are Sound and SoundTitle).
type TopResult struct {
	Type       string // video, user, hashtag or sound
	Video      Video
	User       string
	Hashtag    Hashtag
	Sound      string
	SoundTitle string
}

var topCycle = []string{"video", "user", "hashtag", "sound"}

// topType is the kind of rank i: the cycle video, user, hashtag, sound with
// token "mixed"; else user when H("search","top",kw,"type",i) % 3 == 0,
// video otherwise.
func topType(kw string, mixed bool, i int64) string {
	if mixed {
		return topCycle[i%4]
	}
	if hashOf("search", "top", kw, "type", itoa(i))%3 == 0 {
		return "user"
	}
	return "video"
}

// TopSearch is the page at off of a top search. The list order is the
// platform's rank (index 0 is rank 1), never reordered.
func (w *World) TopSearch(kw string, off int64) ([]TopResult, Window) {
	mixed := hasToken(splitTokens(kw, " "), "mixed")
	seed := hashOf("search", "top", kw, "items")
	return pageOf(w, off, searchTotal("top", kw, 120), func(i int64) TopResult {
		r := TopResult{Type: topType(kw, mixed, i)}
		switch r.Type {
		case "video":
			r.Video = w.Video(digitsAt('7', seed, i), "")
		case "user":
			r.User = handleAt(seed, i)
		case "hashtag":
			r.Hashtag = w.hashtag(hashtagName("top", kw, i))
		case "sound":
			r.Sound = digitsAt('6', seed, i)
			r.SoundTitle = SongTitle(r.Sound)
		}
		return r
	})
}

// FollowPage is a page of a follow list: its entries' handles and its
// window. Loop marks a list that answers the very cursor it was asked
// with (its Next is then the offset asked).
type FollowPage struct {
	Handles []string
	Window
	Loop bool
}

// Follows is the page at off of the followers or following (kind) of
// handle. Precedence of the list tokens: private (empty), loop, emptymore,
// endless.
func (w *World) Follows(handle, kind string, off int64) (Account, FollowPage, error) {
	a, err := w.Account(handle)
	if err != nil {
		return a, FollowPage{}, err
	}
	total, list := a.Followers, a.followersList
	if kind == "following" {
		total, list = a.Following, a.followingList
	}
	var p FollowPage
	switch {
	case a.Private:
		p.Window = w.Page(off, 0)
	case a.loop: // a full page, and the very cursor it was asked with
		p.Window, p.Loop = Window{Start: off, End: off + w.pageSize, Next: off, More: true}, true
	case a.emptyMore: // no items, a fresh cursor, more forever
		p.Window = Window{Start: off, End: off, Next: off + w.pageSize, More: true}
	case a.endless: // full pages past the count, forever
		p.Window = Window{Start: off, End: off + w.pageSize, Next: off + w.pageSize, More: true}
	default:
		p.Window = w.Page(off, total)
	}
	p.Handles = entriesAt(hashOf(kind, handle), list.indexes(p.Start, p.End))
	return a, p, nil
}

// songLength is the number of videos of a song at day 0: v<N>, else
// H("song", id, "videos") % 200; tokenized says which. growth is r<N>: N
// videos added per world day at the head of its list (0 without).
func songLength(id string) (n, growth int64, tokenized bool) {
	toks := splitTokens(id, "")
	growth, _ = growthToken(toks)
	if n, ok := countToken(toks, 'v'); ok {
		return n, growth, true
	}
	return pick("song", id, "videos", 200), growth, false
}

// SongExists answers 404 for the songs that do not exist: ids starting
// with "missing".
func SongExists(id string) error {
	if strings.HasPrefix(id, "missing") {
		return api.NotFound("song not found")
	}
	return nil
}

// SongVideos is the page at off of the videos of song id.
func (w *World) SongVideos(id string, off int64) ([]Video, Window) {
	n, growth, _ := songLength(id)
	seed := hashOf("song", id, "items")
	return pageOf(w, off, n+growth*w.day, func(i int64) Video {
		return w.Video(digitsAt('7', seed, w.headIndex(i, growth)), "")
	})
}

// SongTitle is the title of song id.
func SongTitle(id string) string { return sentence(hashOf("song", id, "title"), 1, 4) }

// Song is a song and where its cover and sound are.
type Song struct {
	ID, Title, Author                          string
	Duration, Usage                            int64
	CoverLarge, CoverMedium, CoverThumb, Sound string
}

// Song is song id. Its usage = list length + extra + rate*day, extra 0
// with v<N> (so the usage is N at day 0), else H("song",id,"usageCount") %
// 5000; rate = 1 + H(...".rate") % 100.
func (w *World) Song(id string) Song {
	n, growth, tokenized := songLength(id)
	n += growth * w.day
	usage := n + rate("song", id, "usageCount", 100)*w.day
	if !tokenized {
		usage += pick("song", id, "usageCount", 5_000)
	}
	media := cdn + "/music/" + url.PathEscape(id)
	return Song{ID: id, Title: SongTitle(id), Author: Nickname(handleAt(hashOf("song", id, "author"), 0)),
		Duration: 5 + pick("song", id, "duration", 176), Usage: usage,
		CoverLarge: media + "/cover-large.jpeg", CoverMedium: media + "/cover-medium.jpeg",
		CoverThumb: media + "/cover-thumb.jpeg", Sound: media + "/play.mp3"}
}

// Feed is FeedSize videos of the named feed (trending, popular) for the
// current world day.
func (w *World) Feed(name string) []Video {
	return w.videosAt(hashOf("feed", name, itoa(w.day)), Window{End: FeedSize}, permutation{})
}

// PopularCreators are the FeedSize creators of the day: hashed handles,
// so their counts are their profiles'.
func (w *World) PopularCreators() []Account {
	seed := hashOf("feed", "creators", itoa(w.day))
	out := make([]Account, 0, FeedSize)
	for i := range int64(FeedSize) {
		a, _ := w.Account(handleAt(seed, i)) // a "u..." handle always exists
		out = append(out, a)
	}
	return out
}

// AccountID is the numeric id of an account on the short-video platform.
func AccountID(handle string) string { return digitsAt('6', hashOf("account", handle, "id"), 0) }

// Hearts is the heartCount of account a at the world's day.
func (w *World) Hearts(a Account) int64 { return w.counter(a, heartCounter) }

// profileItems is how many recent videos a profile lists.
const profileItems = 3

// Profile is a short-video account as its profile shows it.
type Profile struct {
	Account
	ID, Signature         string
	Hearts, Videos, Diggs int64
	Friends               int64
	Recent                []Video // the newest of its videos; none when private
}

// Profile is account a's profile.
func (w *World) Profile(a Account) Profile {
	h, videos := a.Handle, w.videoList(a)
	p := Profile{Account: a, ID: AccountID(h), Signature: signature(h), Hearts: w.Hearts(a), Videos: videos.total(),
		Diggs: w.counter(a, diggCounter), Friends: pick("account", h, "friendCount", 100),
		Recent: make([]Video, 0, profileItems)}
	if !a.Private {
		at := w.creatorVideos(a, videos)
		for i := range min(p.Videos, profileItems) {
			p.Recent = append(p.Recent, at(i))
		}
	}
	return p
}

func signature(h string) string { return sentence(hashOf("account", h, "signature"), 3, 8) }

// Live is an account's live state: the zero Live when it is not live.
type Live struct {
	IsLive         bool
	Title          string
	Viewers, Start int64
	RoomID         string
}

// Live is the live state of account a.
func (w *World) Live(a Account) Live {
	if !a.Live {
		return Live{}
	}
	h := a.Handle
	return Live{IsLive: true, Title: sentence(hashOf("account", h, "liveTitle"), 2, 6),
		Viewers: 1 + w.grow("account", h, "viewerCount", 5_000, 100),
		Start:   w.Now() - 60 - pick("account", h, "startTime", 7_200),
		RoomID:  digitsAt('7', hashOf("account", h, "room"), w.day)}
}
