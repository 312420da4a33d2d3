package sandbox

import (
	"cmp"
	"net/url"
	"strings"
)

// Response shapes of the short-video platform. They are the sandbox's own
// types, field names copied from the contract (docs/upstream.md), never shared with the
// client, so a misspelled field on either side fails the tests.

type videoJSON struct {
	ID         string         `json:"id"`
	Desc       string         `json:"desc"`
	CreateTime int64          `json:"createTime"`
	Stats      videoStatsJSON `json:"stats"`
	Author     authorJSON     `json:"author"`
}

type videoStatsJSON struct {
	PlayCount    int64 `json:"playCount"`
	DiggCount    int64 `json:"diggCount"`
	CommentCount int64 `json:"commentCount"`
	ShareCount   int64 `json:"shareCount"`
}

type authorJSON struct {
	UniqueID string `json:"uniqueId"`
	Nickname string `json:"nickname"`
}

// trimmedVideoJSON is a keyword search (form B) video with trim=true.
type trimmedVideoJSON struct {
	ID    string `json:"id"`
	Desc  string `json:"desc"`
	Stats struct {
		PlayCount int64 `json:"playCount"`
	} `json:"stats"`
	Author struct {
		UniqueID string `json:"uniqueId"`
	} `json:"author"`
}

type videoPageJSON struct {
	Videos  []videoJSON `json:"videos"`
	Cursor  string      `json:"cursor"`
	HasMore bool        `json:"hasMore"`
}

// videoPageFormBJSON is keyword search form B: the cursor is a number.
type videoPageFormBJSON struct {
	Videos  any   `json:"videos"`
	Cursor  int64 `json:"cursor"`
	HasMore bool  `json:"hasMore"`
}

type hashtagJSON struct {
	Name       string     `json:"name"`
	ViewCount  int64      `json:"viewCount"`
	VideoCount int64      `json:"videoCount"`
	Growth     growthJSON `json:"growth"`
}

// growthJSON is the hashtag growth signal: what the counters gained over
// the last 7 world days (7 * their daily rate).
type growthJSON struct {
	Views7d  int64 `json:"views7d"`
	Videos7d int64 `json:"videos7d"`
}

type hashtagPageJSON struct {
	Hashtags []hashtagJSON `json:"hashtags"`
	Cursor   string        `json:"cursor"`
	HasMore  bool          `json:"hasMore"`
}

type topVideoJSON struct {
	Type string `json:"type"`
	videoJSON
}

type topUserJSON struct {
	Type     string `json:"type"`
	UniqueID string `json:"uniqueId"`
	Nickname string `json:"nickname"`
	Verified bool   `json:"verified"`
}

type topHashtagJSON struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	ViewCount int64  `json:"viewCount"`
}

type topSoundJSON struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Title string `json:"title"`
}

type topPageJSON struct {
	Results []any  `json:"results"`
	Cursor  string `json:"cursor"`
	HasMore bool   `json:"hasMore"`
}

type followEntryJSON struct {
	UniqueID string `json:"uniqueId"`
	Nickname string `json:"nickname"`
	Verified bool   `json:"verified"`
	SecUID   string `json:"secUid"`
}

type followersPageJSON struct {
	Followers []followEntryJSON `json:"followers"`
	Cursor    string            `json:"cursor"`
	HasMore   bool              `json:"hasMore"`
}

type followingPageJSON struct {
	Following []followEntryJSON `json:"following"`
	Cursor    string            `json:"cursor"`
	HasMore   bool              `json:"hasMore"`
}

type songJSON struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	AuthorName  string `json:"authorName"`
	Duration    int64  `json:"duration"`
	UsageCount  int64  `json:"usageCount"`
	CoverLarge  string `json:"coverLarge"`
	CoverMedium string `json:"coverMedium"`
	CoverThumb  string `json:"coverThumb"`
	PlayURL     string `json:"playUrl"`
}

type feedJSON struct {
	Videos []videoJSON `json:"videos"`
}

type creatorJSON struct {
	UniqueID      string `json:"uniqueId"`
	Nickname      string `json:"nickname"`
	FollowerCount int64  `json:"followerCount"`
	Verified      bool   `json:"verified"`
}

type creatorsJSON struct {
	Creators []creatorJSON `json:"creators"`
}

type profileJSON struct {
	Success  bool             `json:"success"`
	User     profileUserJSON  `json:"user"`
	Stats    profileStatsJSON `json:"stats"`
	ItemList []videoJSON      `json:"itemList"`
}

type profileUserJSON struct {
	ID             string `json:"id"`
	UniqueID       string `json:"uniqueId"`
	SecUID         string `json:"secUid"`
	Nickname       string `json:"nickname"`
	AvatarLarger   string `json:"avatarLarger"`
	Signature      string `json:"signature"`
	Verified       bool   `json:"verified"`
	PrivateAccount bool   `json:"privateAccount"`
}

type profileStatsJSON struct {
	FollowerCount  int64 `json:"followerCount"`
	FollowingCount int64 `json:"followingCount"`
	HeartCount     int64 `json:"heartCount"`
	VideoCount     int64 `json:"videoCount"`
	DiggCount      int64 `json:"diggCount"`
}

type liveJSON struct {
	IsLive      bool   `json:"isLive"`
	Title       string `json:"title"`
	ViewerCount int64  `json:"viewerCount"`
	StartTime   int64  `json:"startTime"`
}

const cdn = "https://cdn.shortvideo.example"

// video is the video with that id: every field but the author derives from
// the id, so a video looks the same in every list. author "" means the
// hashed author of the id.
func (w *world) video(id, author string) videoJSON {
	if author == "" {
		author = handleAt(hashOf("video", id, "author"), 0)
	}
	r := rng{hashOf("video", id, "tags")}
	return videoJSON{
		ID:         id,
		Desc:       sentence(hashOf("video", id, "desc"), 3, 9) + " #" + r.word() + " #" + r.word(),
		CreateTime: WorldEpoch - pick("video", id, "createTime", 365*86400),
		Stats: videoStatsJSON{
			PlayCount:    w.grow("video", id, "playCount", 1_000_000, 10_000),
			DiggCount:    w.grow("video", id, "diggCount", 100_000, 1_000),
			CommentCount: videoComments(id, author),
			ShareCount:   pick("video", id, "shareCount", 2_000),
		},
		Author: authorJSON{UniqueID: author, Nickname: nickname(author)},
	}
}

// videosAt builds the videos of list seed at ranks [win.start, win.end),
// rank i holding the list's item order.at(i).
func (w *world) videosAt(seed uint64, win window, order permutation) []videoJSON {
	out := make([]videoJSON, 0, win.end-win.start)
	for i := win.start; i < win.end; i++ {
		out = append(out, w.video(digitsAt('7', seed, order.at(i)), ""))
	}
	return out
}

// Keyword search form B enums.
var (
	datePostedValues = []string{"yesterday", "this-week", "this-month", "last-3-months", "last-6-months", "all-time"}
	sortByValues     = []string{"relevance", "most-liked", "date-posted"}
)

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

var _ = route("/shortvideo/search/keyword", (*world).searchKeyword) // 1

// searchKeyword is endpoint 1. A non-empty keyword selects form A (and form
// B's parameters are then ignored); otherwise query selects form B.
func (w *world) searchKeyword(q query) (reply, error) {
	if raw := q.get("keyword"); raw != "" {
		return w.searchKeywordA(q, raw)
	}
	if raw := q.get("query"); raw != "" {
		return w.searchKeywordB(q, raw)
	}
	return reply{}, badRequest("missing required parameter %q (or %q)", "keyword", "query")
}

func (w *world) searchKeywordA(q query, raw string) (reply, error) {
	kw := keywordOf(raw)
	if kw == "" {
		return reply{}, badRequest("parameter %q must not be blank", "keyword")
	}
	off, err := q.offset("cursor")
	if err != nil {
		return reply{}, err
	}
	total := searchTotal("keyword", kw, 120)
	win := paginate(off, total, w.pageSize)
	return billable(videoPageJSON{
		Videos:  w.videosAt(hashOf("search", "keyword", kw, "items"), win, permutation{}),
		Cursor:  itoa(win.next),
		HasMore: win.more,
	})
}

func (w *world) searchKeywordB(q query, raw string) (reply, error) {
	kw := keywordOf(raw)
	if kw == "" {
		return reply{}, badRequest("parameter %q must not be blank", "query")
	}
	date := q.get("date_posted")
	if date != "" && !oneOf(date, datePostedValues) {
		return reply{}, badRequest("parameter %q must be one of %s", "date_posted", strings.Join(datePostedValues, ", "))
	}
	sortBy := q.get("sort_by")
	if sortBy != "" && !oneOf(sortBy, sortByValues) {
		return reply{}, badRequest("parameter %q must be one of %s", "sort_by", strings.Join(sortByValues, ", "))
	}
	region := q.get("region")
	if region != "" {
		if !isCountryCode(region) {
			return reply{}, badRequest("parameter %q must be a two-letter country code", "region")
		}
		region = strings.ToUpper(region)
	}
	trim := false
	switch q.get("trim") {
	case "", "false":
	case "true":
		trim = true
	default:
		return reply{}, badRequest("parameter %q must be true or false", "trim")
	}
	off, err := q.offset("cursor")
	if err != nil {
		return reply{}, err
	}

	total := searchTotal("keyword", kw, 120)
	win := paginate(off, total, w.pageSize)
	// The result set is form A's; the filters only reorder it. No filter
	// (or all-time + relevance + no region) keeps form A's order.
	date, sortBy = cmp.Or(date, "all-time"), cmp.Or(sortBy, "relevance")
	var key uint64
	if date != "all-time" || sortBy != "relevance" || region != "" {
		key = hashOf("search.order", kw, date, sortBy, region) | 1
	}
	videos := w.videosAt(hashOf("search", "keyword", kw, "items"), win, newPermutation(total, key))
	body := videoPageFormBJSON{Videos: videos, Cursor: win.next, HasMore: win.more}
	if trim {
		t := make([]trimmedVideoJSON, len(videos))
		for i, v := range videos {
			t[i].ID, t[i].Desc = v.ID, v.Desc
			t[i].Stats.PlayCount = v.Stats.PlayCount
			t[i].Author.UniqueID = v.Author.UniqueID
		}
		body.Videos = t
	}
	return billable(body)
}

// isCountryCode accepts two ASCII letters, either case.
func isCountryCode(s string) bool {
	isLetter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	return len(s) == 2 && isLetter(s[0]) && isLetter(s[1])
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

func (w *world) hashtag(name string) hashtagJSON {
	return hashtagJSON{
		Name:       name,
		ViewCount:  w.grow("hashtag", name, "viewCount", 1_000_000_000, 1_000_000),
		VideoCount: w.grow("hashtag", name, "videoCount", 1_000_000, 1_000),
		Growth: growthJSON{
			Views7d:  7 * rate("hashtag", name, "viewCount", 1_000_000),
			Videos7d: 7 * rate("hashtag", name, "videoCount", 1_000),
		},
	}
}

var _ = route("/shortvideo/search/hashtag", (*world).searchHashtag) // 2

// searchHashtag is endpoint 2.
func (w *world) searchHashtag(q query) (reply, error) {
	kw, off, err := searchParams(q)
	if err != nil {
		return reply{}, err
	}
	win := paginate(off, searchTotal("hashtag", kw, 120), w.pageSize)
	out := make([]hashtagJSON, 0, win.end-win.start)
	for i := win.start; i < win.end; i++ {
		out = append(out, w.hashtag(hashtagName("hashtag", kw, i)))
	}
	return billable(hashtagPageJSON{Hashtags: out, Cursor: itoa(win.next), HasMore: win.more})
}

func searchParams(q query) (string, int64, error) {
	raw, err := q.required("keyword")
	if err != nil {
		return "", 0, err
	}
	kw := keywordOf(raw)
	if kw == "" {
		return "", 0, badRequest("parameter %q must not be blank", "keyword")
	}
	off, err := q.offset("cursor")
	return kw, off, err
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

var _ = route("/shortvideo/search/top", (*world).searchTop) // 3

// searchTop is endpoint 3. The list order is the platform's rank (index 0 is
// rank 1); the sandbox, like the service, never reorders it.
func (w *world) searchTop(q query) (reply, error) {
	kw, off, err := searchParams(q)
	if err != nil {
		return reply{}, err
	}
	mixed := hasToken(splitTokens(kw, " "), "mixed")
	win := paginate(off, searchTotal("top", kw, 120), w.pageSize)
	seed := hashOf("search", "top", kw, "items")
	out := make([]any, 0, win.end-win.start)
	for i := win.start; i < win.end; i++ {
		switch topType(kw, mixed, i) {
		case "video":
			out = append(out, topVideoJSON{Type: "video", videoJSON: w.video(digitsAt('7', seed, i), "")})
		case "user":
			h := handleAt(seed, i)
			out = append(out, topUserJSON{Type: "user", UniqueID: h, Nickname: nickname(h), Verified: verified(h)})
		case "hashtag":
			name := hashtagName("top", kw, i)
			out = append(out, topHashtagJSON{Type: "hashtag", Name: name, ViewCount: w.hashtag(name).ViewCount})
		case "sound":
			id := digitsAt('6', seed, i)
			out = append(out, topSoundJSON{Type: "sound", ID: id, Title: songTitle(id)})
		}
	}
	return billable(topPageJSON{Results: out, Cursor: itoa(win.next), HasMore: win.more})
}

var _ = route("/shortvideo/user/followers", (*world).followers) // 4

// followers is endpoint 4.
func (w *world) followers(q query) (reply, error) {
	entries, cursor, more, err := w.followList(q, "followers")
	if err != nil {
		return reply{}, err
	}
	return billable(followersPageJSON{Followers: entries, Cursor: cursor, HasMore: more})
}

var _ = route("/shortvideo/user/following", (*world).following) // 5

// following is endpoint 5.
func (w *world) following(q query) (reply, error) {
	entries, cursor, more, err := w.followList(q, "following")
	if err != nil {
		return reply{}, err
	}
	return billable(followingPageJSON{Following: entries, Cursor: cursor, HasMore: more})
}

// followList pages the followers or following of the account behind secUid.
// Precedence of the list tokens: private (empty), loop, emptymore, endless.
func (w *world) followList(q query, kind string) (entries []followEntryJSON, cursor string, more bool, err error) {
	secUID, err := q.required("secUid")
	if err != nil {
		return nil, "", false, err
	}
	off, err := q.offset("cursor")
	if err != nil {
		return nil, "", false, err
	}
	handle, ok := handleOfSecUID(secUID)
	if !ok {
		return nil, "", false, notFound("no account with that secUid")
	}
	a, err := w.lookupAccount(handle)
	if err != nil {
		return nil, "", false, err
	}
	total, list := a.followers, a.followersList
	if kind == "following" {
		total, list = a.following, a.followingList
	}
	var win window
	switch {
	case a.private:
		win = paginate(off, 0, w.pageSize)
	case a.loop: // a full page, and the very cursor it was asked with
		win = window{start: off, end: off + w.pageSize, more: true}
	case a.emptyMore: // no items, a fresh cursor, more forever
		win = window{start: off, end: off, next: off + w.pageSize, more: true}
	case a.endless: // full pages past the count, forever
		win = window{start: off, end: off + w.pageSize, next: off + w.pageSize, more: true}
	default:
		win = paginate(off, total, w.pageSize)
	}
	cursor = itoa(win.next)
	if a.loop && !a.private {
		cursor = cmp.Or(q.get("cursor"), "0")
	}
	seed := hashOf(kind, handle)
	entries = make([]followEntryJSON, 0, win.end-win.start)
	for _, i := range list.indexes(win.start, win.end) {
		h := handleAt(seed, i)
		entries = append(entries, followEntryJSON{UniqueID: h, Nickname: nickname(h), Verified: verified(h), SecUID: secUIDOf(h)})
	}
	return entries, cursor, win.more, nil
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

func songID(q query) (string, error) {
	id, err := q.required("id")
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(id, "missing") {
		return "", notFound("song not found")
	}
	return id, nil
}

var _ = route("/shortvideo/song/videos", (*world).songVideos) // 6

// songVideos is endpoint 6.
func (w *world) songVideos(q query) (reply, error) {
	id, err := songID(q)
	if err != nil {
		return reply{}, err
	}
	off, err := q.offset("cursor")
	if err != nil {
		return reply{}, err
	}
	n, growth, _ := songLength(id)
	win := paginate(off, n+growth*w.day, w.pageSize)
	seed := hashOf("song", id, "items")
	videos := make([]videoJSON, 0, win.end-win.start)
	for i := win.start; i < win.end; i++ {
		videos = append(videos, w.video(digitsAt('7', seed, w.headIndex(i, growth)), ""))
	}
	return billable(videoPageJSON{
		Videos:  videos,
		Cursor:  itoa(win.next),
		HasMore: win.more,
	})
}

func songTitle(id string) string { return sentence(hashOf("song", id, "title"), 1, 4) }

var _ = route("/shortvideo/song", (*world).song) // 7

// song is endpoint 7. usageCount = list length + extra + rate*WorldTime,
// extra 0 with v<N> (so usageCount == N at world time 0), else
// H("song",id,"usageCount") % 5000; rate = 1 + H(...".rate") % 100.
func (w *world) song(q query) (reply, error) {
	id, err := songID(q)
	if err != nil {
		return reply{}, err
	}
	n, growth, tokenized := songLength(id)
	n += growth * w.day
	usage := n + rate("song", id, "usageCount", 100)*w.day
	if !tokenized {
		usage += pick("song", id, "usageCount", 5_000)
	}
	esc := url.PathEscape(id)
	return billable(songJSON{
		ID:          id,
		Title:       songTitle(id),
		AuthorName:  nickname(handleAt(hashOf("song", id, "author"), 0)),
		Duration:    5 + pick("song", id, "duration", 176),
		UsageCount:  usage,
		CoverLarge:  cdn + "/music/" + esc + "/cover-large.jpeg",
		CoverMedium: cdn + "/music/" + esc + "/cover-medium.jpeg",
		CoverThumb:  cdn + "/music/" + esc + "/cover-thumb.jpeg",
		PlayURL:     cdn + "/music/" + esc + "/play.mp3",
	})
}

// feed is FeedSize videos of the named feed for the current world day.
func (w *world) feed(name string) []videoJSON {
	return w.videosAt(hashOf("feed", name, itoa(w.day)), window{end: FeedSize}, permutation{})
}

var _ = route("/shortvideo/get-trending-feed", (*world).trendingFeed) // 8

// trendingFeed is endpoint 8.
func (w *world) trendingFeed(query) (reply, error) {
	return billable(feedJSON{Videos: w.feed("trending")})
}

var _ = route("/shortvideo/videos/popular", (*world).popularVideos) // 9

// popularVideos is endpoint 9.
func (w *world) popularVideos(query) (reply, error) {
	return billable(feedJSON{Videos: w.feed("popular")})
}

var _ = route("/shortvideo/creators/popular", (*world).popularCreators) // 10

// popularCreators is endpoint 10. Creators are hashed handles, so their
// followerCount is their profile's.
func (w *world) popularCreators(query) (reply, error) {
	seed := hashOf("feed", "creators", itoa(w.day))
	out := make([]creatorJSON, 0, FeedSize)
	for i := range int64(FeedSize) {
		h := handleAt(seed, i)
		a, _ := w.lookupAccount(h) // a "u..." handle always exists
		out = append(out, creatorJSON{UniqueID: h, Nickname: nickname(h), FollowerCount: a.followers, Verified: verified(h)})
	}
	return billable(creatorsJSON{Creators: out})
}

// profileItems is how many recent videos a profile lists.
const profileItems = 3

var _ = route("/shortvideo/profile", (*world).profile) // 11

// profile is endpoint 11.
func (w *world) profile(q query) (reply, error) {
	h, a, err := w.queriedAccount(q)
	if err != nil {
		return reply{}, err
	}
	videos := w.videoList(a)
	videoCount := videos.total()
	items := make([]videoJSON, 0, profileItems)
	if !a.private {
		for p := range min(videoCount, profileItems) { // the newest of its videos
			items = append(items, w.video(creatorVideoID(h, videos.index(p)), h))
		}
	}
	id := digitsAt('6', hashOf("account", h, "id"), 0)
	return billable(profileJSON{
		Success: true,
		User: profileUserJSON{
			ID:             id,
			UniqueID:       h,
			SecUID:         secUIDOf(h),
			Nickname:       nickname(h),
			AvatarLarger:   cdn + "/avatar/" + id + ".jpeg",
			Signature:      sentence(hashOf("account", h, "signature"), 3, 8),
			Verified:       verified(h),
			PrivateAccount: a.private,
		},
		Stats: profileStatsJSON{
			FollowerCount:  a.followers,
			FollowingCount: a.following,
			HeartCount:     w.counter(a, heartCounter),
			VideoCount:     videoCount,
			DiggCount:      w.counter(a, diggCounter),
		},
		ItemList: items,
	})
}

var _ = route("/shortvideo/user/live", (*world).live) // 12

// live is endpoint 12.
func (w *world) live(q query) (reply, error) {
	h, a, err := w.queriedAccount(q)
	if err != nil {
		return reply{}, err
	}
	if !a.live {
		return billable(liveJSON{})
	}
	return billable(liveJSON{
		IsLive:      true,
		Title:       sentence(hashOf("account", h, "liveTitle"), 2, 6),
		ViewerCount: 1 + w.grow("account", h, "viewerCount", 5_000, 100),
		StartTime:   w.now() - 60 - pick("account", h, "startTime", 7_200),
	})
}
