package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/upstreamtest"
)

func TestKeywordQueryValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		q     KeywordQuery
		param string // "" = valid
	}{
		{KeywordQuery{Keyword: "cats"}, ""},
		{KeywordQuery{Query: "cats"}, ""},
		{KeywordQuery{Query: "cats", DatePosted: "last-6-months", SortBy: "date-posted", Region: "gB", Trim: true}, ""},
		{KeywordQuery{}, "keyword"},
		{KeywordQuery{Keyword: "  ", Query: "\t"}, "keyword"},
		{KeywordQuery{Keyword: "cats", Query: "dogs"}, "keyword"},
		{KeywordQuery{Keyword: "cats", DatePosted: "this-week"}, "date_posted"},
		{KeywordQuery{Keyword: "cats", SortBy: "relevance"}, "sort_by"},
		{KeywordQuery{Keyword: "cats", Region: "us"}, "region"},
		{KeywordQuery{Keyword: "cats", Trim: true}, "trim"},
		{KeywordQuery{Query: "cats", DatePosted: "last-week"}, "date_posted"},
		{KeywordQuery{Query: "cats", DatePosted: "This-Week"}, "date_posted"},
		{KeywordQuery{Query: "cats", SortBy: "most-viewed"}, "sort_by"},
		{KeywordQuery{Query: "cats", Region: "usa"}, "region"},
		{KeywordQuery{Query: "cats", Region: "u1"}, "region"},
		{KeywordQuery{Query: "cats", Region: "é"}, "region"},
	}
	for _, tc := range cases {
		err := tc.q.Validate()
		if tc.param == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.q, err)
			}
			continue
		}
		var e *sources.Error
		if !errors.As(err, &e) || e.Class != sources.ClassBadRequest || !strings.Contains(e.Message, "parameter "+tc.param) || e.Endpoint != "/shortvideo/search/keyword" {
			t.Errorf("%+v: err = %v, want a bad request naming %s", tc.q, err, tc.param)
		}
	}
}

func TestKeywordQueryKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		q    KeywordQuery
		want string
	}{
		{KeywordQuery{Keyword: "cats"}, "keyword=cats"},
		{KeywordQuery{Keyword: " cats and dogs "}, "keyword=cats+and+dogs"},
		{KeywordQuery{Query: "cats"}, "query=cats"},
		{KeywordQuery{Query: "cats", Trim: true, SortBy: "most-liked", Region: "US", DatePosted: "this-week"},
			"query=cats&date_posted=this-week&region=us&sort_by=most-liked&trim=true"},
		{KeywordQuery{Query: "a&b=c", SortBy: "relevance"}, "query=a%26b%3Dc&sort_by=relevance"},
	}
	for _, tc := range cases {
		if got := tc.q.Key(); got != tc.want {
			t.Errorf("%+v.Key() = %q, want %q", tc.q, got, tc.want)
		}
	}
	// The same search spelled differently has the same key; different
	// searches have different keys.
	a := KeywordQuery{Query: " cats", Region: "us", SortBy: "most-liked"}
	b := KeywordQuery{Query: "cats ", Region: "US", SortBy: "most-liked", Trim: false}
	if a.Key() != b.Key() || a.Key() != a.Key() {
		t.Errorf("keys differ: %q %q", a.Key(), b.Key())
	}
	distinct := map[string]KeywordQuery{}
	for _, q := range []KeywordQuery{
		{Keyword: "cats"}, {Query: "cats"}, {Query: "cats", Trim: true}, {Query: "cats", Region: "us"},
		{Query: "cats", SortBy: "relevance"}, {Query: "cats", DatePosted: "all-time"}, {Keyword: "Cats"},
	} {
		if prev, dup := distinct[q.Key()]; dup {
			t.Errorf("%+v and %+v share key %q", prev, q, q.Key())
		}
		distinct[q.Key()] = q
	}
}

func TestKeywordSearchSends(t *testing.T) {
	t.Parallel()
	body := `{"videos":[],"cursor":"","hasMore":false}`
	const path = "/api/shortvideo/search/keyword"
	cases := []struct {
		name   string
		q      KeywordQuery
		cursor string
		want   url.Values
	}{
		{"form A first page", KeywordQuery{Keyword: " cats "}, "", url.Values{"keyword": {"cats"}}},
		{"form A cursor as is", KeywordQuery{Keyword: "cats"}, "opaque==x", url.Values{"keyword": {"cats"}, "cursor": {"opaque==x"}}},
		{"form B bare", KeywordQuery{Query: "cats"}, "", url.Values{"query": {"cats"}}},
		{"form B trim false not sent", KeywordQuery{Query: "cats", Trim: false, SortBy: "relevance"}, "20",
			url.Values{"query": {"cats"}, "sort_by": {"relevance"}, "cursor": {"20"}}},
		{"form B all options", KeywordQuery{Query: "cats", DatePosted: "this-week", SortBy: "most-liked", Region: "us", Trim: true}, "1740000000",
			url.Values{"query": {"cats"}, "date_posted": {"this-week"}, "sort_by": {"most-liked"}, "region": {"US"}, "trim": {"true"}, "cursor": {"1740000000"}}},
		{"form B exponent cursor sent as digits", KeywordQuery{Query: "cats"}, "1.74e+09",
			url.Values{"query": {"cats"}, "cursor": {"1740000000"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, sent := upstreamtest.Call(t, body, SVKeywordSearchCall(tc.q, tc.cursor))
			upstreamtest.WantQuery(t, sent, path, tc.want)
		})
	}
}

func TestKeywordSearchRefusesLocally(t *testing.T) {
	t.Parallel()
	rec := upstreamtest.NewRecorder(t, `{}`)
	c := upstreamtest.Client(t, rec.URL, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		q      KeywordQuery
		cursor string
	}{
		{KeywordQuery{}, ""},
		{KeywordQuery{Keyword: "a", Query: "b"}, ""},
		{KeywordQuery{Query: "a", SortBy: "best"}, ""},
		{KeywordQuery{Query: "a"}, "abc"},
		{KeywordQuery{Query: "a"}, "-5"},
		{KeywordQuery{Query: "a"}, "1.5"},
	} {
		if _, err := sources.Do(ctx, c, nil, SVKeywordSearchCall(tc.q, tc.cursor)); sources.ClassOf(err) != sources.ClassBadRequest {
			t.Errorf("%+v cursor %q: err = %v, want bad request", tc.q, tc.cursor, err)
		}
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("%d requests sent for refused parameters", n)
	}
}

func TestVideoDecoding(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       []SVVideo
		cursor     string
		more, know bool
	}{
		{
			name: "contract",
			body: `{"videos":[{"id":"7300000000000000001","desc":"hi #a","createTime":1735000000,
				"author":{"uniqueId":"alice","nickname":"Alice"},
				"stats":{"playCount":10,"diggCount":2,"commentCount":3,"shareCount":4},"music":{"id":"6900000000000000001","title":"s"}}],
				"cursor":"50","hasMore":true}`,
			want: []SVVideo{{ID: "7300000000000000001", Desc: "hi #a", CreateTime: Int64{V: 1735000000, Valid: true},
				Author:  SVAuthor{UniqueID: "alice", Nickname: "Alice"},
				Stats:   SVVideoStats{PlayCount: Int64{V: 10, Valid: true}, DiggCount: Int64{V: 2, Valid: true}, CommentCount: Int64{V: 3, Valid: true}, ShareCount: Int64{V: 4, Valid: true}},
				MusicID: "6900000000000000001"}},
			cursor: "50", more: true, know: true,
		},
		{
			name:   "trimmed: playCount only, no author, numeric cursor",
			body:   `{"videos":[{"id":"7300000000000000002","desc":"x","stats":{"playCount":"9007199254740993"}}],"cursor":20,"hasMore":false}`,
			want:   []SVVideo{{ID: "7300000000000000002", Desc: "x", Stats: SVVideoStats{PlayCount: Int64{V: 9007199254740993, Valid: true}}}},
			cursor: "20", more: false, know: true,
		},
		{
			name: "snake_case search items wrapped in aweme_info, has_more 1, credits",
			body: `{"success":true,"credits_remaining":99,"credits_charged":1,"search_item_list":[{"type":1,"aweme_info":{
				"aweme_id":7300000000000000003,"desc":"y","create_time":"1735000001","author":{"unique_id":"bob","nickname":"Bob"},
				"statistics":{"play_count":5,"digg_count":"6","comment_count":null,"share_count":0},"music":{"id_str":"69"}}}],
				"cursor":1740000000123,"has_more":1}`,
			want: []SVVideo{{ID: "7300000000000000003", Desc: "y", CreateTime: Int64{V: 1735000001, Valid: true},
				Author:  SVAuthor{UniqueID: "bob", Nickname: "Bob"},
				Stats:   SVVideoStats{PlayCount: Int64{V: 5, Valid: true}, DiggCount: Int64{V: 6, Valid: true}, ShareCount: Int64{V: 0, Valid: true}},
				MusicID: "69"}},
			cursor: "1740000000123", more: true, know: true,
		},
		{
			name: "author null, music a string, has_more 0",
			body: `{"videos":[{"id":"1","desc":null,"author":null,"music":"original sound","musicId":"42"}],"has_more":0}`,
			want: []SVVideo{{ID: "1", MusicID: "42"}},
			know: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := upstreamtest.Call(t, tc.body, SVKeywordSearchCall(KeywordQuery{Keyword: "k"}, ""))
			if len(p.Items) != len(tc.want) {
				t.Fatalf("items = %+v", p.Items)
			}
			for i, it := range p.Items {
				if !reflect.DeepEqual(it.V, tc.want[i]) {
					t.Errorf("item %d = %+v\nwant %+v", i, it.V, tc.want[i])
				}
				if len(it.Raw) == 0 {
					t.Errorf("item %d lost its raw JSON", i)
				}
			}
			if p.Cursor != tc.cursor || p.HasMore != tc.more || p.HasMoreKnown != tc.know {
				t.Errorf("page = cursor %q more %v known %v", p.Cursor, p.HasMore, p.HasMoreKnown)
			}
		})
	}
}

func TestHashtagAndTopSearch(t *testing.T) {
	t.Parallel()
	t.Run("hashtag", func(t *testing.T) {
		t.Parallel()
		p, sent := upstreamtest.Call(t, `{"hashtags":[{"name":"cats","viewCount":"12","videoCount":3,"growth":{"views7d":70}},
			{"hashtag_name":"dogs","view_count":1,"video_count":"2"}],"cursor":"2","hasMore":true}`,
			SVHashtagSearchCall("cats", "1"))
		upstreamtest.WantQuery(t, sent, "/api/shortvideo/search/hashtag", url.Values{"keyword": {"cats"}, "cursor": {"1"}})
		want := []SVHashtag{{Name: "cats", ViewCount: Int64{V: 12, Valid: true}, VideoCount: Int64{V: 3, Valid: true}, Growth: json.RawMessage(`{"views7d":70}`)},
			{Name: "dogs", ViewCount: Int64{V: 1, Valid: true}, VideoCount: Int64{V: 2, Valid: true}}}
		if len(p.Items) != 2 || !reflect.DeepEqual(p.Items[0].V, want[0]) || !reflect.DeepEqual(p.Items[1].V, want[1]) || !strings.Contains(string(p.Items[0].Raw), "views7d") {
			t.Errorf("items = %+v", p.Items)
		}
	})
	t.Run("top", func(t *testing.T) {
		t.Parallel()
		p, sent := upstreamtest.Call(t, `{"results":[{"type":"video","id":"73","desc":"d"},{"type":"user","uniqueId":"u1","nickname":"N"},
			{"type":"hashtag","name":"h"},{"type":"sound","id":"69","title":"t"},{"type":"user","unique_id":"u2"}],"cursor":"5","hasMore":false}`,
			SVTopSearchCall("cats", ""))
		upstreamtest.WantQuery(t, sent, "/api/shortvideo/search/top", url.Values{"keyword": {"cats"}})
		video := SVVideo{ID: "73", Desc: "d"}
		want := []SVTopResult{{Type: "video", ID: "73", Desc: "d", Video: video}, {Type: "user", UniqueID: "u1", Nickname: "N"},
			{Type: "hashtag", Name: "h"}, {Type: "sound", ID: "69", Title: "t"}, {Type: "user", UniqueID: "u2"}}
		if len(p.Items) != len(want) {
			t.Fatalf("items = %+v", p.Items)
		}
		for i := range want {
			if !reflect.DeepEqual(p.Items[i].V, want[i]) {
				t.Errorf("rank %d = %+v, want %+v", i+1, p.Items[i].V, want[i])
			}
		}
	})
}

// TestTopResultVideoDecodedOnce: a video entry of the top search carries the
// video read from the same pass (author, stats, aweme_info), and a member
// only the video reads being malformed keeps the result and what decodes.
func TestTopResultVideoDecodedOnce(t *testing.T) {
	t.Parallel()
	var r SVTopResult
	if err := json.Unmarshal([]byte(`{"type":"video","id":"7","author":{"uniqueId":"a"},"stats":{"diggCount":"5"},"createTime":9}`), &r); err != nil {
		t.Fatal(err)
	}
	if v := r.Video; v.ID != "7" || v.Author.UniqueID != "a" || v.Stats.DiggCount != (Int64{V: 5, Valid: true}) || v.CreateTime.V != 9 {
		t.Errorf("video = %+v", v)
	}
	if err := json.Unmarshal([]byte(`{"type":"video","aweme_info":{"aweme_id":"9","desc":"w"}}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Video.ID != "9" || r.Video.Desc != "w" {
		t.Errorf("wrapped: %+v", r)
	}
	if err := json.Unmarshal([]byte(`{"type":"video","id":"10","createTime":"soon","author":{"uniqueId":"b"}}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Type != "video" || r.ID != "10" || r.Video.ID != "10" {
		t.Errorf("malformed video member: %+v", r)
	}
}

// TestKeywordQueryParamsRoundTrip: the request parameters are the task's
// params, and read back to the same request and key.
func TestKeywordQueryParamsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, q := range []KeywordQuery{
		{Keyword: " cats "},
		{Query: "cats", DatePosted: "this-week", SortBy: "most-liked", Region: "us", Trim: true},
		{Query: "dogs"},
	} {
		back := ParseKeywordQuery(q.Params())
		if !reflect.DeepEqual(back.Params(), q.Params()) || back.Key() != q.Key() {
			t.Errorf("%+v: params %v, back %+v (key %q, want %q)", q, q.Params(), back, back.Key(), q.Key())
		}
	}
	q := KeywordQuery{Query: "cats", DatePosted: "this-week", SortBy: "most-liked", Region: "us", Trim: true}
	if got, want := q.Key(), "query=cats&date_posted=this-week&region=us&sort_by=most-liked&trim=true"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	if got := q.Params().Get("region"); got != "US" {
		t.Errorf("region sent as %q", got)
	}
}
