package shortvideo

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

const keywordEndpoint = "/shortvideo/search/keyword"

// Enumerations of the keyword search's form B.
var (
	datePostedValues = []string{"yesterday", "this-week", "this-month", "last-3-months", "last-6-months", "all-time"}
	sortByValues     = []string{"relevance", "most-liked", "date-posted"}
)

// KeywordQuery is a keyword search in one of its two published forms: form A
// sets Keyword (sent as keyword, with a string cursor); form B sets Query
// (sent as query) and may set the filters, with an integer cursor. Exactly
// one of Keyword and Query is set.
type KeywordQuery struct {
	Keyword string `yaml:"keyword"` // form A
	Query   string `yaml:"query"`   // form B
	// Form B only. DatePosted is yesterday, this-week, this-month,
	// last-3-months, last-6-months or all-time; SortBy is relevance,
	// most-liked or date-posted; Region is a two-letter country code (either
	// case, sent upper-case). Trim asks for trimmed videos and is sent only
	// when true.
	DatePosted string `yaml:"date_posted"`
	SortBy     string `yaml:"sort_by"`
	Region     string `yaml:"region"`
	Trim       bool   `yaml:"trim"`
}

// Validate checks the query as the upstream would, so a bad one is refused
// before it costs a request. Errors are *Error of ClassBadRequest naming the
// parameter.
func (q KeywordQuery) Validate() error {
	kw, query := strings.TrimSpace(q.Keyword), strings.TrimSpace(q.Query)
	switch {
	case kw == "" && query == "":
		return sources.ParamError(keywordEndpoint, "keyword", "is empty (set keyword for form A or query for form B)")
	case kw != "" && query != "":
		return sources.ParamError(keywordEndpoint, "keyword", "and query are both set; use one form")
	}
	if kw != "" {
		for _, opt := range []struct {
			name string
			set  bool
		}{{"date_posted", q.DatePosted != ""}, {"sort_by", q.SortBy != ""}, {"region", q.Region != ""}, {"trim", q.Trim}} {
			if opt.set {
				return sources.ParamError(keywordEndpoint, opt.name, "is a form B option: use Query instead of Keyword")
			}
		}
		return nil
	}
	if q.DatePosted != "" && !slices.Contains(datePostedValues, q.DatePosted) {
		return sources.ParamError(keywordEndpoint, "date_posted", "must be one of "+strings.Join(datePostedValues, "|"))
	}
	if q.SortBy != "" && !slices.Contains(sortByValues, q.SortBy) {
		return sources.ParamError(keywordEndpoint, "sort_by", "must be one of "+strings.Join(sortByValues, "|"))
	}
	if q.Region != "" && !isRegion(q.Region) {
		return sources.ParamError(keywordEndpoint, "region", "must be a two-letter country code")
	}
	return nil
}

func isRegion(s string) bool {
	return len(s) == 2 && isASCIILetter(s[0]) && isASCIILetter(s[1])
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// Term is the search term of either form, trimmed.
func (q KeywordQuery) Term() string {
	if kw := strings.TrimSpace(q.Keyword); kw != "" || strings.TrimSpace(q.Query) == "" {
		return kw
	}
	return strings.TrimSpace(q.Query)
}

// Filters are the form-B options set, the region lower-cased: what, beside
// the term, changes the results (nil for form A).
func (q KeywordQuery) Filters() url.Values {
	if kw := strings.TrimSpace(q.Keyword); kw != "" || strings.TrimSpace(q.Query) == "" {
		return nil
	}
	f := url.Values{}
	for k, v := range map[string]string{"date_posted": q.DatePosted, "sort_by": q.SortBy, "region": strings.ToLower(q.Region)} {
		if v != "" {
			f.Set(k, v)
		}
	}
	if q.Trim {
		f.Set("trim", "true")
	}
	return f
}

// Key is a stable canonical string identifying the search, for
// deduplicating tasks: the form's term first, then the options set, sorted,
// e.g. "keyword=cats" or
// "query=cats&date_posted=this-week&region=us&sort_by=most-liked&trim=true".
// The term is trimmed and the region lower-cased; two queries that send the
// same request have the same Key. It is meaningful for a valid query.
func (q KeywordQuery) Key() string {
	f := q.Filters()
	if f == nil {
		return "keyword=" + url.QueryEscape(q.Term())
	}
	k := "query=" + url.QueryEscape(q.Term())
	if len(f) > 0 {
		k += "&" + f.Encode()
	}
	return k
}

// Params is the query as request parameters, without the cursor: the term
// as keyword (form A) or query (form B) and the options set, the region
// upper-cased. ParseKeywordQuery reads them back.
func (q KeywordQuery) Params() url.Values {
	f := q.Filters()
	if f == nil {
		return url.Values{"keyword": {q.Term()}}
	}
	f.Set("query", q.Term())
	if f.Has("region") {
		f.Set("region", strings.ToUpper(q.Region))
	}
	return f
}

// ParseKeywordQuery is the query whose Params are p.
func ParseKeywordQuery(p url.Values) KeywordQuery {
	return KeywordQuery{Keyword: p.Get("keyword"), Query: p.Get("query"), DatePosted: p.Get("date_posted"),
		SortBy: p.Get("sort_by"), Region: p.Get("region"), Trim: p.Get("trim") == "true"}
}

// KeywordSearchCall calls one page of /shortvideo/search/keyword. Form A
// sends keyword and the cursor as given; form B sends query, the options set
// and the cursor as an integer (a cursor written with an exponent is
// rewritten as its digits, as the upstream rejects "1.74e+09").
func KeywordSearchCall(q KeywordQuery, cursor string) sources.Call[*sources.Page[Video]] {
	if err := q.Validate(); err != nil {
		return sources.Refused[*sources.Page[Video]](err)
	}
	v := q.Params()
	if cursor != "" {
		if v.Has("query") && !sources.IsDigits(cursor) {
			n, err := sources.ParseInt(strings.TrimSpace(cursor))
			if err != nil || n < 0 {
				return sources.Refused[*sources.Page[Video]](sources.ParamError(keywordEndpoint, "cursor", "must be a non-negative integer in the query form"))
			}
			cursor = strconv.FormatInt(n, 10)
		}
		v.Set("cursor", cursor)
	}
	return sources.PageCall[Video](sources.ShortVideo, "/search/keyword", v, videoListKeys...)
}

// Hashtag is an entry of the hashtag search. Growth is the growth
// signals object the upstream may add (growth, growthSignals or trend), as
// raw JSON, nil when none.
//
// The contract answers hashtags; the real service answers the videos under
// the hashtag (aweme_list): such an entry has Video set and nothing else.
type Hashtag struct {
	Name       sources.Text
	ViewCount  sources.Int64
	VideoCount sources.Int64
	Growth     json.RawMessage
	Video      *Video
}

func (h *Hashtag) UnmarshalJSON(b []byte) error {
	var w struct {
		AwemeID     sources.RawRef `json:"aweme_id"`
		AwemeInfo   sources.RawRef `json:"aweme_info"`
		Name        sources.Text   `json:"name"`
		NameS       sources.Text   `json:"hashtag_name"`
		ChaName     sources.Text   `json:"cha_name"`
		ViewCount   sources.Int64  `json:"viewCount"`
		ViewCountS  sources.Int64  `json:"view_count"`
		VideoCount  sources.Int64  `json:"videoCount"`
		VideoCountS sources.Int64  `json:"video_count"`
		Growth      sources.RawRef `json:"growth"`
		GrowthS     sources.RawRef `json:"growthSignals"`
		Trend       sources.RawRef `json:"trend"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if len(w.AwemeID) > 0 || len(w.AwemeInfo) > 0 {
		v := new(Video)
		if err := v.UnmarshalJSON(b); err != nil {
			return err
		}
		*h = Hashtag{Video: v}
		return nil
	}
	*h = Hashtag{
		Name:       sources.FirstText(w.Name, w.NameS, w.ChaName),
		ViewCount:  sources.FirstInt(w.ViewCount, w.ViewCountS),
		VideoCount: sources.FirstInt(w.VideoCount, w.VideoCountS),
	}
	for _, g := range []sources.RawRef{w.Growth, w.GrowthS, w.Trend} {
		if len(g) > 0 && string(g) != "null" {
			h.Growth = json.RawMessage(g)
			break
		}
	}
	return nil
}

// HashtagSearchCall calls one page of /shortvideo/search/hashtag: hashtags
// on the contract, videos (aweme_list) on the real service.
func HashtagSearchCall(keyword, cursor string) sources.Call[*sources.Page[Hashtag]] {
	return sources.PageCall[Hashtag](sources.ShortVideo, "/search/hashtag", sources.WithCursor(url.Values{"keyword": {strings.TrimSpace(keyword)}}, cursor), "hashtags", "challenge_list", "aweme_list")
}

// TopResult is an entry of the top search, in the platform's rank order.
// Type says which fields are set: video (ID, Desc, and Video, the entry
// read as a video), user (UniqueID, Nickname), hashtag (Name), sound (ID,
// Title); the rest of an entry stays in the item's Raw. The real service
// sends no type, only posts with a content_type ("video", or "multi_photo"
// for a photo carousel, a post of the same id space): both are videos.
type TopResult struct {
	Type     sources.Text
	ID       sources.Text
	Desc     sources.Text
	UniqueID sources.Text
	Nickname sources.Text
	Name     sources.Text
	Title    sources.Text
	Video    Video
}

func (r *TopResult) UnmarshalJSON(b []byte) error {
	// One pass reads the entry both as a result and, for a video, as the
	// video it is.
	var w struct {
		videoWire
		Type        sources.Text `json:"type"`
		ContentType sources.Text `json:"content_type"`
		UniqueID    sources.Text `json:"uniqueId"`
		UniqueIDS   sources.Text `json:"unique_id"`
		Nickname    sources.Text `json:"nickname"`
		Name        sources.Text `json:"name"`
		Title       sources.Text `json:"title"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		// A member only the video reads is malformed: the result stands
		// and the video keeps what decodes, as a video of this list always
		// has.
		var t topResultWire
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		r.set(&t)
		if r.Type == "video" {
			_ = r.Video.decode(b, true)
			r.Video.ID = sources.FirstText(r.Video.ID, r.ID)
		}
		return nil
	}
	r.set(&topResultWire{Type: w.Type, ContentType: w.ContentType, ID: w.ID, Desc: w.Desc, UniqueID: w.UniqueID, UniqueIDS: w.UniqueIDS,
		Nickname: w.Nickname, Name: w.Name, Title: w.Title})
	if r.Type == "video" {
		if err := r.Video.fromWire(&w.videoWire, true); err != nil {
			return err
		}
		r.Video.ID = sources.FirstText(r.Video.ID, r.ID)
	}
	return nil
}

// topResultWire is a top search entry as a result.
type topResultWire struct {
	Type        sources.Text `json:"type"`
	ContentType sources.Text `json:"content_type"`
	ID          sources.Text `json:"id"`
	Desc        sources.Text `json:"desc"`
	UniqueID    sources.Text `json:"uniqueId"`
	UniqueIDS   sources.Text `json:"unique_id"`
	Nickname    sources.Text `json:"nickname"`
	Name        sources.Text `json:"name"`
	Title       sources.Text `json:"title"`
}

func (r *TopResult) set(w *topResultWire) {
	typ := w.Type
	if typ == "" && w.ContentType != "" {
		typ = "video" // a post of the real service
	}
	*r = TopResult{
		Type: typ, ID: w.ID, Desc: w.Desc,
		UniqueID: sources.FirstText(w.UniqueID, w.UniqueIDS), Nickname: w.Nickname,
		Name: w.Name, Title: w.Title,
	}
}

// TopSearchCall calls one page of /shortvideo/search/top. The order of the
// items is the platform's ranking and is kept.
func TopSearchCall(keyword, cursor string) sources.Call[*sources.Page[TopResult]] {
	return sources.PageCall[TopResult](sources.ShortVideo, "/search/top", sources.WithCursor(url.Values{"keyword": {strings.TrimSpace(keyword)}}, cursor), "results", "items")
}
