package endpoints

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

const svKeywordEndpoint = "/shortvideo/search/keyword"

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
		return sources.ParamError(svKeywordEndpoint, "keyword", "is empty (set keyword for form A or query for form B)")
	case kw != "" && query != "":
		return sources.ParamError(svKeywordEndpoint, "keyword", "and query are both set; use one form")
	}
	if kw != "" {
		for _, opt := range []struct {
			name string
			set  bool
		}{{"date_posted", q.DatePosted != ""}, {"sort_by", q.SortBy != ""}, {"region", q.Region != ""}, {"trim", q.Trim}} {
			if opt.set {
				return sources.ParamError(svKeywordEndpoint, opt.name, "is a form B option: use Query instead of Keyword")
			}
		}
		return nil
	}
	if q.DatePosted != "" && !slices.Contains(datePostedValues, q.DatePosted) {
		return sources.ParamError(svKeywordEndpoint, "date_posted", "must be one of "+strings.Join(datePostedValues, "|"))
	}
	if q.SortBy != "" && !slices.Contains(sortByValues, q.SortBy) {
		return sources.ParamError(svKeywordEndpoint, "sort_by", "must be one of "+strings.Join(sortByValues, "|"))
	}
	if q.Region != "" && !isRegion(q.Region) {
		return sources.ParamError(svKeywordEndpoint, "region", "must be a two-letter country code")
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

// SVKeywordSearchCall calls one page of /shortvideo/search/keyword. Form A
// sends keyword and the cursor as given; form B sends query, the options set
// and the cursor as an integer (a cursor written with an exponent is
// rewritten as its digits, as the upstream rejects "1.74e+09").
func SVKeywordSearchCall(q KeywordQuery, cursor string) sources.Call[*sources.Page[SVVideo]] {
	if err := q.Validate(); err != nil {
		return sources.Refused[*sources.Page[SVVideo]](err)
	}
	v := q.Params()
	if cursor != "" {
		if v.Has("query") && !sources.IsDigits(cursor) {
			n, err := sources.ParseInt(strings.TrimSpace(cursor))
			if err != nil || n < 0 {
				return sources.Refused[*sources.Page[SVVideo]](sources.ParamError(svKeywordEndpoint, "cursor", "must be a non-negative integer in the query form"))
			}
			cursor = strconv.FormatInt(n, 10)
		}
		v.Set("cursor", cursor)
	}
	return sources.PageCall[SVVideo](sources.ShortVideo, "/search/keyword", v, svVideoListKeys...)
}

// SVHashtag is an entry of the hashtag search. Growth is the growth
// signals object the upstream may add (growth, growthSignals or trend), as
// raw JSON, nil when none.
//
// The contract answers hashtags; the real service answers the videos under
// the hashtag (aweme_list): such an entry has Video set and nothing else.
type SVHashtag struct {
	Name       Text
	ViewCount  Int64
	VideoCount Int64
	Growth     json.RawMessage
	Video      *SVVideo
}

func (h *SVHashtag) UnmarshalJSON(b []byte) error {
	var w struct {
		AwemeID     RawRef `json:"aweme_id"`
		AwemeInfo   RawRef `json:"aweme_info"`
		Name        Text   `json:"name"`
		NameS       Text   `json:"hashtag_name"`
		ChaName     Text   `json:"cha_name"`
		ViewCount   Int64  `json:"viewCount"`
		ViewCountS  Int64  `json:"view_count"`
		VideoCount  Int64  `json:"videoCount"`
		VideoCountS Int64  `json:"video_count"`
		Growth      RawRef `json:"growth"`
		GrowthS     RawRef `json:"growthSignals"`
		Trend       RawRef `json:"trend"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if len(w.AwemeID) > 0 || len(w.AwemeInfo) > 0 {
		v := new(SVVideo)
		if err := v.UnmarshalJSON(b); err != nil {
			return err
		}
		*h = SVHashtag{Video: v}
		return nil
	}
	*h = SVHashtag{
		Name:       sources.FirstText(w.Name, w.NameS, w.ChaName),
		ViewCount:  sources.FirstInt(w.ViewCount, w.ViewCountS),
		VideoCount: sources.FirstInt(w.VideoCount, w.VideoCountS),
	}
	for _, g := range []RawRef{w.Growth, w.GrowthS, w.Trend} {
		if len(g) > 0 && string(g) != "null" {
			h.Growth = json.RawMessage(g)
			break
		}
	}
	return nil
}

// SVHashtagSearchCall calls one page of /shortvideo/search/hashtag: hashtags
// on the contract, videos (aweme_list) on the real service.
func SVHashtagSearchCall(keyword, cursor string) sources.Call[*sources.Page[SVHashtag]] {
	return sources.PageCall[SVHashtag](sources.ShortVideo, "/search/hashtag", sources.WithCursor(url.Values{"keyword": {strings.TrimSpace(keyword)}}, cursor), "hashtags", "challenge_list", "aweme_list")
}

// SVTopResult is an entry of the top search, in the platform's rank order.
// Type says which fields are set: video (ID, Desc, and Video, the entry
// read as a video), user (UniqueID, Nickname), hashtag (Name), sound (ID,
// Title); the rest of an entry stays in the item's Raw. The real service
// sends no type, only posts with a content_type ("video", or "multi_photo"
// for a photo carousel, a post of the same id space): both are videos.
type SVTopResult struct {
	Type     Text
	ID       Text
	Desc     Text
	UniqueID Text
	Nickname Text
	Name     Text
	Title    Text
	Video    SVVideo
}

func (r *SVTopResult) UnmarshalJSON(b []byte) error {
	// One pass reads the entry both as a result and, for a video, as the
	// video it is.
	var w struct {
		svVideoWire
		Type        Text `json:"type"`
		ContentType Text `json:"content_type"`
		UniqueID    Text `json:"uniqueId"`
		UniqueIDS   Text `json:"unique_id"`
		Nickname    Text `json:"nickname"`
		Name        Text `json:"name"`
		Title       Text `json:"title"`
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
		if err := r.Video.fromWire(&w.svVideoWire, true); err != nil {
			return err
		}
		r.Video.ID = sources.FirstText(r.Video.ID, r.ID)
	}
	return nil
}

// topResultWire is a top search entry as a result.
type topResultWire struct {
	Type        Text `json:"type"`
	ContentType Text `json:"content_type"`
	ID          Text `json:"id"`
	Desc        Text `json:"desc"`
	UniqueID    Text `json:"uniqueId"`
	UniqueIDS   Text `json:"unique_id"`
	Nickname    Text `json:"nickname"`
	Name        Text `json:"name"`
	Title       Text `json:"title"`
}

func (r *SVTopResult) set(w *topResultWire) {
	typ := w.Type
	if typ == "" && w.ContentType != "" {
		typ = "video" // a post of the real service
	}
	*r = SVTopResult{
		Type: typ, ID: w.ID, Desc: w.Desc,
		UniqueID: sources.FirstText(w.UniqueID, w.UniqueIDS), Nickname: w.Nickname,
		Name: w.Name, Title: w.Title,
	}
}

// SVTopSearchCall calls one page of /shortvideo/search/top. The order of the
// items is the platform's ranking and is kept.
func SVTopSearchCall(keyword, cursor string) sources.Call[*sources.Page[SVTopResult]] {
	return sources.PageCall[SVTopResult](sources.ShortVideo, "/search/top", sources.WithCursor(url.Values{"keyword": {strings.TrimSpace(keyword)}}, cursor), "results", "items")
}
