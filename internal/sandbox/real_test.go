package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// realSetup is a sandbox speaking the real dialect.
func realSetup(t *testing.T, cfg Config) *testBundle {
	t.Helper()
	cfg.Preset = PresetScrapeCreators
	return setup(t, cfg)
}

// rget calls a real path (no /api) with the test key.
func (b *testBundle) rget(t *testing.T, path, rawQuery string) (int, []byte) {
	t.Helper()
	return b.do(t, http.MethodGet, path, rawQuery, map[string]string{"x-api-key": b.key})
}

// rgetOK calls a real path that must answer 200 and decodes the object.
func (b *testBundle) rgetOK(t *testing.T, path, rawQuery string) map[string]any {
	t.Helper()
	status, body := b.rget(t, path, rawQuery)
	if status != http.StatusOK {
		t.Fatalf("GET %s?%s: status %d, body %s", path, rawQuery, status, body)
	}
	m, ok := decode(t, body).(map[string]any)
	if !ok {
		t.Fatalf("GET %s?%s: not an object: %s", path, rawQuery, body)
	}
	return m
}

// has fails unless every dotted path is present in m (through the first
// element of arrays) and every path prefixed "!" is absent.
func has(t *testing.T, what string, m any, paths ...string) {
	t.Helper()
	for _, p := range paths {
		want := !strings.HasPrefix(p, "!")
		if _, ok := lookup(m, strings.TrimPrefix(p, "!")); ok != want {
			t.Errorf("%s: %s present=%v, want %v", what, strings.TrimPrefix(p, "!"), ok, want)
		}
	}
}

// lookup follows a dotted path; an array step looks into its first element.
func lookup(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		if a, ok := v.([]any); ok {
			if len(a) == 0 {
				return nil, false
			}
			v = a[0]
		}
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = o[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func TestPresetRealRouteShapes(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{PageSize: 10, Credits: 1000})
	// The profile first: user_id parameters name ids the sandbox has shown.
	uid := jsonText(field(b.rgetOK(t, "/v1/tiktok/profile", "handle=acct_f120_g30"), "user.id"))
	for _, c := range []struct {
		path, q string
		paths   []string
	}{
		{"/v1/tiktok/search/keyword", "query=cats+n30", []string{"cursor", "search_item_list.aweme_info.aweme_id",
			"search_item_list.aweme_info.desc", "search_item_list.aweme_info.create_time",
			"search_item_list.aweme_info.statistics.play_count", "search_item_list.aweme_info.statistics.digg_count",
			"search_item_list.aweme_info.statistics.comment_count", "search_item_list.aweme_info.statistics.share_count",
			"search_item_list.aweme_info.author.uid", "search_item_list.aweme_info.author.unique_id",
			"search_item_list.aweme_info.author.sec_uid", "search_item_list.aweme_info.author.nickname",
			"search_item_list.aweme_info.music.id", "search_item_list.aweme_info.music.id_str",
			"search_item_list.aweme_info.music.title", "!has_more", "!hasMore", "!success", "!credits_remaining"}},
		{"/v1/tiktok/search/keyword", "query=cats+n30&trim=true", []string{"search_item_list.aweme_id",
			"search_item_list.statistics.play_count", "search_item_list.author.unique_id", "search_item_list.url",
			"search_item_list.create_time_utc"}},
		{"/v1/tiktok/search/hashtag", "hashtag=fitness+n15", []string{"aweme_list.aweme_id", "aweme_list.statistics.play_count",
			"aweme_list.author.unique_id", "cursor", "has_more", "status_code", "!hashtags"}},
		{"/v1/tiktok/search/top", "query=mixed+cooking+n12", []string{"success", "credits_remaining", "!credits_charged",
			"items.id", "items.create_time", "items.statistics.play_count", "items.author.unique_id", "cursor", "!has_more"}},
		{"/v1/tiktok/user/followers", "handle=acct_f120_g30", []string{"followers.unique_id", "followers.sec_uid",
			"followers.uid", "followers.nickname", "followers.follower_count", "followers.verification_type",
			"has_more", "min_time", "max_time", "total", "!cursor"}},
		{"/v1/tiktok/user/followers", "user_id=" + uid, []string{"followers.unique_id"}},
		{"/v1/tiktok/user/following", "handle=acct_f120_g30", []string{"followings.unique_id", "has_more", "min_time", "!following"}},
		{"/v1/tiktok/song/videos", "clipId=7370375686554782506", []string{"aweme_list.aweme_id", "aweme_list.music.id",
			"cursor", "has_more"}},
		{"/v1/tiktok/song", "clipId=7370375686554782506", []string{"music_info.id", "music_info.id_str", "music_info.title",
			"music_info.author", "music_info.duration", "music_info.user_count", "status_code", "!success"}},
		{"/v1/tiktok/get-trending-feed", "region=US", []string{"aweme_list.aweme_id", "aweme_list.author.uid",
			"aweme_list.author.sec_uid", "aweme_list.author.nickname", "!videos"}},
		{"/v1/tiktok/creators/popular", "", []string{"success", "credits_remaining", "creators.user_id", "creators.nick_name",
			"creators.follower_cnt", "pagination.has_more", "pagination.page"}},
		{"/v1/tiktok/profile", "handle=acct_f120_g30", []string{"user.id", "user.uniqueId", "user.secUid", "user.nickname",
			"user.verified", "user.privateAccount", "stats.followerCount", "stats.followingCount", "itemList", "!success"}},
		{"/v1/tiktok/user/live", "handle=dj_live_set", []string{"success", "is_live", "liveRoomUserInfo.uniqueId",
			"liveRoom.title", "liveRoom.startTime", "liveRoom.liveRoomStats.userCount"}},
		{"/v1/instagram/profile", "handle=studio_business", []string{"success", "status", "data.user.id",
			"data.user.username", "data.user.full_name", "data.user.edge_followed_by.count"}},
		{"/v2/instagram/post/comments", "url=https://www.instagram.com/p/launch_c90/", []string{"success",
			"credits_remaining", "credits_charged", "comments.id", "comments.text", "comments.created_at",
			"comments.comment_like_count", "comments.child_comment_count", "comments.user.username", "comments.user.id",
			"comments.user.is_verified", "cursor", "!has_more", "!comments.replies", "!comments.like_count"}},
		{"/v2/instagram/reels/search", "query=surf+n30", []string{"success", "credits_remaining", "reels.id",
			"reels.shortcode", "reels.url", "reels.caption", "reels.owner.id", "reels.owner.username", "reels.taken_at",
			"reels.like_count", "reels.comment_count", "reels.video_duration", "!reels.code", "!reels.play_count"}},
		{"/v2/instagram/media/transcript", "url=https://www.instagram.com/reel/interview_t3/", []string{"success",
			"transcripts.id", "transcripts.shortcode", "transcripts.text"}},
		{"/v1/instagram/user/embed", "handle=studio_business", []string{"success", "html"}},
		{"/v1/instagram/user/highlight/detail", "id=4200105", []string{"success", "id", "title", "media_count", "items",
			"user.username", "user.is_verified"}},
	} {
		has(t, c.path+"?"+c.q, b.rgetOK(t, c.path, c.q), c.paths...)
	}
	m := b.rgetOK(t, "/v1/tiktok/search/top", "query=mixed+cooking+n12")
	if ts, _ := lookup(m, "items.create_time"); !isISO(jsonText(ts)) {
		t.Errorf("top create_time %v is not ISO", ts)
	}
	m = b.rgetOK(t, "/v2/instagram/post/comments", "url=https://www.instagram.com/p/launch_c90/")
	if ts, _ := lookup(m, "comments.created_at"); !isISO(jsonText(ts)) {
		t.Errorf("comment created_at %v is not ISO", ts)
	}
	if _, ok := m["cursor"].(string); !ok {
		t.Errorf("comments cursor is %T, want string", m["cursor"])
	}
	if v, _ := lookup(b.rgetOK(t, "/v1/instagram/user/highlight/detail", "id=4200105"), "id"); v != "highlight:4200105" {
		t.Errorf("highlight id %v", v)
	}
	if status, _ := b.rget(t, "/api/shortvideo/profile", "handle=x"); status != http.StatusNotFound {
		t.Errorf("contract path in the real preset: %d", status)
	}
	if status, _ := b.rget(t, "/v1/tiktok/nothing", ""); status != http.StatusNotFound {
		t.Errorf("unknown path: %d", status)
	}
}

func isISO(s string) bool {
	_, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	return err == nil
}

func TestPresetRealBadRequests(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{})
	for _, c := range []struct{ path, q string }{
		{"/v1/tiktok/search/keyword", "keyword=cats"},
		{"/v1/tiktok/search/keyword", ""},
		{"/v1/tiktok/search/hashtag", "keyword=cats"},
		{"/v1/tiktok/search/top", "keyword=cats"},
		{"/v1/tiktok/user/followers", "secUid=" + secUIDFor("alice")},
		{"/v1/tiktok/user/followers", "handle=alice&cursor=50"},
		{"/v1/tiktok/user/followers", ""},
		{"/v1/tiktok/user/following", "handle=alice&cursor=50"},
		{"/v1/tiktok/user/following", "user_id=6000000000000000000"},
		{"/v1/tiktok/user/following", "handle=alice&min_time=99999999999"},
		{"/v1/tiktok/song", "id=7370375686554782506"},
		{"/v1/tiktok/song/videos", "id=7370375686554782506"},
		{"/v1/tiktok/get-trending-feed", ""},
		{"/v1/tiktok/videos/popular", ""},
		{"/v1/tiktok/profile", "handle=alice&cache_max_age=2d"},
		{"/v2/instagram/post/comments", "url=https://www.instagram.com/p/abc/&cursor=50"},
		{"/v2/instagram/post/comments", "url=https://www.instagram.com/p/abc/&include_replies=yes"},
		// A media URL on a host the platform does not have: the real
		// service cannot fetch it.
		{"/v2/instagram/post/comments", "url=https://www.photosocial.example/p/abc/"},
		{"/v2/instagram/media/transcript", "url=https://www.photosocial.example/reel/abc/"},
		{"/v2/instagram/post/comments", "url=https://www.tiktok.com/p/abc/"},
		{"/v2/instagram/reels/search", "query=surf&page=12"},
		{"/v2/instagram/reels/search", ""},
		{"/v1/instagram/user/highlight/detail", "id=highlight:4200105"},
	} {
		status, body := b.rget(t, c.path, c.q)
		m, _ := decode(t, body).(map[string]any)
		if status != http.StatusBadRequest || m["success"] != false || jsonText(m["message"]) == "" {
			t.Errorf("%s?%s: %d %s", c.path, c.q, status, body)
		}
	}
	// Accepted and ignored.
	for _, c := range []struct{ path, q string }{
		{"/v1/tiktok/search/keyword", "query=cats&trim=true&region=us&date_posted=this-week&sort_by=most-liked"},
		{"/v1/tiktok/search/top", "query=cats&publish_time=this-month&sort_by=relevance&region=US"},
		{"/v1/tiktok/search/hashtag", "hashtag=cats&region=US&trim=true"},
		{"/v1/tiktok/user/followers", "handle=alice&trim=true"},
		{"/v1/tiktok/get-trending-feed", "region=US&trim=false"},
	} {
		b.rgetOK(t, c.path, c.q)
	}
	u := b.srv.Usage(testKey)
	if u.Billable != 5 || u.Credits != 5 {
		t.Errorf("refused requests were billed: %+v", u)
	}
}

func TestPresetRealErrors(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{Credits: 10})
	if status, _ := b.do(t, http.MethodGet, "/v1/tiktok/profile", "handle=alice", nil); status != http.StatusUnauthorized {
		t.Errorf("no key: %d", status)
	}
	status, body := b.rget(t, "/v1/tiktok/profile", "handle=missing_x")
	var nf map[string]any
	_ = json.Unmarshal(body, &nf)
	if status != http.StatusNotFound || nf["success"] != false || nf["error"] != "not_found" ||
		nf["errorStatus"] != float64(404) || nf["credits_remaining"] != float64(10) || nf["credits_charged"] != float64(0) {
		t.Errorf("404: %d %s", status, body)
	}
	for _, c := range []struct{ path, q string }{
		{"/v1/tiktok/profile", "handle=blocked_star"},
		{"/v1/tiktok/user/followers", "handle=blocked_star"},
		{"/v1/tiktok/user/live", "handle=blocked_star"},
		{"/v1/tiktok/song", "clipId=blocked_song"},
		{"/v1/instagram/profile", "handle=blocked_star"},
		{"/v2/instagram/post/comments", "url=https://www.instagram.com/p/blocked_post/"},
		{"/v2/instagram/media/transcript", "url=https://www.instagram.com/reel/blocked_reel/"},
		{"/v1/instagram/user/highlight/detail", "id=4030001"},
	} {
		status, body := b.rget(t, c.path, c.q)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		if status != http.StatusForbidden || m["success"] != false || m["message"] == "" {
			t.Errorf("%s?%s: %d %s", c.path, c.q, status, body)
		}
	}
	if u := b.srv.Usage(testKey); u.Billable != 0 || u.Credits != 0 {
		t.Errorf("errors were billed: %+v", u)
	}
	// Credits run out: 402 with the real message.
	for range 10 {
		b.rgetOK(t, "/v1/instagram/user/embed", "handle=alice")
	}
	status, body = b.rget(t, "/v1/instagram/user/embed", "handle=alice")
	if status != http.StatusPaymentRequired || !strings.Contains(string(body), OutOfCreditsMessage) {
		t.Errorf("out of credits: %d %s", status, body)
	}
	// The token bucket works in the real preset too.
	rl := realSetup(t, Config{Rate: 0.001, Burst: 1})
	rl.rgetOK(t, "/v1/tiktok/profile", "handle=alice")
	if status, _ := rl.rget(t, "/v1/tiktok/profile", "handle=alice"); status != http.StatusTooManyRequests {
		t.Errorf("rate limit: %d", status)
	}
}

// realFollowWalk follows a follow list by min_time to its end and returns
// the handles in order.
func realFollowWalk(t *testing.T, b *testBundle, path, params, listKey string) []string {
	t.Helper()
	var out []string
	q, last := params, int64(0)
	for range 10_000 {
		m := b.rgetOK(t, path, q)
		for _, e := range list(t, m, listKey) {
			out = append(out, jsonText(field(e, "unique_id")))
		}
		more, ok := m["has_more"].(bool)
		if !ok {
			t.Fatalf("has_more is %T, want boolean", m["has_more"])
		}
		if !more {
			return out
		}
		mt := num(t, m["min_time"])
		if last != 0 && mt >= last {
			t.Fatalf("min_time %d did not decrease from %d", mt, last)
		}
		last = mt
		q = params + "&min_time=" + strconv.FormatInt(mt, 10)
	}
	t.Fatalf("walk of %s did not end", path)
	return nil
}

func TestPresetRealFollowWalk(t *testing.T) {
	t.Parallel()
	const pageSize = 7
	real := realSetup(t, Config{PageSize: pageSize, WorldTime: 3})
	contract := setup(t, Config{PageSize: pageSize, WorldTime: 3})
	for _, c := range []struct {
		handle, kind string
		want         int
	}{
		{"acct_f120_g30", "followers", 120},
		{"acct_f120_g30", "following", 30},
		{"acct_f3_g0", "followers", 3},
		{"acct_f5_g0_r2", "followers", 5 + 2*3},
		{"private_f40", "followers", 0},
	} {
		realPath, listKey := "/v1/tiktok/user/followers", "followers"
		if c.kind == "following" {
			realPath, listKey = "/v1/tiktok/user/following", "followings"
		}
		got := realFollowWalk(t, real, realPath, "handle="+c.handle, listKey)
		ids, _ := contract.walk(t, walkSpec{path: "/shortvideo/user/" + c.kind, params: "secUid=" + secUIDFor(c.handle),
			list: c.kind, idOf: "uniqueId"})
		if len(got) != c.want || !slices.Equal(got, ids) {
			t.Errorf("%s %s: real %d entries, contract %d, want %d (equal: %v)", c.handle, c.kind, len(got), len(ids), c.want,
				slices.Equal(got, ids))
		}
	}
	// By user_id, once a profile has shown it.
	uid := jsonText(field(real.rgetOK(t, "/v1/tiktok/profile", "handle=acct_f120_g30"), "user.id"))
	if got := realFollowWalk(t, real, "/v1/tiktok/user/followers", "user_id="+uid, "followers"); len(got) != 120 {
		t.Errorf("by user_id: %d followers", len(got))
	}
	if status, _ := real.rget(t, "/v1/tiktok/user/followers", "user_id=6123"); status != http.StatusNotFound {
		t.Errorf("unknown user_id: %d", status)
	}
	// A loop account answers the min_time it was asked with.
	m := real.rgetOK(t, "/v1/tiktok/user/followers", "handle=loop_f10")
	mt := num(t, m["min_time"])
	m = real.rgetOK(t, "/v1/tiktok/user/followers", "handle=loop_f10&min_time="+strconv.FormatInt(mt, 10))
	if num(t, m["min_time"]) != mt || m["has_more"] != true {
		t.Errorf("loop: %v", m)
	}
}

func TestPresetRealSameWorld(t *testing.T) {
	t.Parallel()
	real := realSetup(t, Config{PageSize: 9, WorldTime: 2})
	contract := setup(t, Config{PageSize: 9, WorldTime: 2})

	cp := contract.getOK(t, "/shortvideo/profile", "handle=acct_f120_g30")
	rp := real.rgetOK(t, "/v1/tiktok/profile", "handle=acct_f120_g30")
	for _, f := range []string{"user.id", "user.uniqueId", "user.secUid", "user.nickname", "user.verified",
		"stats.followerCount", "stats.followingCount", "stats.heartCount", "stats.videoCount"} {
		if fmt.Sprint(field(cp, f)) != fmt.Sprint(field(rp, f)) {
			t.Errorf("profile %s: contract %v, real %v", f, field(cp, f), field(rp, f))
		}
	}
	cps := contract.getOK(t, "/photosocial/profile", "handle=studio_business")
	rps := real.rgetOK(t, "/v1/instagram/profile", "handle=studio_business")
	if a, b := jsonText(field(cps, "data.user.id")), jsonText(field(rps, "data.user.id")); a != b || a == "" {
		t.Errorf("photo profile id %q vs %q", a, b)
	}

	// Keyword search: the same videos, the end signalled by a missing cursor.
	ids, _ := contract.walk(t, walkSpec{path: "/shortvideo/search/keyword", params: "query=street+food+n40",
		list: "videos", idOf: "id", numericCursor: true})
	var got []string
	for q := "query=street+food+n40"; ; {
		m := real.rgetOK(t, "/v1/tiktok/search/keyword", q)
		for _, it := range list(t, m, "search_item_list") {
			got = append(got, jsonText(field(it, "aweme_info.aweme_id")))
		}
		c, ok := m["cursor"]
		if !ok {
			break
		}
		q = "query=street+food+n40&cursor=" + jsonText(c)
	}
	if !slices.Equal(got, ids) || len(got) != 40 {
		t.Errorf("keyword search: real %d, contract %d", len(got), len(ids))
	}

	// Song videos: same videos, has_more an integer.
	ids, _ = contract.walk(t, walkSpec{path: "/shortvideo/song/videos", params: "id=summer_hit_v80", list: "videos", idOf: "id"})
	got = got[:0]
	for q := "clipId=summer_hit_v80"; ; {
		m := real.rgetOK(t, "/v1/tiktok/song/videos", q)
		for _, it := range list(t, m, "aweme_list") {
			got = append(got, jsonText(field(it, "aweme_id")))
		}
		if num(t, m["has_more"]) == 0 {
			break
		}
		q = "clipId=summer_hit_v80&cursor=" + jsonText(m["cursor"])
	}
	if !slices.Equal(got, ids) || len(got) != 80 {
		t.Errorf("song videos: real %d, contract %d", len(got), len(ids))
	}

	// Comments: same ids behind an opaque cursor; the end has no cursor.
	const post = "url=" + "https://www.instagram.com/p/launch_c90/"
	ids, _ = contract.walk(t, walkSpec{path: "/photosocial/post/comments", params: post, list: "comments", idOf: "id",
		commentsStyle: true})
	got = got[:0]
	for q := post; ; {
		m := real.rgetOK(t, "/v2/instagram/post/comments", q)
		for _, it := range list(t, m, "comments") {
			got = append(got, jsonText(field(it, "id")))
		}
		c, ok := m["cursor"].(string)
		if !ok || c == "" {
			break
		}
		q = post + "&cursor=" + url.QueryEscape(c)
	}
	if !slices.Equal(got, ids) || len(got) != 90 {
		t.Errorf("comments: real %d, contract %d", len(got), len(ids))
	}

	// Reels: same ids and codes; comment_count is the length of the reel's comments.
	cr := list(t, contract.getOK(t, "/photosocial/reels/search", "query=surf+n30&page=2"), "reels")
	rr := list(t, real.rgetOK(t, "/v2/instagram/reels/search", "query=surf+n30&page=2"), "reels")
	if len(cr) != len(rr) || len(rr) == 0 {
		t.Fatalf("reels: %d vs %d", len(cr), len(rr))
	}
	for i := range rr {
		if field(cr[i], "id") != field(rr[i], "id") || field(cr[i], "code") != field(rr[i], "shortcode") {
			t.Errorf("reel %d differs", i)
		}
	}
	code := jsonText(field(rr[0], "shortcode"))
	ids, _ = contract.walk(t, walkSpec{path: "/photosocial/post/comments", params: "url=https://www.photosocial.example/reel/" + code + "/",
		list: "comments", idOf: "id", commentsStyle: true})
	if n := num(t, field(rr[0], "comment_count")); n != int64(len(ids)) {
		t.Errorf("reel comment_count %d, its list has %d", n, len(ids))
	}

	// Top search: the contract's videos at the same ranks.
	var want []string
	for _, r := range list(t, contract.getOK(t, "/shortvideo/search/top", "keyword=mixed+cooking+n12"), "results") {
		if field(r, "type") == "video" {
			want = append(want, jsonText(field(r, "id")))
		}
	}
	got = got[:0]
	for _, it := range list(t, real.rgetOK(t, "/v1/tiktok/search/top", "query=mixed+cooking+n12"), "items") {
		got = append(got, jsonText(field(it, "id")))
	}
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("top: real %v, contract %v", got, want)
	}
}

func TestPresetRealSongIDExact(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{})
	const id = "7370375686554782506" // 2^53 < id: a float64 would round it
	if f, _ := strconv.ParseFloat(id, 64); strconv.FormatFloat(f, 'f', 0, 64) == id {
		t.Fatal("a float64 holds the id exactly; pick one it rounds")
	}
	status, body := b.rget(t, "/v1/tiktok/song", "clipId="+id)
	if status != http.StatusOK || !strings.Contains(string(body), `"id":`+id+`,`) || !strings.Contains(string(body), `"id_str":"`+id+`"`) {
		t.Fatalf("song: %d %s", status, body)
	}
	m := b.rgetOK(t, "/v1/tiktok/song/videos", "clipId="+id)
	if v, _ := lookup(m, "aweme_list.music.id"); jsonText(v) != id {
		t.Errorf("song videos music id %v", v)
	}
	// A token id is not digits: id is left out, id_str carries it.
	m = b.rgetOK(t, "/v1/tiktok/song", "clipId=summer_hit_v80")
	has(t, "token song", m, "!music_info.id", "music_info.id_str")
	if num(t, field(m, "music_info.user_count")) != 80 {
		t.Errorf("user_count %v", field(m, "music_info.user_count"))
	}
}

func TestPresetRealTrendingAuthors(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{})
	feed := list(t, b.rgetOK(t, "/v1/tiktok/get-trending-feed", "region=US"), "aweme_list")
	without := 0
	for _, v := range feed {
		a := field(v, "author").(map[string]any)
		if _, ok := a["unique_id"]; !ok {
			without++
		}
		if jsonText(a["uid"]) == "" || jsonText(a["sec_uid"]) == "" || jsonText(a["nickname"]) == "" {
			t.Errorf("author %v", a)
		}
	}
	if without == 0 || len(feed) != FeedSize {
		t.Errorf("%d of %d authors lack unique_id", without, len(feed))
	}
	// An author without a handle is reachable by its uid.
	uid := jsonText(field(feed[0], "author.uid"))
	if h := field(b.rgetOK(t, "/v1/tiktok/profile", "user_id="+uid), "user.uniqueId"); jsonText(h) == "" {
		t.Errorf("profile by user_id: %v", h)
	}
}

func TestPresetRealCredits(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{Credits: 40})
	const post = "url=https://www.instagram.com/p/launch_c90/"
	m := b.rgetOK(t, "/v2/instagram/post/comments", post+"&include_replies=true")
	if num(t, m["credits_charged"]) != 15 || num(t, m["credits_remaining"]) != 25 {
		t.Errorf("include_replies: charged %v remaining %v", m["credits_charged"], m["credits_remaining"])
	}
	has(t, "replies", m, "comments.replies", "comments.has_more_replies", "comments.replies_cursor")
	m = b.rgetOK(t, "/v2/instagram/post/comments", post)
	if num(t, m["credits_charged"]) != 1 || num(t, m["credits_remaining"]) != 24 {
		t.Errorf("plain: charged %v remaining %v", m["credits_charged"], m["credits_remaining"])
	}
	u := b.srv.Usage(testKey)
	e := u.ByEndpoint["/v2/instagram/post/comments"]
	if u.Billable != 2 || u.Credits != 16 || e.Credits != 16 || e.Billable != 2 || *u.CreditsRemaining != 24 {
		t.Errorf("usage %+v", u)
	}
	b.srv.AddCredits(testKey, -10) // 14 left: too few for replies
	status, body := b.rget(t, "/v2/instagram/post/comments", post+"&include_replies=true")
	if status != http.StatusPaymentRequired {
		t.Errorf("short balance: %d %s", status, body)
	}
	if left, _ := b.srv.Credits(testKey); left != 14 {
		t.Errorf("a refused 15-credit request spent: %d left", left)
	}
	// The contract preset counts one credit per billable answer.
	c := setup(t, Config{})
	c.getOK(t, "/shortvideo/profile", "handle=alice")
	c.get(t, "/photosocial/profile", "handle=private_x")
	if u := c.srv.Usage(testKey); u.Credits != 1 || u.Billable != 1 {
		t.Errorf("contract usage %+v", u)
	}
}

func TestPresetRealCache(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	b := realSetup(t, Config{Credits: 100, now: clock})
	for _, c := range []struct{ path, q string }{
		{"/v1/tiktok/profile", "handle=alice"},
		{"/v1/instagram/profile", "handle=alice"},
		{"/v2/instagram/media/transcript", "url=https://www.instagram.com/reel/interview_t3/"},
	} {
		first := b.rgetOK(t, c.path, c.q+"&cache_max_age=1d")
		if first["cached"] != nil {
			t.Errorf("%s: first answer cached", c.path)
		}
		advance(time.Hour)
		m := b.rgetOK(t, c.path, c.q+"&cache_max_age=1d")
		if m["cached"] != true || num(t, m["credits_charged"]) != 0 || jsonText(m["cached_at"]) != isoTime(now.Add(-time.Hour).Unix()) {
			t.Errorf("%s: second answer %v", c.path, m)
		}
		if m := b.rgetOK(t, c.path, c.q); m["cached"] != nil {
			t.Errorf("%s: cached without cache_max_age", c.path)
		}
		advance(2 * 24 * time.Hour)
		if m := b.rgetOK(t, c.path, c.q+"&cache_max_age=1d"); m["cached"] != nil {
			t.Errorf("%s: stale answer served from the cache", c.path)
		}
	}
	u := b.srv.Usage(testKey)
	if u.Requests != 12 || u.Billable != 9 || u.Credits != 9 || *u.CreditsRemaining != 91 {
		t.Errorf("usage %+v", u)
	}
	// The cache is per key.
	b.key = "test-key-2"
	if m := b.rgetOK(t, "/v1/tiktok/profile", "handle=alice&cache_max_age=30d"); m["cached"] != nil {
		t.Errorf("another key's answer was served from the cache")
	}
}

func TestPresetConfig(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{APIKeys: []string{"k"}, Preset: "nope"}); err == nil {
		t.Error("unknown preset accepted")
	}
	for _, p := range []string{"", PresetContract, PresetScrapeCreators} {
		if _, err := New(Config{APIKeys: []string{"k"}, Preset: p}); err != nil {
			t.Errorf("preset %q: %v", p, err)
		}
	}
	// Scripts name real paths in the real preset.
	b := realSetup(t, Config{Faults: Faults{Script: map[string][]int{"/v1/tiktok/profile": {503}}}})
	if status, _ := b.rget(t, "/v1/tiktok/profile", "handle=alice"); status != http.StatusServiceUnavailable {
		t.Errorf("scripted 503: %d", status)
	}
}

// isoTime is a Unix time as the real service writes dates.
func isoTime(unix int64) string {
	return time.Unix(unix, 0).UTC().Format("2006-01-02T15:04:05.000Z")
}
