package endpoints

import (
	"reflect"
	"testing"
)

func TestRealPhotoSocial(t *testing.T) {
	t.Parallel()
	c, err := PSCommentsCall("https://x.example/p/A/", "").Decode([]byte(`{"success":true,"credits_charged":15,"comments":[
		{"id":"18","text":"t","created_at":"2025-09-16T17:03:04.000Z","comment_like_count":4,"child_comment_count":null,"user":{"username":"u"}}],"cursor":"AQ"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := PSComment{ID: "18", Text: "t", Username: "u", CreatedAt: Int64{V: 1758042184, Valid: true}, LikeCount: Int64{V: 4, Valid: true}}
	if len(c.Items) != 1 || !reflect.DeepEqual(c.Items[0].V, want) || c.Cursor != "AQ" || c.HasMoreKnown || c.Credits.Charged.V != 15 {
		t.Errorf("comments = %+v", c)
	}
	r, err := PSReelsSearchCall("dogs", 1).Decode([]byte(`{"success":true,"reels":[{"id":"37","shortcode":"DOq","url":"https://www.instagram.com/reel/DOq/","caption":"c",
		"owner":{"username":"o"},"taken_at":"2025-09-16T16:56:45.000Z","like_count":3487}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Items) != 1 || r.Items[0].V != (PSReel{ID: "37", Code: "DOq", URL: "https://www.instagram.com/reel/DOq/", OwnerUsername: "o", LikeCount: Int64{V: 3487, Valid: true}, Caption: "c", TakenAt: Int64{V: 1758041805, Valid: true}}) {
		t.Errorf("reels = %+v", r.Items)
	}
	h, err := PSHighlightCall("18067016518767507").Decode([]byte(`{"success":true,"id":"highlight:18067016518767507","items":[
		{"pk":"35","id":"35_21","media_type":2,"video_versions":[{"url":"https://v"}]},{"pk":"36","media_type":1}],"user":{"username":"jane"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if h.Digits != "18067016518767507" || len(h.Items) != 2 || h.Items[0].V.ID != "35_21" || h.Items[1].V.ID != "36" {
		t.Errorf("highlight = %+v", h)
	}
}
