package endpoints

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/upstreamtest"
)

func TestSong(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       SVSong
	}{
		{"contract", `{"id":"6900000000000000001","title":"Song","authorName":"Band","duration":31,"usageCount":1200,
			"coverLarge":"https://c/l.jpg","coverMedium":"https://c/m.jpg","coverThumb":"https://c/t.jpg","playUrl":"https://p"}`,
			SVSong{ID: "6900000000000000001", Title: "Song", AuthorName: "Band", Duration: Int64{V: 31, Valid: true}, UsageCount: Int64{V: 1200, Valid: true},
				CoverLarge: "https://c/l.jpg", CoverThumb: "https://c/t.jpg"}},
		{"real: numbers as strings, snake_case, credits", `{"success":true,"credits_remaining":"7","credits_charged":1,
			"id":6900000000000000002,"title":"S","author_name":"A","duration":"15","usage_count":"9007199254740993","cover_large":"L","cover_thumb":"T"}`,
			SVSong{ID: "6900000000000000002", Title: "S", AuthorName: "A", Duration: Int64{V: 15, Valid: true}, UsageCount: Int64{V: 9007199254740993, Valid: true},
				CoverLarge: "L", CoverThumb: "T", Credits: Credits{Remaining: Int64{V: 7, Valid: true}, Charged: Int64{V: 1, Valid: true}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, sent := upstreamtest.Call(t, tc.body, SVSongCall(" 6900000000000000001 "))
			upstreamtest.WantQuery(t, sent, "/api/shortvideo/song", url.Values{"id": {"6900000000000000001"}})
			if string(s.Raw) != tc.body {
				t.Errorf("raw = %s", s.Raw)
			}
			s.Raw = nil
			if s.ID != tc.want.ID || s.Title != tc.want.Title || s.AuthorName != tc.want.AuthorName || s.Duration != tc.want.Duration ||
				s.UsageCount != tc.want.UsageCount || s.CoverLarge != tc.want.CoverLarge || s.CoverThumb != tc.want.CoverThumb || s.Credits != tc.want.Credits {
				t.Errorf("song = %+v\nwant %+v", *s, tc.want)
			}
		})
	}
}

func TestSongVideos(t *testing.T) {
	t.Parallel()
	for _, cursor := range []string{"", "50"} {
		p, sent := upstreamtest.Call(t, `{"videos":[{"id":"7","stats":{"playCount":1}}],"cursor":"100","hasMore":true}`,
			SVSongVideosCall("69", cursor))
		want := url.Values{"id": {"69"}}
		if cursor != "" {
			want.Set("cursor", cursor)
		}
		upstreamtest.WantQuery(t, sent, "/api/shortvideo/song/videos", want)
		if len(p.Items) != 1 || p.Items[0].V.ID != "7" || p.Cursor != "100" || !p.HasMore {
			t.Errorf("page = %+v", p)
		}
	}
}

// A charged 200 whose fields are all null is the real service's "not
// found": ClassNotFound, never a song row of nulls.
func TestSongAllNullIsNotFound(t *testing.T) {
	t.Parallel()
	s := upstreamtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		fmt.Fprint(w, `{"id":null,"title":null,"duration":null,"usageCount":null}`)
	})
	_, err := sources.Do(context.Background(), upstreamtest.Client(t, s.URL, nil), nil, SVSongCall("6900000000000000001"))
	if sources.ClassOf(err) != sources.ClassNotFound || s.Calls.Load() != 1 {
		t.Errorf("err = %v after %d requests, want not found after 1", err, s.Calls.Load())
	}
}
