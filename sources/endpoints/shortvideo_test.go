package endpoints

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/testkit/upstreamtest"
)

func TestTolerantDecoding(t *testing.T) {
	t.Parallel()
	s := upstreamtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		switch r.URL.Path {
		case "/api/v1/sv/profile":
			fmt.Fprint(w, `{"success":true,"credits_remaining":"41","credits_charged":1,
			"user":{"id":7234567890123456789,"uniqueId":"alice","secUid":"S1","verified":1,"privateAccount":"false","extra":{"x":1}},
			"stats":{"followerCount":"9007199254740993","followingCount":12,"heartCount":1.5e3,"videoCount":null}}`)
		case "/api/v1/sv/user/followers":
			fmt.Fprint(w, `{"followers":[{"unique_id":"bob","sec_uid":"S2","follower_count":"5"},{"uniqueId":"carol","verified":true}],
			"has_more":1,"cursor":1740000000123}`)
		default:
			http.NotFound(w, r)
		}
	})
	c := upstreamtest.Client(t, s.URL, func(c *sources.Config) { c.Prefixes.ShortVideo = "/v1/sv" })
	ctx := context.Background()
	p, err := sources.Do(ctx, c, nil, SVProfileCall("@alice"))
	if err != nil {
		t.Fatal(err)
	}
	if p.User.ID != "7234567890123456789" || !p.User.Verified.V || p.User.PrivateAccount.V {
		t.Errorf("user = %+v", p.User)
	}
	if p.Stats.FollowerCount.V != 9007199254740993 {
		t.Errorf("followerCount = %d, want exact 9007199254740993", p.Stats.FollowerCount.V)
	}
	if p.Stats.HeartCount.V != 1500 || p.Stats.VideoCount.Valid {
		t.Errorf("heart=%+v video=%+v", p.Stats.HeartCount, p.Stats.VideoCount)
	}
	if p.Credits.Remaining.V != 41 || p.Credits.Charged.V != 1 {
		t.Errorf("credits = %+v", p.Credits)
	}
	if !strings.Contains(string(p.Raw), `"extra"`) {
		t.Error("raw JSON lost unknown fields")
	}
	page, err := sources.Do(ctx, c, nil, SVFollowersCall("S1", ""))
	if err != nil {
		t.Fatal(err)
	}
	if !page.HasMore || !page.HasMoreKnown || page.Cursor != "1740000000123" {
		t.Errorf("page meta = %v %v %q", page.HasMore, page.HasMoreKnown, page.Cursor)
	}
	if len(page.Items) != 2 || page.Items[0].V.UniqueID != "bob" || page.Items[0].V.SecUID != "S2" || page.Items[0].V.FollowerCount.V != 5 || page.Items[1].V.UniqueID != "carol" || !page.Items[1].V.Verified.V {
		t.Errorf("items = %+v", page.Items)
	}
	if !strings.Contains(string(page.Items[0].Raw), "unique_id") {
		t.Errorf("item raw = %s", page.Items[0].Raw)
	}
}
