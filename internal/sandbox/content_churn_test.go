package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"testing"
)

// contentCreator is the first creator "<prefix><i>_v8" whose videos list
// gains a video between days 1 and 3 of the content world.
func contentCreator(t *testing.T, prefix string) string {
	t.Helper()
	for i := range 500 {
		h := fmt.Sprintf("%s%d_v8", prefix, i)
		d, err := CreatorContentChanges(ChurnContent, h, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.NewVideos) > 0 && d.NewComments > 0 {
			return h
		}
	}
	t.Fatalf("no %s... creator posts in days 1-3", prefix)
	return ""
}

// Every counter the content world shows follows its lists: a comment's
// reply count is its replies list's length, a video's comment count (and
// its comments page's total) and a post's comment_count its comments and
// all their replies, as the platforms display them. The lists served over
// HTTP are the truth's (ContentAt): a creator's videos with their comment
// counts, each video's comments with their reply counts, each comment's
// replies; a post's comments with their child_comment_count, and the
// replies include_replies shows are the first its replies endpoint lists.
func TestContentWorldCountersFollowTheLists(t *testing.T) {
	t.Parallel()
	const day, pageSize = 3, 7
	h := contentCreator(t, "cw")
	b := realSetup(t, Config{Churn: ChurnContent, WorldTime: day, PageSize: pageSize})
	truth, err := ContentAt(ChurnContent, day)
	if err != nil {
		t.Fatal(err)
	}
	tv, err := truth.CreatorVideos(h)
	if err != nil {
		t.Fatal(err)
	}
	byMaxCursor := func(m map[string]any) (string, string) {
		if jsonText(m["has_more"]) != "1" {
			return "", ""
		}
		return "max_cursor", jsonText(m["max_cursor"])
	}
	byCursor := func(m map[string]any) (string, string) {
		if more := jsonText(m["has_more"]); more != "1" && more != "true" {
			return "", ""
		}
		return "cursor", jsonText(m["cursor"])
	}
	ids, pages := b.rwalk(t, "/v3/tiktok/profile/videos", "handle="+h, "aweme_list", "aweme_id", byMaxCursor)
	if len(ids) != len(tv) || len(ids) <= 8 {
		t.Fatalf("%s: %d videos served, truth %d (8 at day 0 and some new)", h, len(ids), len(tv))
	}
	i, replies, fresh := 0, 0, 0
	for _, p := range pages {
		for _, v := range listOf(p, "aweme_list") {
			want := tv[i]
			i++
			count := jsonText(field(v, "statistics.comment_count"))
			posted, _ := strconv.ParseInt(jsonText(field(v, "create_time")), 10, 64)
			if jsonText(field(v, "aweme_id")) != want.ID || count != strconv.FormatInt(want.Comments, 10) || posted != want.Posted {
				t.Fatalf("video %d: %s, %s comments, posted %d; truth %+v", i, jsonText(field(v, "aweme_id")), count, posted, want)
			}
			if posted >= WorldEpoch {
				fresh++
				if posted >= WorldEpoch+day*86400 {
					t.Fatalf("video %s posted %d, after the world's now", want.ID, posted)
				}
			}
			video := "url=" + url.QueryEscape("https://www.tiktok.com/@"+h+"/video/"+want.ID)
			cids, cpages := b.rwalk(t, "/v1/tiktok/video/comments", video, "comments", "cid", byCursor)
			tc := truth.VideoComments(want.ID, h)
			if len(tc) != len(cids) || !distinct(append([]string{"x"}, cids...)) {
				t.Fatalf("video %s: %d comments walked, truth %d", want.ID, len(cids), len(tc))
			}
			if total := jsonText(cpages[0]["total"]); total != count {
				t.Fatalf("video %s: total %s, comment_count %s", want.ID, total, count)
			}
			k, shown := 0, len(cids)
			for _, cp := range cpages {
				for _, c := range listOf(cp, "comments") {
					cid, n := jsonText(field(c, "cid")), jsonText(field(c, "reply_comment_total"))
					if cid != tc[k].ID || n != strconv.FormatInt(tc[k].Replies, 10) {
						t.Fatalf("comment %d of %s: %s with %s replies, truth %+v", k, want.ID, cid, n, tc[k])
					}
					k++
					rids, _ := b.rwalk(t, "/v1/tiktok/video/comment/replies", video+"&comment_id="+cid, "comments", "cid", byCursor)
					if strconv.Itoa(len(rids)) != n || !slices.Equal(rids, idsOf(truth.CommentReplies(want.ID, h, cid))) {
						t.Fatalf("comment %s: replies %v, reply_comment_total %s", cid, rids, n)
					}
					replies += len(rids)
					shown += len(rids)
				}
			}
			if strconv.Itoa(shown) != count {
				t.Fatalf("video %s: comment_count %s, %d comments and replies walked", want.ID, count, shown)
			}
		}
	}
	if fresh == 0 || replies == 0 {
		t.Fatalf("%s: %d videos dated after day 0, %d replies: the walk proved little", h, fresh, replies)
	}
	// A post's comments: comment_count on the posts page, the list, each
	// comment's child_comment_count and the replies it shows.
	post := func(code string) string { return "url=" + url.QueryEscape("https://www.instagram.com/p/"+code+"/") }
	byOpaque := func(m map[string]any) (string, string) { return "cursor", jsonText(m["cursor"]) }
	items := listOf(b.rgetOK(t, "/v2/instagram/user/posts", "handle=ps_"+h), "items")
	checked := 0
	for _, it := range items[:3] {
		code, count := jsonText(field(it, "code")), jsonText(field(it, "comment_count"))
		ids, pages := b.rwalk(t, "/v2/instagram/post/comments", post(code)+"&include_replies=true", "comments", "id", byOpaque)
		if !slices.Equal(ids, idsOf(truth.PostComments(code))) {
			t.Fatalf("post %s: comments walked %v, truth's differ", code, ids)
		}
		total := len(ids)
		for _, p := range pages {
			for _, c := range listOf(p, "comments") {
				cid, n := jsonText(field(c, "id")), jsonText(field(c, "child_comment_count"))
				all := idsOf(truth.PostCommentReplies(code, cid))
				if n == "" && len(all) != 0 || n != "" && n != strconv.Itoa(len(all)) {
					t.Fatalf("post %s comment %s: child_comment_count %s, %d replies", code, cid, n, len(all))
				}
				var shown []string
				rs, _ := field(c, "replies").([]any)
				for _, r := range rs {
					shown = append(shown, jsonText(field(r, "id")))
				}
				if !slices.Equal(shown, all[:min(3, len(all))]) {
					t.Fatalf("post %s comment %s shows replies %v, its list starts %v", code, cid, shown, all[:min(3, len(all))])
				}
				checked++
				total += len(all)
			}
		}
		if strconv.Itoa(total) != count {
			t.Fatalf("post %s: comment_count %s, %d comments and replies", code, count, total)
		}
	}
	if checked == 0 {
		t.Fatal("no post comment checked")
	}
}

func contentAt(t *testing.T, day int64) Content {
	t.Helper()
	c, err := ContentAt(ChurnContent, day)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// shownCount is the comment count video id by author should show in c:
// its comments and all their replies.
func shownCount(c Content, id, author string) int64 {
	cs := c.VideoComments(id, author)
	n := int64(len(cs))
	for _, cm := range cs {
		n += cm.Replies
	}
	return n
}

func idsOf(cs []ContentComment) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// What changes from day to day, as CreatorContentChanges says it: new
// entries at the head of their lists, dated after the day before and
// before the world's now; deleted ones gone; counters moving by the
// difference; new videos with no comments before they were posted; and
// the same answers twice.
func TestContentWorldChanges(t *testing.T) {
	t.Parallel()
	var comments, replies, deleted, videos, byReplies int
	for i := range 12 {
		h := fmt.Sprintf("cc%d_v10", i)
		for day := int64(1); day <= 4; day++ {
			d, err := CreatorContentChanges(ChurnContent, h, day-1, day)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := CreatorContentChanges(ChurnContent, h, day-1, day)
			if fmt.Sprint(d) != fmt.Sprint(again) {
				t.Fatalf("%s day %d: two calls differ", h, day)
			}
			comments, replies, deleted = comments+d.NewComments, replies+d.NewReplies, deleted+d.Deleted
			from, to := contentAt(t, day-1), contentAt(t, day)
			for _, l := range d.Lists {
				switch {
				case l.Kind == ListCommentReplies && l.CountTo != l.CountFrom+int64(len(l.New))-int64(len(l.Gone)):
					t.Fatalf("%s day %d %+v: the counter moved %d -> %d", h, day, l, l.CountFrom, l.CountTo)
				case l.Kind == ListVideoComments && (l.CountTo != shownCount(to, l.Video, h) ||
					slices.Contains(d.NewVideos, l.Video) && l.CountFrom != 0 ||
					!slices.Contains(d.NewVideos, l.Video) && l.CountFrom != shownCount(from, l.Video, h)):
					t.Fatalf("%s day %d %+v: the counter moved %d -> %d: not its comments and replies", h, day, l, l.CountFrom, l.CountTo)
				case l.Kind == ListVideoComments && len(l.New)+len(l.Gone) == 0:
					byReplies++ // only replies moved it
				}
				list := to.VideoComments(l.Video, h)
				if l.Kind == ListCommentReplies {
					list = to.CommentReplies(l.Video, h, l.Comment)
				}
				if !slices.Equal(idsOf(list[:len(l.New)]), l.New) {
					t.Fatalf("%s day %d %+v: the new entries are not the list's head", h, day, l)
				}
				for _, c := range list[:len(l.New)] {
					if c.Created < WorldEpoch+(day-1)*86400 || c.Created >= WorldEpoch+day*86400 {
						t.Fatalf("%s day %d: new %s dated %d, outside the day", h, day, c.ID, c.Created)
					}
				}
				for _, g := range l.Gone {
					if slices.Contains(idsOf(list), g) {
						t.Fatalf("%s day %d: %s deleted and still listed", h, day, g)
					}
				}
			}
			// A new video was posted that day, heads the list, and every
			// comment under it came after it.
			vs, _ := to.CreatorVideos(h)
			for i, v := range d.NewVideos {
				if vs[i].ID != v || vs[i].Posted < WorldEpoch+(day-1)*86400 || vs[i].Posted >= WorldEpoch+day*86400 {
					t.Fatalf("%s day %d: new video %s: position %d is %+v", h, day, v, i, vs[i])
				}
				for _, c := range to.VideoComments(v, h) {
					if c.Created <= vs[i].Posted {
						t.Fatalf("%s day %d: comment %s dated %d, the video posted %d", h, day, c.ID, c.Created, vs[i].Posted)
					}
				}
				videos++
			}
		}
	}
	if comments == 0 || replies == 0 || deleted == 0 || videos == 0 || byReplies == 0 {
		t.Fatalf("12 creators over 4 days: %d new videos, %d new comments, %d new replies, %d deleted, %d videos' counters moved by replies alone: the world does not change",
			videos, comments, replies, deleted, byReplies)
	}
	// The other worlds' comments never change.
	if d, _ := CreatorContentChanges(ChurnHeavyTail, "cc0_v10", 0, 4); len(d.Lists) != 0 || d.NewComments+d.NewReplies+d.Deleted != 0 {
		t.Fatalf("heavytail: %+v", d)
	}
}

// At day 0 the content world serves the heavytail world's bytes but for
// the counters that count replies there (a video's comment_count and its
// comments page's total, a post's comment_count: TestContentWorldCountersFollowTheLists),
// and the linear world's answers do not depend on it.
func TestContentWorldDayZero(t *testing.T) {
	t.Parallel()
	h := "cz_v6_c5"
	video := "url=" + url.QueryEscape("https://www.tiktok.com/@"+h+"/video/")
	vs, _ := ContentAt(ChurnContent, 0)
	list, _ := vs.CreatorVideos(h)
	video += list[0].ID
	cid := vs.VideoComments(list[0].ID, h)[0].ID
	post := "url=" + url.QueryEscape("https://www.instagram.com/p/DAbc/")
	for _, q := range [][2]string{{"/v3/tiktok/profile/videos", "handle=" + h}, {"/v1/tiktok/profile", "handle=" + h},
		{"/v1/tiktok/video/comments", video}, {"/v1/tiktok/video/comment/replies", video + "&comment_id=" + cid}, {"/v2/tiktok/video", video},
		{"/v2/instagram/user/posts", "handle=" + h}, {"/v2/instagram/post/comments", post + "&include_replies=true"},
		{"/v1/instagram/post/comment/replies", post + "&comment_id=" + vs.PostComments("DAbc")[0].ID}} {
		_, a := realSetup(t, Config{Churn: ChurnContent}).rget(t, q[0], q[1])
		_, b := realSetup(t, Config{Churn: ChurnHeavyTail}).rget(t, q[0], q[1])
		if a, b = withoutCounters(t, a), withoutCounters(t, b); !bytes.Equal(a, b) {
			t.Errorf("%s?%s at day 0: content and heavytail differ:\n%s\n%s", q[0], q[1], a, b)
		}
	}
}

// withoutCounters is the JSON answer body without its comment_count and
// total fields (the counters that count replies in the content world).
func withoutCounters(t *testing.T, body []byte) []byte {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "comment_count")
			delete(v, "total")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
