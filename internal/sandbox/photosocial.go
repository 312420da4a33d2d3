package sandbox

import (
	"cmp"
	"html"
	"net/url"
	"strings"
)

// Response shapes of the photo-sharing platform (snake_case as in the spec).

type countJSON struct {
	Count int64 `json:"count"`
}

type psUserJSON struct {
	ID                       string    `json:"id"`
	Username                 string    `json:"username"`
	FullName                 string    `json:"full_name"`
	Biography                string    `json:"biography"`
	ProfilePicURL            string    `json:"profile_pic_url"`
	EdgeFollowedBy           countJSON `json:"edge_followed_by"`
	EdgeFollow               countJSON `json:"edge_follow"`
	EdgeOwnerToTimelineMedia countJSON `json:"edge_owner_to_timeline_media"`
	IsVerified               bool      `json:"is_verified"`
	IsPrivate                bool      `json:"is_private"`
	IsBusinessAccount        bool      `json:"is_business_account"`
	CategoryName             *string   `json:"category_name"`
	BusinessEmail            *string   `json:"business_email"`
	BusinessPhoneNumber      *string   `json:"business_phone_number"`
	PublicEmail              *string   `json:"public_email"`
	PublicPhoneNumber        *string   `json:"public_phone_number"`
}

type psProfileJSON struct {
	Success bool `json:"success"`
	Data    struct {
		User psUserJSON `json:"user"`
	} `json:"data"`
}

type commentJSON struct {
	ID                string          `json:"id"`
	Text              string          `json:"text"`
	User              commentUserJSON `json:"user"`
	CreatedAt         int64           `json:"created_at"`
	LikeCount         int64           `json:"like_count"`
	ChildCommentCount int64           `json:"child_comment_count"`
}

type commentUserJSON struct {
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

type commentsPageJSON struct {
	Success  bool          `json:"success"`
	Comments []commentJSON `json:"comments"`
	Cursor   string        `json:"cursor"`
}

type reelJSON struct {
	ID        string        `json:"id"`
	Code      string        `json:"code"`
	Caption   string        `json:"caption"`
	Owner     reelOwnerJSON `json:"owner"`
	PlayCount int64         `json:"play_count"`
	LikeCount int64         `json:"like_count"`
	TakenAt   int64         `json:"taken_at"`
}

type reelOwnerJSON struct {
	Username string `json:"username"`
}

type reelsPageJSON struct {
	Success bool       `json:"success"`
	Reels   []reelJSON `json:"reels"`
}

type transcriptJSON struct {
	ID        string `json:"id"`
	Shortcode string `json:"shortcode"`
	Text      string `json:"text"`
}

type transcriptsJSON struct {
	Success     bool             `json:"success"`
	Transcripts []transcriptJSON `json:"transcripts"`
}

type embedJSON struct {
	Success bool   `json:"success"`
	HTML    string `json:"html"`
}

type highlightJSON struct {
	Success    bool                `json:"success"`
	ID         string              `json:"id"`
	Title      string              `json:"title"`
	MediaCount int64               `json:"media_count"`
	User       highlightUserJSON   `json:"user"`
	Items      []highlightItemJSON `json:"items"`
}

type highlightUserJSON struct {
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

type highlightItemJSON struct {
	ID            string             `json:"id"`
	MediaType     int64              `json:"media_type"`
	TakenAt       int64              `json:"taken_at"`
	ThumbnailURL  string             `json:"thumbnail_url"`
	VideoVersions []videoVersionJSON `json:"video_versions"`
}

type videoVersionJSON struct {
	URL    string `json:"url"`
	Width  int64  `json:"width"`
	Height int64  `json:"height"`
}

const (
	psSite = "https://www.photosocial.example"
	psCDN  = "https://cdn.photosocial.example"
)

func strPtr(s string) *string { return &s }

var _ = route("/photosocial/profile", (*world).psProfile) // 13

// psProfile is endpoint 13. A private account answers 200 with {} and costs
// no credit; contact fields and category_name are null unless "business".
func (w *world) psProfile(q query) (reply, error) {
	h, a, err := w.queriedAccount(q)
	if err != nil {
		return reply{}, err
	}
	if a.private {
		return reply{body: struct{}{}, free: true}, nil
	}
	id := digitsAt('5', hashOf("account", h, "psId"), 0)
	u := psUserJSON{
		ID:                       id,
		Username:                 h,
		FullName:                 nickname(h),
		Biography:                sentence(hashOf("account", h, "signature"), 3, 8),
		ProfilePicURL:            psCDN + "/profile/" + id + ".jpg",
		EdgeFollowedBy:           countJSON{a.followers},
		EdgeFollow:               countJSON{a.following},
		EdgeOwnerToTimelineMedia: countJSON{w.postList(a).total()},
		IsVerified:               verified(h),
		IsBusinessAccount:        a.business,
	}
	if a.business {
		host := cmp.Or(slug(h), "account") + ".example"
		phone := "+1555" + digitsAt('0', hashOf("account", h, "phone"), 0)[12:]
		u.CategoryName = strPtr(categories[pick("account", h, "category", uint64(len(categories)))])
		u.BusinessEmail = strPtr("contact@" + host)
		u.BusinessPhoneNumber = strPtr(phone)
		u.PublicEmail = strPtr("hello@" + host)
		u.PublicPhoneNumber = strPtr(phone)
	}
	var body psProfileJSON
	body.Success = true
	body.Data.User = u
	return billable(body)
}

// postCode reads the url parameter: an http(s) URL with a host whose path
// holds a segment p, reel or reels followed by the code
// ([A-Za-z0-9_-]+). Any host is accepted, as the upstream does not check it.
func postCode(q query) (string, error) {
	raw, err := q.required("url")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		for i := 0; i+1 < len(segs); i++ {
			if (segs[i] == "p" || segs[i] == "reel" || segs[i] == "reels") && isCode(segs[i+1]) {
				return segs[i+1], nil
			}
		}
	}
	return "", badRequest("parameter %q must be a post or reel URL like %s/p/<code>/", "url", psSite)
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

// post applies the code grammar shared by comments and transcripts.
func post(code string) ([]string, error) {
	if strings.HasPrefix(code, "missing") {
		return nil, notFound("post not found")
	}
	return splitTokens(code, ""), nil
}

// queriedPost is the post or reel named by the "url" parameter: its code
// and tokens.
func queriedPost(q query) (string, []string, error) {
	code, err := postCode(q)
	if err != nil {
		return "", nil, err
	}
	toks, err := post(code)
	return code, toks, err
}

// takenAt is when a post or reel was published: up to a year before day 0.
func takenAt(kind, code string) int64 { return WorldEpoch - pick(kind, code, "takenAt", 365*86400) }

var _ = route("/photosocial/post/comments", (*world).psComments) // 14

// psComments is endpoint 14: cursor in, cursor out, no hasMore; the last
// page answers cursor "".
func (w *world) psComments(q query) (reply, error) {
	code, toks, err := queriedPost(q)
	if err != nil {
		return reply{}, err
	}
	off, err := q.offset("cursor")
	if err != nil {
		return reply{}, err
	}
	total, ok := countToken(toks, 'c')
	if !ok {
		total = pick("post", code, "comments", 100)
	}
	growth, _ := growthToken(toks)
	win := paginate(off, total+growth*w.day, w.pageSize)
	seed := hashOf("post", code, "comments")
	posted := takenAt("post", code)
	out := make([]commentJSON, 0, win.end-win.start)
	for p := win.start; p < win.end; p++ {
		i := w.headIndex(p, growth)
		id := digitsAt('1', seed, i)
		user := handleAt(seed, i)
		created := posted + 600*i + pick("comment", id, "createdAt", 600)
		if i < 0 { // the k-th comment added after day 0 (k = -1-i), on day k/growth
			k := -1 - i
			created = WorldEpoch + k*86400/growth + pick("comment", id, "createdAt", uint64(max(1, 86400/growth)))
		}
		out = append(out, commentJSON{
			ID:                id,
			Text:              sentence(hashOf("comment", id, "text"), 1, 12),
			User:              commentUserJSON{Username: user, IsVerified: verified(user)},
			CreatedAt:         created,
			LikeCount:         w.grow("comment", id, "likeCount", 1_000, 5),
			ChildCommentCount: pick("comment", id, "childCommentCount", 20),
		})
	}
	cursor := ""
	if win.more {
		cursor = itoa(win.next)
	}
	return billable(commentsPageJSON{Success: true, Comments: out, Cursor: cursor})
}

// reelCode is a shortcode for the i-th reel of a list: "D" + base62 of
// mix64(seed+i), distinct within the list and never a token.
func reelCode(seed uint64, i int64) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	v := mix64(seed + uint64(i))
	b := []byte{'D'}
	for range 11 {
		b = append(b, digits[v%62])
		v /= 62
	}
	return string(b)
}

var _ = route("/photosocial/reels/search", (*world).psReelsSearch) // 15

// psReelsSearch is endpoint 15: page numbers from 1, ReelsPageSize reels a
// page; a page past the end is an empty list (200, billable).
func (w *world) psReelsSearch(q query) (reply, error) {
	raw, err := q.required("query")
	if err != nil {
		return reply{}, err
	}
	kw := keywordOf(raw)
	if kw == "" {
		return reply{}, badRequest("parameter %q must not be blank", "query")
	}
	page := int64(1)
	if v := q.get("page"); v != "" {
		n, ok := parseDigits(v)
		if !ok || n < 1 {
			return reply{}, badRequest("parameter %q must be an integer >= 1", "page")
		}
		page = n
	}
	total := searchTotal("reels", kw, 150)
	win := window{}
	if page-1 < (total+ReelsPageSize-1)/ReelsPageSize {
		start := (page - 1) * ReelsPageSize
		win = window{start: start, end: min(start+ReelsPageSize, total)}
	}
	idSeed, codeSeed := hashOf("search", "reels", kw, "items"), hashOf("search", "reels", kw, "codes")
	out := make([]reelJSON, 0, win.end-win.start)
	for i := win.start; i < win.end; i++ {
		code := reelCode(codeSeed, i)
		owner := handleAt(hashOf("reel", code, "owner"), 0)
		out = append(out, reelJSON{
			ID:        digitsAt('3', idSeed, i),
			Code:      code,
			Caption:   sentence(hashOf("reel", code, "caption"), 2, 10),
			Owner:     reelOwnerJSON{Username: owner},
			PlayCount: w.grow("reel", code, "playCount", 1_000_000, 10_000),
			LikeCount: w.grow("reel", code, "likeCount", 100_000, 1_000),
			TakenAt:   takenAt("reel", code),
		})
	}
	return billable(reelsPageJSON{Success: true, Reels: out})
}

// transcriptMax caps t<N>: transcripts are not paginated, and a body must
// stay O(page) whatever the token says.
const transcriptMax = 1000

var _ = route("/photosocial/media/transcript", (*world).psTranscript) // 16

// psTranscript is endpoint 16: token nospeech -> no entries (still a
// billable 200), t<N> -> min(N, transcriptMax) entries (one per carousel
// item), else one.
func (w *world) psTranscript(q query) (reply, error) {
	code, toks, err := queriedPost(q)
	if err != nil {
		return reply{}, err
	}
	n := int64(1)
	if hasToken(toks, "nospeech") {
		n = 0
	} else if c, ok := countToken(toks, 't'); ok {
		n = min(c, transcriptMax)
	}
	seed := hashOf("post", code, "media")
	out := make([]transcriptJSON, 0, n)
	for i := range n {
		id := digitsAt('3', seed, i)
		out = append(out, transcriptJSON{ID: id, Shortcode: code, Text: sentence(hashOf("transcript", id, "text"), 5, 20)})
	}
	return billable(transcriptsJSON{Success: true, Transcripts: out})
}

var _ = route("/photosocial/user/embed", (*world).psEmbed) // 17

// psEmbed is endpoint 17.
func (w *world) psEmbed(q query) (reply, error) {
	h, _, err := w.queriedAccount(q)
	if err != nil {
		return reply{}, err
	}
	link := psSite + "/" + url.PathEscape(h) + "/"
	markup := `<blockquote class="photosocial-media" data-instgrm-permalink="` + html.EscapeString(link) +
		`" data-instgrm-version="14"><a href="` + html.EscapeString(link) + `">@` + html.EscapeString(h) +
		` on photosocial</a></blockquote><script async src="` + psSite + `/embed.js"></script>`
	return billable(embedJSON{Success: true, HTML: markup})
}

var _ = route("/photosocial/user/highlight/detail", (*world).psHighlight) // 18

// psHighlight is endpoint 18: id is the bare digits; ids starting with 404
// are not found; media_count is the value of the last two digits.
func (w *world) psHighlight(q query) (reply, error) {
	id, err := q.required("id")
	if err != nil {
		return reply{}, err
	}
	if len(id) > 30 || strings.Trim(id, "0123456789") != "" {
		return reply{}, badRequest("parameter %q must be the digits of a highlight id, without the highlight: prefix", "id")
	}
	if strings.HasPrefix(id, "404") {
		return reply{}, notFound("highlight not found")
	}
	n := int64(id[len(id)-1] - '0')
	if len(id) >= 2 {
		n += 10 * int64(id[len(id)-2]-'0')
	}
	owner := handleAt(hashOf("highlight", id, "owner"), 0)
	seed := hashOf("highlight", id, "items")
	items := make([]highlightItemJSON, 0, n)
	for i := range n {
		itemID := digitsAt('3', seed, i)
		item := highlightItemJSON{
			ID:            itemID,
			MediaType:     1,
			TakenAt:       takenAt("media", itemID),
			ThumbnailURL:  psCDN + "/media/" + itemID + ".jpg",
			VideoVersions: []videoVersionJSON{},
		}
		if hashOf("highlight", id, "type", itoa(i))%2 == 0 {
			item.MediaType = 2
			item.VideoVersions = []videoVersionJSON{
				{URL: psCDN + "/media/" + itemID + "-720.mp4", Width: 720, Height: 1280},
				{URL: psCDN + "/media/" + itemID + "-480.mp4", Width: 480, Height: 854},
			}
		}
		items = append(items, item)
	}
	return billable(highlightJSON{
		Success:    true,
		ID:         "highlight:" + id,
		Title:      sentence(hashOf("highlight", id, "title"), 1, 3),
		MediaCount: n,
		User:       highlightUserJSON{Username: owner, IsVerified: verified(owner)},
		Items:      items,
	})
}
