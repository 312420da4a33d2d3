package endpoints

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"testing"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/upstreamtest"
)

func TestPSProfile(t *testing.T) {
	t.Parallel()
	str := func(s string) NullText { return NullText{V: s, Valid: true} }
	cases := []struct {
		name, body string
		want       PSProfile
	}{
		{"contract, not business", `{"success":true,"data":{"user":{"id":"123","username":"alice","full_name":"Alice A","biography":"bio",
			"edge_followed_by":{"count":10},"edge_follow":{"count":2},"edge_owner_to_timeline_media":{"count":7},
			"is_verified":true,"is_business_account":false,"category_name":null,
			"business_email":null,"business_phone_number":null,"public_email":null,"public_phone_number":null}}}`,
			PSProfile{ID: "123", Username: "alice", FullName: "Alice A", Biography: "bio", Followers: Int64{V: 10, Valid: true}, Following: Int64{V: 2, Valid: true},
				Posts: Int64{V: 7, Valid: true}, IsVerified: Flag{V: true, Valid: true}, IsBusiness: Flag{V: false, Valid: true}}},
		{"contract, business", `{"success":true,"data":{"user":{"id":"124","username":"shop","edge_followed_by":{"count":"9007199254740993"},
			"is_business_account":true,"category_name":"Shopping",
			"business_email":"b@x","business_phone_number":"+1 555","public_email":"p@x","public_phone_number":"+1 666"}}}`,
			PSProfile{ID: "124", Username: "shop", Followers: Int64{V: 9007199254740993, Valid: true}, IsBusiness: Flag{V: true, Valid: true},
				CategoryName: str("Shopping"), Contact: PSContact{Email: str("b@x"), Phone: str("+1 555")}}},
		{"real: public contact only, address json, counts flat, credits", `{"success":true,"credits_remaining":90,"credits_charged":1,
			"data":{"user":{"pk":456,"username":"cafe","follower_count":5,"following_count":"6","media_count":7,"is_verified":"false","is_business":1,
			"business_email":"","public_email":"p@cafe","contact_phone_number":"+33 1","business_address_json":"{\"street_address\":\"1 rue\"}"}}}`,
			PSProfile{ID: "456", Username: "cafe", Followers: Int64{V: 5, Valid: true}, Following: Int64{V: 6, Valid: true}, Posts: Int64{V: 7, Valid: true},
				IsVerified: Flag{V: false, Valid: true}, IsBusiness: Flag{V: true, Valid: true},
				Contact: PSContact{Email: str("p@cafe"), Phone: str("+33 1"), Address: str(`{"street_address":"1 rue"}`)},
				Credits: Credits{Remaining: Int64{V: 90, Valid: true}, Charged: Int64{V: 1, Valid: true}}}},
		{"address object or street", `{"data":{"user":{"id":"1","username":"a","business_address_json":null,"address_street":"Main St 1"}}}`,
			PSProfile{ID: "1", Username: "a", Contact: PSContact{Address: str("Main St 1")}}},
		{"empty object", `{}`, PSProfile{Empty: true}},
		{"empty body", ``, PSProfile{Empty: true}},
		{"blank body", " \n", PSProfile{Empty: true}},
		{"null body", `null`, PSProfile{Empty: true}},
		{"data null", `{"success":true,"data":null}`, PSProfile{Empty: true}},
		{"user null, credits", `{"success":true,"credits_charged":0,"data":{"user":null}}`, PSProfile{Empty: true, Credits: Credits{Charged: Int64{V: 0, Valid: true}}}},
		{"user without id or username", `{"data":{"user":{"username":null}}}`, PSProfile{Empty: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, sent := upstreamtest.Call(t, tc.body, PSProfileCall(" @alice"))
			upstreamtest.WantQuery(t, sent, "/api/photosocial/profile", url.Values{"handle": {"alice"}})
			if string(p.Raw) != tc.body {
				t.Errorf("raw = %q", p.Raw)
			}
			p.Raw = nil
			if !reflect.DeepEqual(*p, tc.want) {
				t.Errorf("profile = %+v\nwant      %+v", *p, tc.want)
			}
		})
	}
}

func TestPSComments(t *testing.T) {
	t.Parallel()
	post := "https://www.photosocial.example/p/Cabc123/"
	cases := []struct {
		name, cursor, body string
		want               []PSComment
		next               string
		stop               sources.StopReason
	}{
		{"contract first page", "", `{"success":true,"comments":[{"text":"nice","user":{"username":"bob"},"created_at":1735689600,"like_count":3}],"cursor":"abc"}`,
			[]PSComment{{Text: "nice", Username: "bob", CreatedAt: Int64{V: 1735689600, Valid: true}, LikeCount: Int64{V: 3, Valid: true}}}, "abc", ""},
		{"real: pk, null child count, numeric cursor", "abc", `{"success":true,"comments":[{"pk":"1798","text":"x","user":{"username":"c"},
			"created_at":"1735689601","comment_like_count":"4","child_comment_count":null},{"id":"18","text":"y","child_comment_count":2}],"cursor":1740000000123}`,
			[]PSComment{{ID: "1798", Text: "x", Username: "c", CreatedAt: Int64{V: 1735689601, Valid: true}, LikeCount: Int64{V: 4, Valid: true}},
				{ID: "18", Text: "y", ChildCommentCount: Int64{V: 2, Valid: true}, HasMoreReplies: true}}, "1740000000123", ""},
		{"last page: empty cursor", "x", `{"success":true,"comments":[{"text":"z"}],"cursor":""}`, []PSComment{{Text: "z"}}, "", sources.StopEnd},
		{"last page: no cursor", "x", `{"success":true,"comments":[{"text":"z"}]}`, []PSComment{{Text: "z"}}, "", sources.StopEnd},
		{"last page: empty list", "x", `{"success":true,"comments":[],"cursor":"y"}`, []PSComment{}, "y", sources.StopEmptyPage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, sent := upstreamtest.Call(t, tc.body, PSCommentsCall(post, tc.cursor))
			want := url.Values{"url": {post}}
			if tc.cursor != "" {
				want.Set("cursor", tc.cursor)
			}
			upstreamtest.WantQuery(t, sent, "/api/photosocial/post/comments", want)
			if len(p.Items) != len(tc.want) {
				t.Fatalf("items = %+v", p.Items)
			}
			for i := range tc.want {
				if !reflect.DeepEqual(p.Items[i].V, tc.want[i]) {
					t.Errorf("comment %d = %+v, want %+v", i, p.Items[i].V, tc.want[i])
				}
			}
			if p.Cursor != tc.next || p.HasMoreKnown {
				t.Errorf("cursor %q known %v", p.Cursor, p.HasMoreKnown)
			}
			if got := sources.NextStep(tc.cursor, p.Info(), 1, 0); got != tc.stop {
				t.Errorf("NextStep = %q, want %q", got, tc.stop)
			}
		})
	}
}

func TestPSReelsSearch(t *testing.T) {
	t.Parallel()
	t.Run("pages", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			page       int
			body, next string
			want       []PSReel
		}{
			{1, `{"success":true,"reels":[{"id":"31","code":"Dabc","owner":{"username":"o"},"play_count":10,"like_count":2,"caption":"c"}]}`, "2",
				[]PSReel{{ID: "31", Code: "Dabc", OwnerUsername: "o", PlayCount: Int64{V: 10, Valid: true}, LikeCount: Int64{V: 2, Valid: true}, Caption: "c"}}},
			{7, `{"success":true,"reels":[{"pk":32,"code":"Dx","user":{"username":"u"},"play_count":"9007199254740993","caption":{"text":"cap"}},
				{"media":{"pk":"33","code":"Dy","caption":null}}],"cursor":"junk","has_more":true}`, "8",
				[]PSReel{{ID: "32", Code: "Dx", OwnerUsername: "u", PlayCount: Int64{V: 9007199254740993, Valid: true}, Caption: "cap"}, {ID: "33", Code: "Dy"}}},
			{12, `{"success":true,"reels":[]}`, "", nil},
			{3, `{"success":true}`, "", nil},
		}
		for _, tc := range cases {
			p, sent := upstreamtest.Call(t, tc.body, PSReelsSearchCall(" cats ", tc.page))
			upstreamtest.WantQuery(t, sent, "/api/photosocial/reels/search", url.Values{"query": {"cats"}, "page": {strconv.Itoa(tc.page)}})
			if len(p.Items) != len(tc.want) {
				t.Fatalf("page %d: items = %+v", tc.page, p.Items)
			}
			for i := range tc.want {
				if !reflect.DeepEqual(p.Items[i].V, tc.want[i]) {
					t.Errorf("page %d reel %d = %+v, want %+v", tc.page, i, p.Items[i].V, tc.want[i])
				}
			}
			if p.Cursor != tc.next || p.HasMoreKnown || p.HasMore {
				t.Errorf("page %d: cursor %q more %v known %v", tc.page, p.Cursor, p.HasMore, p.HasMoreKnown)
			}
			wantStop := sources.StopReason("")
			if tc.next == "" {
				wantStop = sources.StopEnd
			}
			if got := sources.NextStep(strconv.Itoa(tc.page), p.Info(), 1, 0); got != wantStop {
				t.Errorf("page %d: NextStep = %q", tc.page, got)
			}
		}
	})
	t.Run("400 past the last page ends the list", func(t *testing.T) {
		t.Parallel()
		rec := upstreamtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
			w.WriteHeader(400)
			w.Write([]byte(`{"success":false,"message":"page out of range"}`))
		})
		c := upstreamtest.Client(t, rec.URL, nil)
		p, err := sources.Do(context.Background(), c, nil, PSReelsSearchCall("cats", 12))
		if err != nil || len(p.Items) != 0 || p.Cursor != "" || sources.NextStep("12", p.Info(), 12, 0) != sources.StopEnd {
			t.Errorf("page 12: %+v, %v", p, err)
		}
		if _, err := sources.Do(context.Background(), c, nil, PSReelsSearchCall("cats", 1)); sources.ClassOf(err) != sources.ClassBadRequest {
			t.Errorf("page 1: err = %v, want the 400", err)
		}
		if n := rec.Calls.Load(); n != 2 {
			t.Errorf("calls = %d", n)
		}
	})
}

func TestPSTranscript(t *testing.T) {
	t.Parallel()
	for preset, want := range map[string]string{sources.PresetContract: "https://www.photosocial.example/reel/Dabc_1-x/",
		sources.PresetScrapeCreators: "https://www.instagram.com/reel/Dabc_1-x/"} {
		r, _ := sources.Options{Preset: preset}.Route("photosocial.transcript")
		if reel := r.ReelURL("Dabc_1-x"); reel != want {
			t.Errorf("%s: ReelURL = %q, want %q", preset, reel, want)
		}
	}
	const reel = "https://www.photosocial.example/reel/Dabc_1-x/"
	cases := []struct {
		body string
		want []PSTranscriptEntry
	}{
		{`{"success":true,"transcripts":[{"id":"31","shortcode":"Dabc","text":"hello"},{"id":"32","shortcode":"Dabc","text":""}]}`,
			[]PSTranscriptEntry{{"31", "Dabc", NullText{V: "hello", Valid: true}}, {"32", "Dabc", NullText{V: "", Valid: true}}}},
		{`{"success":true,"credits_charged":1,"transcripts":[{"id":31,"code":"Dabc","text":null}]}`,
			[]PSTranscriptEntry{{"31", "Dabc", NullText{}}}},
		{`{"success":true,"transcripts":[]}`, nil},
		{`{"success":true,"transcripts":null}`, nil},
	}
	for _, tc := range cases {
		tr, sent := upstreamtest.Call(t, tc.body, PSTranscriptCall(reel))
		upstreamtest.WantQuery(t, sent, "/api/photosocial/media/transcript", url.Values{"url": {reel}})
		if len(tr.Entries) != len(tc.want) || string(tr.Raw) != tc.body {
			t.Fatalf("transcript = %+v", tr)
		}
		for i := range tc.want {
			if tr.Entries[i].V != tc.want[i] || len(tr.Entries[i].Raw) == 0 {
				t.Errorf("entry %d = %+v, want %+v", i, tr.Entries[i], tc.want[i])
			}
		}
	}
}

func TestPSEmbed(t *testing.T) {
	t.Parallel()
	e, sent := upstreamtest.Call(t, `{"success":true,"credits_remaining":3,"html":"<blockquote>@alice</blockquote><script async src=\"x.js\"></script>"}`,
		PSEmbedCall("@alice"))
	upstreamtest.WantQuery(t, sent, "/api/photosocial/user/embed", url.Values{"handle": {"alice"}})
	if e.HTML != `<blockquote>@alice</blockquote><script async src="x.js"></script>` || e.Credits.Remaining.V != 3 || len(e.Raw) == 0 {
		t.Errorf("embed = %+v", e)
	}
}

func TestPSHighlight(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"17912345": "17912345", "highlight:17912345": "17912345", " highlight:7 ": "7"} {
		if got, err := HighlightDigits(in); err != nil || got != want {
			t.Errorf("HighlightDigits(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "highlight:", "abc", "highlight:12a", "HIGHLIGHT:1", "-1", "1 2", "highlight:highlight:1"} {
		if _, err := HighlightDigits(in); sources.ClassOf(err) != sources.ClassBadRequest {
			t.Errorf("HighlightDigits(%q) err = %v", in, err)
		}
	}
	body := `{"success":true,"id":"highlight:17912345","title":"Trips","media_count":"2","credits_charged":1,
		"items":[{"id":"1","media_type":2,"video_versions":[{"url":"https://v/1.mp4","width":720},{"url":"https://v/2.mp4"}]},
		{"id":"2","media_type":1,"video_versions":[]},{"media_type":"1","video_versions":null}],
		"user":{"username":"alice","is_verified":1}}`
	for _, id := range []string{"17912345", "highlight:17912345"} {
		h, sent := upstreamtest.Call(t, body, PSHighlightCall(id))
		upstreamtest.WantQuery(t, sent, "/api/photosocial/user/highlight/detail", url.Values{"id": {"17912345"}})
		if h.ID != "highlight:17912345" || h.Digits != "17912345" || h.Title != "Trips" || h.MediaCount.V != 2 ||
			h.Username != "alice" || !h.UserVerified.V || h.Credits.Charged.V != 1 || len(h.Raw) == 0 {
			t.Errorf("highlight = %+v", h)
		}
		if len(h.Items) != 3 || h.Items[0].V.MediaType.V != 2 || len(h.Items[0].V.VideoURLs) != 2 || h.Items[0].V.VideoURLs[1] != "https://v/2.mp4" ||
			h.Items[1].V.MediaType.V != 1 || h.Items[1].V.VideoURLs != nil || h.Items[2].V.MediaType.V != 1 || len(h.Items[0].Raw) == 0 {
			t.Errorf("items = %+v", h.Items)
		}
	}
	// An answer without an id keeps the digits sent.
	h, _ := upstreamtest.Call(t, `{"success":true,"id":null,"title":"T","items":null}`, PSHighlightCall("highlight:42"))
	if h.ID != "" || h.Digits != "42" || len(h.Items) != 0 {
		t.Errorf("null highlight = %+v", h)
	}
}
