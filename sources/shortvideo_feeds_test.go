package sources

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

func TestFeeds(t *testing.T) {
	t.Parallel()
	videos := `{"videos":[{"id":"71","desc":"a","author":{"uniqueId":"x"},"stats":{"playCount":3,"diggCount":1}},{"id":"72"}],
		"cursor":"ignored","hasMore":true}`
	for _, tc := range []struct {
		path string
		fn   func(*Client, context.Context) (*Page[SVVideo], error)
	}{
		{"/api/shortvideo/get-trending-feed", (*Client).SVTrendingFeed},
		{"/api/shortvideo/videos/popular", (*Client).SVPopularVideos},
	} {
		p, sent := call(t, videos, func(ctx context.Context, c *Client) (*Page[SVVideo], error) { return tc.fn(c, ctx) })
		wantQuery(t, sent, tc.path, url.Values{})
		if len(p.Items) != 2 || p.Items[0].V.Author.UniqueID != "x" || p.Items[0].V.Stats.PlayCount.V != 3 || p.Items[1].V.ID != "72" {
			t.Errorf("%s: items = %+v", tc.path, p.Items)
		}
		if p.Cursor != "" || p.HasMore || p.HasMoreKnown {
			t.Errorf("%s: a feed must not paginate: %q %v %v", tc.path, p.Cursor, p.HasMore, p.HasMoreKnown)
		}
		if NextStep("", p.Info(), 1, 0) != StopEnd {
			t.Errorf("%s: feed does not end after one page", tc.path)
		}
	}
	p, sent := call(t, `{"creators":[{"uniqueId":"a","nickname":"A","followerCount":"12","verified":true},
		{"unique_id":"b","follower_count":3,"verified":0}],"credits_remaining":4}`,
		func(ctx context.Context, c *Client) (*Page[SVCreator], error) { return c.SVPopularCreators(ctx) })
	wantQuery(t, sent, "/api/shortvideo/creators/popular", url.Values{})
	want := []SVCreator{{UniqueID: "a", Nickname: "A", FollowerCount: Int64{12, true}, Verified: Flag{true, true}},
		{UniqueID: "b", FollowerCount: Int64{3, true}, Verified: Flag{false, true}}}
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
			SVLive{IsLive: Flag{true, true}, Title: "hello", ViewerCount: Int64{1234, true}, StartTime: Int64{1735689000, true}}},
		{`{"isLive":false,"title":"","viewerCount":0,"startTime":0}`,
			SVLive{IsLive: Flag{false, true}, ViewerCount: Int64{0, true}, StartTime: Int64{0, true}}},
		{`{"success":true,"credits_charged":1,"is_live":1,"title":"t","viewer_count":"5","start_time":"1735689000"}`,
			SVLive{IsLive: Flag{true, true}, Title: "t", ViewerCount: Int64{5, true}, StartTime: Int64{1735689000, true}, Credits: Credits{Charged: Int64{1, true}}}},
	}
	for _, tc := range cases {
		l, sent := call(t, tc.body, func(ctx context.Context, c *Client) (*SVLive, error) { return c.SVLive(ctx, "@alice") })
		wantQuery(t, sent, "/api/shortvideo/user/live", url.Values{"handle": {"alice"}})
		if !strings.Contains(string(l.Raw), "title") {
			t.Errorf("raw = %s", l.Raw)
		}
		l.Raw = nil
		if l.IsLive != tc.want.IsLive || l.Title != tc.want.Title || l.ViewerCount != tc.want.ViewerCount || l.StartTime != tc.want.StartTime || l.Credits != tc.want.Credits {
			t.Errorf("live = %+v\nwant %+v", *l, tc.want)
		}
	}
}
