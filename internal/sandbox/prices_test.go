package sandbox

import (
	"net/http"
	"strings"
	"testing"
)

// TestPrices: a priced endpoint's billable answers cost its price in the
// usage, the arrivals, the balance and (where the body says what it
// charged) credits_charged; a balance short of the price answers 402 and
// spends nothing; errors and free answers stay free; other endpoints
// cost 1.
func TestPrices(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Credits: 10, RealServiceFields: true,
		Prices: map[string]int64{"/shortvideo/profile": 3, "/photosocial/profile": 4}})
	m := b.getOK(t, "/shortvideo/profile", "handle=alice")
	if num(t, m["credits_charged"]) != 3 || num(t, m["credits_remaining"]) != 7 {
		t.Errorf("priced profile: charged %v remaining %v", m["credits_charged"], m["credits_remaining"])
	}
	if m := b.getOK(t, "/shortvideo/user/live", "handle=alice"); num(t, m["credits_charged"]) != 1 {
		t.Errorf("unpriced endpoint charged %v", m["credits_charged"])
	}
	b.get(t, "/shortvideo/profile", "handle=missing_x")           // 404: free
	b.get(t, "/photosocial/profile", "handle=private_x")          // free 200
	status, body := b.get(t, "/shortvideo/profile", "handle=bob") // 6 left: fits
	if status != http.StatusOK {
		t.Fatalf("second priced profile: %d %s", status, body)
	}
	status, _ = b.get(t, "/shortvideo/profile", "handle=carol") // 3 left: fits exactly
	if status != http.StatusOK {
		t.Fatalf("third priced profile: %d", status)
	}
	status, body = b.get(t, "/shortvideo/profile", "handle=dave") // 0 left
	if status != http.StatusPaymentRequired {
		t.Errorf("empty balance: %d %s", status, body)
	}
	b.srv.AddCredits(testKey, 2)
	if status, _ := b.get(t, "/shortvideo/profile", "handle=dave"); status != http.StatusPaymentRequired {
		t.Errorf("balance 2 < price 3: %d", status)
	}
	if left, _ := b.srv.Credits(testKey); left != 2 {
		t.Errorf("a refused priced request spent: %d left", left)
	}
	u := b.srv.Usage(testKey)
	if e := u.ByEndpoint["/shortvideo/profile"]; u.Credits != 10 || u.Billable != 4 || e.Credits != 9 || e.Billable != 3 {
		t.Errorf("usage %+v", u)
	}
	var credits []int64
	for _, a := range b.srv.Arrivals(testKey) {
		credits = append(credits, a.Credits)
	}
	if got, want := credits, []int64{3, 1, 0, 0, 3, 3, 0, 0}; !equalInts(got, want) {
		t.Errorf("Arrival.Credits = %v, want %v", got, want)
	}

	// The real preset: priced endpoints cost their price, comments with
	// replies keep their 15, a cached answer stays free.
	r := realSetup(t, Config{Cache: NewCache(), Prices: map[string]int64{
		"/v1/tiktok/profile": 2, "/v1/tiktok/user/followers": 5, "/v2/instagram/post/comments": 7}})
	r.rgetOK(t, "/v1/tiktok/profile", "handle=alice&cache_max_age=1d")
	r.rgetOK(t, "/v1/tiktok/profile", "handle=alice&cache_max_age=1d") // cached: 0
	if m := r.rgetOK(t, "/v2/instagram/post/comments", "url=https://www.instagram.com/p/x_c3/"); num(t, m["credits_charged"]) != 7 {
		t.Errorf("priced comments charged %v", m["credits_charged"])
	}
	if m := r.rgetOK(t, "/v2/instagram/post/comments", "url=https://www.instagram.com/p/x_c3/&include_replies=true"); num(t, m["credits_charged"]) != 15 {
		t.Errorf("comments with replies charged %v", m["credits_charged"])
	}
	r.rgetOK(t, "/v1/tiktok/user/followers", "handle=alice")
	if u := r.srv.Usage(testKey); u.Credits != 2+0+7+15+5 || u.Billable != 4 {
		t.Errorf("real usage %+v", u)
	}
}

func TestPricesValidation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Prices: map[string]int64{"/v1/tiktok/profile": 2}}, `Config.Prices["/v1/tiktok/profile"]: not an endpoint of preset "contract"`},
		{Config{Prices: map[string]int64{"/shortvideo/profile": 0}}, `Config.Prices["/shortvideo/profile"] must be in [1, 1000], got 0`},
		{Config{Prices: map[string]int64{"/shortvideo/profile": 1001}}, "got 1001"},
		{Config{Preset: PresetScrapeCreators, Prices: map[string]int64{"/shortvideo/profile": 2}}, `not an endpoint of preset "scrapecreators"`},
		{Config{Cache: NewCache()}, `Config.Cache: preset "contract" has no answer cache`},
	} {
		c.cfg.APIKeys = []string{"k"}
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
