package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// An upstream answer the schema refuses fails that task with the reason;
// the run goes on. A NUL character in upstream text is stored as U+FFFD.
func TestUnstorablePageFailsOnlyItsTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("id") {
		case "12": // a lone surrogate: Go decodes it, jsonb refuses it
			fmt.Fprint(w, `{"success":true,"id":"highlight:12","title":"bad \ud800 text","media_count":0,"items":[],"user":{"username":"a","is_verified":false}}`)
		default:
			fmt.Fprint(w, `{"success":true,"id":"highlight:13","title":"nul\u0000here","media_count":1,
				"items":[{"media_type":2,"video_versions":[{"url":"https://v.example/1.mp4"}]}],"user":{"username":"a","is_verified":true}}`)
		}
	}))
	t.Cleanup(srv.Close)
	b.baseURL = srv.URL + "/api"
	job := b.job(t, "seeds: {photosocial: {highlights: [\"12\", \"13\"]}}\n")
	sum := b.run(t, job)
	if sum.State != "done" {
		t.Fatalf("run %s: %s", sum.State, sum.Reason)
	}
	got := b.tasks(t, sum.RunID)
	want := map[string]bool{
		"photosocial.highlight 12 failed cannot store page 0": true,
		"photosocial.highlight 13 done done 1":                true,
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("unexpected task %q (all: %q)", g, got)
		}
	}
	var title string
	if err := b.pool.QueryRow(context.Background(), `SELECT title FROM photosocial.highlights WHERE highlight_id = '13'`).Scan(&title); err != nil || title != "nul\ufffdhere" {
		t.Errorf("title = %q, %v", title, err)
	}
}
