package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/socialcrawl/crawler/kinds"
)

// A list entry the schema would refuse (a time past timestamptz's range) is
// dropped and counted, the rest of the page stored; the run goes on. Text
// PostgreSQL cannot hold (a NUL, a lone surrogate) is stored as U+FFFD
// rather than losing the page.
func TestUnstorablePageFailsOnlyItsTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("id") {
		case "":
			// A create time far past timestamptz's range (year 294276).
			fmt.Fprint(w, `{"videos":[{"id":"v1","desc":"x","createTime":99999999999999,"stats":{"playCount":1},"author":{"uniqueId":"a"}},
				{"id":"v2","desc":"y","createTime":1700000000,"stats":{"playCount":2},"author":{"uniqueId":"a"}}]}`)
		case "12": // a lone surrogate: Go decodes it, jsonb refuses it
			fmt.Fprint(w, `{"success":true,"id":"highlight:12","title":"bad \ud800 text","media_count":0,"items":[],"user":{"username":"a","is_verified":false}}`)
		default:
			fmt.Fprint(w, `{"success":true,"id":"highlight:13","title":"nul\u0000here","media_count":1,
				"items":[{"media_type":2,"video_versions":[{"url":"https://v.example/1.mp4"}]}],"user":{"username":"a","is_verified":true}}`)
		}
	}))
	t.Cleanup(srv.Close)
	b.baseURL = srv.URL + "/api"
	job := b.job(t, "seeds: {shortvideo: {trending_feed: true}, photosocial: {highlights: [\"12\", \"13\"]}}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	got := b.tasks(t, sum.RunID)
	want := map[string]bool{
		"shortvideo.trending_feed trending done done 1": true,
		"photosocial.highlight 12 done done 1":          true,
		"photosocial.highlight 13 done done 1":          true,
	}
	if len(got) != len(want) {
		t.Errorf("tasks %q, want %d", got, len(want))
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("unexpected task %q (all: %q)", g, got)
		}
	}
	if got := b.task(t, sum.RunID, kinds.KindSVTrending, "trending"); got.Dropped != 1 || got.Items != 2 ||
		got.DropReason != "videos[0]: createTime 99999999999999 is out of the timestamp range" {
		t.Errorf("trending task = %+v", got)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.feed_entries WHERE video_id = 'v2' AND rank = 2`); n != 1 {
		t.Errorf("feed entry v2 at rank 2: %d rows, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM shortvideo.videos`); n != 1 {
		t.Errorf("videos = %d, want 1", n)
	}
	for id, want := range map[string]string{"12": "bad \ufffd text", "13": "nul\ufffdhere"} {
		var title string
		if err := b.pool.QueryRow(context.Background(), `SELECT title FROM photosocial.highlights WHERE highlight_id = $1`, id).Scan(&title); err != nil || title != want {
			t.Errorf("highlight %s title = %q, %v; want %q", id, title, err, want)
		}
	}
}
