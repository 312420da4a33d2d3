package endpoints

import (
	"net/url"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/upstreamtest"
)

func TestFeeds(t *testing.T) {
	t.Parallel()
	videos := `{"videos":[{"id":"71","desc":"a","author":{"uniqueId":"x"},"stats":{"playCount":3,"diggCount":1}},{"id":"72"}],
		"cursor":"ignored","hasMore":true}`
	for _, tc := range []struct {
		path string
		call sources.Call[*sources.Page[SVVideo]]
	}{
		{"/api/shortvideo/get-trending-feed", SVTrendingFeedCall()},
		{"/api/shortvideo/videos/popular", SVPopularVideosCall()},
	} {
		p, sent := upstreamtest.Call(t, videos, tc.call)
		upstreamtest.WantQuery(t, sent, tc.path, url.Values{})
		if len(p.Items) != 2 || p.Items[0].V.Author.UniqueID != "x" || p.Items[0].V.Stats.PlayCount.V != 3 || p.Items[1].V.ID != "72" {
			t.Errorf("%s: items = %+v", tc.path, p.Items)
		}
		if p.Cursor != "" || p.HasMore || p.HasMoreKnown {
			t.Errorf("%s: a feed must not paginate: %q %v %v", tc.path, p.Cursor, p.HasMore, p.HasMoreKnown)
		}
		if sources.NextStep("", p.Info(), 1, 0) != sources.StopEnd {
			t.Errorf("%s: feed does not end after one page", tc.path)
		}
	}
	p, sent := upstreamtest.Call(t, `{"creators":[{"uniqueId":"a","nickname":"A","followerCount":"12","verified":true},
		{"unique_id":"b","follower_count":3,"verified":0}],"credits_remaining":4}`,
		SVPopularCreatorsCall())
	upstreamtest.WantQuery(t, sent, "/api/shortvideo/creators/popular", url.Values{})
	want := []SVCreator{{UniqueID: "a", Nickname: "A", FollowerCount: Int64{V: 12, Valid: true}, Verified: Flag{V: true, Valid: true}},
		{UniqueID: "b", FollowerCount: Int64{V: 3, Valid: true}, Verified: Flag{V: false, Valid: true}}}
	if len(p.Items) != 2 || p.Items[0].V != want[0] || p.Items[1].V != want[1] || p.Credits.Remaining.V != 4 || p.HasMoreKnown {
		t.Errorf("creators = %+v", p)
	}
}

func TestLive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body string
		want SVLive
	}{
		{`{"isLive":true,"title":"hello","viewerCount":1234,"startTime":1735689000}`,
			SVLive{IsLive: Flag{V: true, Valid: true}, Title: "hello", ViewerCount: Int64{V: 1234, Valid: true}, StartTime: Int64{V: 1735689000, Valid: true}}},
		{`{"isLive":false,"title":"","viewerCount":0,"startTime":0}`,
			SVLive{IsLive: Flag{V: false, Valid: true}, ViewerCount: Int64{V: 0, Valid: true}, StartTime: Int64{V: 0, Valid: true}}},
		{`{"success":true,"credits_charged":1,"is_live":1,"title":"t","viewer_count":"5","start_time":"1735689000"}`,
			SVLive{IsLive: Flag{V: true, Valid: true}, Title: "t", ViewerCount: Int64{V: 5, Valid: true}, StartTime: Int64{V: 1735689000, Valid: true}, Credits: Credits{Charged: Int64{V: 1, Valid: true}}}},
	}
	for _, tc := range cases {
		l, sent := upstreamtest.Call(t, tc.body, SVLiveCall("@alice"))
		upstreamtest.WantQuery(t, sent, "/api/shortvideo/user/live", url.Values{"handle": {"alice"}})
		if !strings.Contains(string(l.Raw), "title") {
			t.Errorf("raw = %s", l.Raw)
		}
		l.Raw = nil
		if l.IsLive != tc.want.IsLive || l.Title != tc.want.Title || l.ViewerCount != tc.want.ViewerCount || l.StartTime != tc.want.StartTime || l.Credits != tc.want.Credits {
			t.Errorf("live = %+v\nwant %+v", *l, tc.want)
		}
	}
}
