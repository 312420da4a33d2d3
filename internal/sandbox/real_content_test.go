package sandbox

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// rwalk walks a real list endpoint: next reads the next page's parameter
// (name and value, "" when the list ended) from a page; each page's
// entries are under list, their ids at idOf.
func (b *testBundle) rwalk(t *testing.T, path, params, list, idOf string, next func(m map[string]any) (string, string)) (ids []string, pages []map[string]any) {
	t.Helper()
	q := params
	for len(pages) < 1000 {
		m := b.rgetOK(t, path, q)
		pages = append(pages, m)
		for _, it := range listOf(m, list) {
			ids = append(ids, jsonText(field(it, idOf)))
		}
		name, v := next(m)
		if v == "" {
			return ids, pages
		}
		q = params + "&" + name + "=" + url.QueryEscape(v)
	}
	t.Fatalf("%s?%s: no end after 1000 pages", path, params)
	return nil, nil
}

func listOf(m map[string]any, path string) []any {
	v, _ := lookup(m, path)
	l, _ := v.([]any)
	return l
}

func distinct(ids []string) bool {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] || id == "" {
			return false
		}
		seen[id] = true
	}
	return true
}

// The real service's own endpoints answer in its samples' shapes.
func TestRealContentShapes(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{PageSize: 10, Credits: 1000})
	video := "url=" + url.QueryEscape("https://www.tiktok.com/@creator_v12/video/7000000000000000001")
	post := "url=" + url.QueryEscape("https://www.instagram.com/studio_p9/p/DAbc/")
	for _, c := range []struct {
		path, q string
		paths   []string
	}{
		{"/v3/tiktok/profile/videos", "handle=creator_v12", []string{"aweme_list.aweme_id", "aweme_list.desc", "aweme_list.create_time",
			"aweme_list.statistics.play_count", "aweme_list.statistics.comment_count", "aweme_list.author.unique_id",
			"aweme_list.share_url", "aweme_list.cha_list.cha_name", "has_more", "max_cursor", "min_cursor", "status_code", "!cursor", "!success"}},
		{"/v2/tiktok/video", video + "&get_transcript=true", []string{"aweme_detail.aweme_id", "aweme_detail.statistics.play_count",
			"aweme_detail.author.unique_id", "aweme_detail.share_url", "status_code", "transcript", "!success"}},
		{"/v1/tiktok/video/comments", video, []string{"comments.cid", "comments.aweme_id", "comments.text", "comments.create_time",
			"comments.digg_count", "comments.reply_comment_total", "comments.reply_id", "comments.user.unique_id", "comments.user.sec_uid",
			"cursor", "has_more", "total", "!success"}},
		{"/v1/tiktok/video/transcript", video, []string{"id", "url", "transcript", "!success"}},
		{"/v2/instagram/user/posts", "handle=studio_p9", []string{"items.pk", "items.id", "items.code", "items.taken_at", "items.media_type",
			"items.caption.text", "items.owner.username", "items.comment_count", "items.like_count", "items.url", "more_available",
			"user.username", "status", "!success"}},
		{"/v1/instagram/user/reels", "handle=studio_p9", []string{"items.media.pk", "items.media.code", "items.media.play_count",
			"items.media.like_count", "items.media.owner.username", "items.media.url", "paging_info.more_available", "status"}},
		{"/v1/instagram/post", post, []string{"data.xdt_shortcode_media.id", "data.xdt_shortcode_media.shortcode",
			"data.xdt_shortcode_media.owner.username", "data.xdt_shortcode_media.edge_media_to_caption.edges.node.text",
			"data.xdt_shortcode_media.edge_media_preview_like.count", "data.xdt_shortcode_media.edge_media_to_parent_comment.count",
			"data.xdt_shortcode_media.taken_at_timestamp", "status", "!success"}},
		{"/v1/instagram/user/highlights", "handle=studio_p9", []string{"success", "highlights"}},
	} {
		has(t, c.path+"?"+c.q, b.rgetOK(t, c.path, c.q), c.paths...)
	}
	first, _ := lookup(b.rgetOK(t, "/v1/tiktok/video/comments", video), "comments.cid")
	cid := jsonText(first)
	has(t, "replies", b.rgetOK(t, "/v1/tiktok/video/comment/replies", video+"&comment_id="+cid), "success", "comments", "cursor", "has_more", "total")
	has(t, "post replies", b.rgetOK(t, "/v1/instagram/post/comment/replies", post+"&comment_id=18038110327814211"), "success", "comments", "has_more")
	// Only the real preset has them.
	contract := setup(t, Config{})
	if status, _ := contract.get(t, "/shortvideo/profile/videos", "handle=a"); status != http.StatusNotFound {
		t.Errorf("the contract preset answers a real-only endpoint: %d", status)
	}
}

// A creator's lists are newest first and grow at their head; their lengths
// are the profile's counters; the reels list is the posts that are reels.
func TestRealContentLists(t *testing.T) {
	t.Parallel()
	const pageSize = 7
	day0, day2 := realSetup(t, Config{PageSize: pageSize}), realSetup(t, Config{PageSize: pageSize, WorldTime: 2})
	byMaxCursor := func(m map[string]any) (string, string) {
		if jsonText(m["has_more"]) != "1" {
			return "", ""
		}
		return "max_cursor", jsonText(m["max_cursor"])
	}
	videos := func(b *testBundle, h string) []string {
		ids, _ := b.rwalk(t, "/v3/tiktok/profile/videos", "handle="+h, "aweme_list", "aweme_id", byMaxCursor)
		return ids
	}
	const creator = "creator_v20_r3"
	v0, v2 := videos(day0, creator), videos(day2, creator)
	if len(v0) != 20 || len(v2) != 26 || !distinct(v2) || strconv.Itoa(len(v2)) != jsonText(field(day2.rgetOK(t, "/v1/tiktok/profile", "handle="+creator), "stats.videoCount")) {
		t.Fatalf("videos: %d at day 0, %d at day 2 (distinct %v)", len(v0), len(v2), distinct(v2))
	}
	for i, id := range v0 { // the day-0 list, whole and in order, after the 6 new ones
		if v2[6+i] != id {
			t.Fatalf("day 2 position %d is %s, want day 0's %s", 6+i, v2[6+i], id)
		}
	}
	// Without a token the list is the profile's hash-derived videoCount.
	if n, want := len(videos(day0, "plain_user")), jsonText(field(day0.rgetOK(t, "/v1/tiktok/profile", "handle=plain_user"), "stats.videoCount")); strconv.Itoa(n) != want {
		t.Errorf("plain_user: %d videos, videoCount %s", n, want)
	}
	byNext := func(m map[string]any) (string, string) { return "next_max_id", jsonText(m["next_max_id"]) }
	byMaxID := func(m map[string]any) (string, string) {
		v, _ := lookup(m, "paging_info.max_id")
		return "max_id", jsonText(v)
	}
	posts, pages := day2.rwalk(t, "/v2/instagram/user/posts", "handle=studio_p10_r2", "items", "code", byNext)
	reels, _ := day2.rwalk(t, "/v1/instagram/user/reels", "handle=studio_p10_r2", "items", "media.code", byMaxID)
	var want []string
	for _, p := range pages {
		for _, it := range listOf(p, "items") {
			if jsonText(field(it, "media_type")) == "2" {
				want = append(want, jsonText(field(it, "code")))
			}
		}
	}
	if len(posts) != 14 || !distinct(posts) || len(reels) == 0 || strconv.Itoa(len(reels)) != strconv.Itoa(len(want)) {
		t.Fatalf("posts %d, reels %v, want the posts that are reels %v", len(posts), reels, want)
	}
	for i := range reels {
		if reels[i] != want[i] {
			t.Errorf("reel %d: %s, want %s", i, reels[i], want[i])
		}
	}
	if count := jsonText(field(day2.rgetOK(t, "/v1/instagram/profile", "handle=studio_p10_r2"), "data.user.edge_owner_to_timeline_media.count")); count != "14" {
		t.Errorf("posts count %s, want 14", count)
	}
}

// What a comment shows of its replies, and what its replies endpoint lists,
// are the same replies; the endpoint lists them all, paged.
func TestRealContentReplies(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{PageSize: 4})
	const post = "https://www.instagram.com/p/launch_c40/"
	page := b.rgetOK(t, "/v2/instagram/post/comments", "include_replies=true&url="+url.QueryEscape(post))
	checked := 0
	for _, c := range listOf(page, "comments") {
		n, _ := strconv.Atoi(jsonText(field(c, "child_comment_count")))
		if n <= repliesShown {
			continue
		}
		checked++
		byCursor := func(m map[string]any) (string, string) { return "cursor", jsonText(m["cursor"]) }
		ids, pages := b.rwalk(t, "/v1/instagram/post/comment/replies", "url="+url.QueryEscape(post)+"&comment_id="+jsonText(field(c, "id")),
			"comments", "id", byCursor)
		if len(ids) != n || !distinct(ids) || len(pages) != (n+3)/4 {
			t.Errorf("comment %s: %d replies in %d pages, want %d", jsonText(field(c, "id")), len(ids), len(pages), n)
		}
		for j, r := range listOf(c.(map[string]any), "replies") {
			first := listOf(pages[0], "comments")[j]
			if jsonText(field(r, "id")) != jsonText(field(first, "id")) || jsonText(field(r, "created_at")) != jsonText(field(first, "created_at")) {
				t.Errorf("shown reply %d differs from the endpoint's", j)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no comment with more replies than shown")
	}
	video := "url=" + url.QueryEscape("https://www.tiktok.com/@creator_c6/video/7000000000000000001")
	comments := listOf(b.rgetOK(t, "/v1/tiktok/video/comments", video), "comments")
	for _, c := range comments {
		n, _ := strconv.Atoi(jsonText(field(c, "reply_comment_total")))
		byCursor := func(m map[string]any) (string, string) {
			if jsonText(m["has_more"]) != "1" {
				return "", ""
			}
			return "cursor", jsonText(m["cursor"])
		}
		ids, _ := b.rwalk(t, "/v1/tiktok/video/comment/replies", video+"&comment_id="+jsonText(field(c, "cid")), "comments", "cid", byCursor)
		if len(ids) != n {
			t.Errorf("video comment: %d replies, says %d", len(ids), n)
		}
	}
}

// The real service's own endpoints refuse what it refuses: the contract's
// parameter names, media URLs on another host, malformed ids; paid options
// cost what the catalogue says.
func TestRealContentRefusals(t *testing.T) {
	t.Parallel()
	b := realSetup(t, Config{Credits: 100})
	video := "url=" + url.QueryEscape("https://www.tiktok.com/@creator/video/7000000000000000001")
	for _, c := range []struct{ path, q string }{
		{"/v3/tiktok/profile/videos", "handle=creator&cursor=10"},
		{"/v3/tiktok/profile/videos", "handle=creator&max_cursor=abc"},
		{"/v3/tiktok/profile/videos", "handle=creator&sort_by=oldest"},
		{"/v2/tiktok/video", "url=" + url.QueryEscape("https://www.shortvideo.example/@creator/video/7")},
		{"/v2/tiktok/video", "url=" + url.QueryEscape("https://www.tiktok.com/creator/7")},
		{"/v1/tiktok/video/comments", "url=" + url.QueryEscape("https://www.instagram.com/@creator/video/7")},
		{"/v1/tiktok/video/comment/replies", video},
		{"/v1/tiktok/video/comment/replies", video + "&comment_id=x1"},
		{"/v1/tiktok/video/transcript", video + "&language=english"},
		{"/v2/instagram/user/posts", "handle=studio&cursor=abc"},
		{"/v1/instagram/user/reels", "handle=studio&cursor=abc"},
		{"/v1/instagram/user/reels", "handle=studio&max_id=12"},
		{"/v1/instagram/post", "url=" + url.QueryEscape("https://www.photosocial.example/p/DAbc/")},
		{"/v1/instagram/post/comment/replies", "url=" + url.QueryEscape("https://www.instagram.com/p/DAbc/")},
		{"/v1/instagram/user/highlights", "user_id=123"},
	} {
		if status, body := b.rget(t, c.path, c.q); status != http.StatusBadRequest {
			t.Errorf("%s?%s: %d %s", c.path, c.q, status, body)
		}
	}
	for _, c := range []struct {
		path, q string
		status  int
	}{
		{"/v3/tiktok/profile/videos", "handle=missing_one", http.StatusNotFound},
		{"/v3/tiktok/profile/videos", "handle=blocked_one", http.StatusForbidden},
		{"/v2/tiktok/video", "url=" + url.QueryEscape("https://www.tiktok.com/@missing_x/video/7"), http.StatusNotFound},
		{"/v1/instagram/post", "url=" + url.QueryEscape("https://www.instagram.com/p/blocked_post/"), http.StatusForbidden},
		{"/v1/instagram/user/highlights", "handle=missing_x", http.StatusNotFound},
	} {
		if status, body := b.rget(t, c.path, c.q); status != c.status {
			t.Errorf("%s?%s: %d %s, want %d", c.path, c.q, status, body, c.status)
		}
	}
	if u := b.srv.Usage(testKey); u.Billable != 0 {
		t.Errorf("refusals billed: %+v", u)
	}
	b.rgetOK(t, "/v2/tiktok/video", video+"&download_media=true")
	b.rgetOK(t, "/v1/tiktok/video/transcript", video+"&use_ai_as_fallback=true")
	b.rgetOK(t, "/v1/instagram/post", "url="+url.QueryEscape("https://www.instagram.com/p/DAbc/"))
	if u := b.srv.Usage(testKey); u.Billable != 3 || u.Credits != 2*downloadCredits+1 {
		t.Errorf("paid options: %d billable, %d credits; want 3, %d", u.Billable, u.Credits, 2*downloadCredits+1)
	}
}

// In the heavytail world a creator's lists grow with its counters' daily
// draws: their lengths are the profiles' counts and the ground truth's.
func TestRealContentChurn(t *testing.T) {
	t.Parallel()
	const day = 200
	b := realSetup(t, Config{PageSize: 50, Churn: ChurnHeavyTail, WorldTime: day})
	grew := 0
	for _, h := range []string{"acct0001", "acct0002", "acct0003", "acct0004", "acct0005", "acct0006", "acct0007", "acct0008"} {
		truth, err := ChurnTruth(h, day)
		if err != nil {
			t.Fatal(err)
		}
		ids, _ := b.rwalk(t, "/v3/tiktok/profile/videos", "handle="+h, "aweme_list", "aweme_id", func(m map[string]any) (string, string) {
			if jsonText(m["has_more"]) != "1" {
				return "", ""
			}
			return "max_cursor", jsonText(m["max_cursor"])
		})
		posts, _ := b.rwalk(t, "/v2/instagram/user/posts", "handle="+h, "items", "code", func(m map[string]any) (string, string) {
			return "next_max_id", jsonText(m["next_max_id"])
		})
		count := jsonText(field(b.rgetOK(t, "/v1/tiktok/profile", "handle="+h), "stats.videoCount"))
		if int64(len(ids)) != truth.VideoCount || count != strconv.FormatInt(truth.VideoCount, 10) || int64(len(posts)) != truth.PostCount || !distinct(ids) {
			t.Errorf("%s: %d videos (count %s), %d posts; the truth: %d, %d", h, len(ids), count, len(posts), truth.VideoCount, truth.PostCount)
		}
		if base := int64(fnvParts("account", h, "videoCount") % 500); truth.VideoCount > base {
			grew++
		}
	}
	if grew == 0 {
		t.Error("no creator posted in 200 days: the test shows no growth")
	}
}

// What the real service's docs say (docs/sandbox.md): a comment shows 3
// replies with include_replies, and a paid option costs 10 credits.
const (
	repliesShown    = 3
	downloadCredits = 10
)
