package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// contentScenario is a job with every content edge on, under the real
// preset: a creator's videos (2 pages of 3), their comments (2 pages) and
// replies, transcripts, a photo-sharing profile's posts, reels and
// highlights.
func contentScenario() *Scenario {
	return &Scenario{World: World{Preset: sandbox.PresetScrapeCreators, Churn: sandbox.ChurnHeavyTail, PageSize: 3},
		Job: Job{MaxPages: 1, MaxDepth: 1, Videos: &List{MaxPages: 2}, VideoComments: &List{MaxPages: 2},
			CommentReplies: &List{MaxPages: 1}, VideoTranscripts: &Entity{}, Posts: &List{MaxPages: 2}, Reels: &List{MaxPages: 1}, Highlights: true,
			Seeds: []Seed{{Key: "shortvideo.profiles", Value: "s0_f2_g0"}, {Key: "photosocial.profiles", Value: "ps0_f10"}}}}
}

// TestContentTruthIsTheSandbox walks every content list the truth says
// the seeds reach, over HTTP from the real preset's sandbox, as a client
// follows cursors: each answer is read back (requestOf) as an item of the
// reach, each walk takes the pages the truth counts (reached.pages), and
// one more page past a list's limit is read as past it (what unreachable
// flags). So the night's estimate and the checkers follow the sandbox.
func TestContentTruthIsTheSandbox(t *testing.T) {
	t.Parallel()
	s := contentScenario()
	const day = 2
	tr := newTruth(s)
	reach, err := tr.reach(day)
	if err != nil {
		t.Fatal(err)
	}
	up, err := startUpstream(sandboxConfig(s, day, sandbox.NewCache()))
	if err != nil {
		t.Fatal(err)
	}
	defer up.close()
	get := func(path string, q url.Values) map[string]any {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, up.url+path+"?"+q.Encode(), nil)
		req.Header.Set("x-api-key", apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %v", path, q.Encode(), resp.StatusCode, err)
		}
		return body
	}
	// next is the cursor of the page after body ("" at the end).
	next := func(kind string, body map[string]any) (string, string) {
		str := func(v any) string {
			switch x := v.(type) {
			case float64:
				return fmt.Sprintf("%.0f", x)
			case string:
				return x
			}
			return ""
		}
		switch kind {
		case "shortvideo.profile_videos":
			return "max_cursor", map[bool]string{true: str(body["max_cursor"])}[body["has_more"] == 1.0]
		case "shortvideo.video_comments", "shortvideo.comment_replies":
			return "cursor", map[bool]string{true: str(body["cursor"])}[body["has_more"] == 1.0 || body["has_more"] == true]
		case "photosocial.user_posts":
			return "next_max_id", str(body["next_max_id"])
		case "photosocial.user_reels":
			pi, _ := body["paging_info"].(map[string]any)
			return "max_id", str(pi["max_id"])
		}
		return "", ""
	}
	kinds := map[string]int{}
	walked := map[item]int64{} // pages walked within the limit
	for _, it := range sortedItems(reach) {
		e, _ := endpointOf(it.kind)
		if !e.content {
			continue
		}
		kinds[it.kind]++
		q := url.Values{}
		switch it.kind {
		case "shortvideo.video_comments", "shortvideo.transcript":
			author, id, _ := strings.Cut(it.key, "/")
			q.Set("url", "https://www.tiktok.com/@"+author+"/video/"+id)
		case "shortvideo.comment_replies":
			// The replies' video: the comments item that listed it.
			for v, rr := range reach {
				if v.kind == "shortvideo.video_comments" && rr.depth == reach[it].depth {
					author, id, _ := strings.Cut(v.key, "/")
					if commentOf(tr.world(day), author, id, it.key, rr.maxPage, s.World.PageSize) {
						q.Set("url", "https://www.tiktok.com/@"+author+"/video/"+id)
					}
				}
			}
			q.Set("comment_id", it.key)
		default:
			q.Set("handle", it.key)
		}
		if it.kind == "shortvideo.profile_videos" {
			q.Set("sort_by", "latest")
		}
		rr := reach[it]
		for page := int64(0); ; page++ {
			body := get(e.real, q)
			if rr.maxPage > 0 && page >= int64(rr.maxPage) {
				break // the page past the limit, read below
			}
			walked[it]++
			name, cur := next(it.kind, body)
			if cur == "" {
				break
			}
			q.Set(name, cur)
		}
	}
	for _, k := range []string{"shortvideo.profile_videos", "shortvideo.video_comments", "shortvideo.comment_replies",
		"shortvideo.transcript", "photosocial.user_posts", "photosocial.user_reels", "photosocial.highlights"} {
		if kinds[k] == 0 {
			t.Errorf("the reach has no %s: the test walks nothing of it", k)
		}
	}
	past := map[item]bool{}
	for _, a := range up.sb.Arrivals(apiKey) {
		q, ok := requestOf(s.World.Preset, s.World.PageSize, day, a)
		if !ok {
			t.Errorf("%s?%s: not read as a content request", a.Endpoint, a.Query)
			continue
		}
		rr, ok := reach[q.it]
		switch {
		case !ok:
			t.Errorf("%s?%s: read as %s, not reached", a.Endpoint, a.Query, q.it)
		case rr.maxPage > 0 && q.page >= int64(rr.maxPage):
			if q.page != int64(rr.maxPage) {
				t.Errorf("%s?%s: read as page %d past the limit %d, want %d", a.Endpoint, a.Query, q.page+1, rr.maxPage, rr.maxPage+1)
			}
			past[q.it] = true
		}
	}
	for it, n := range walked {
		if want := reach[it].pages(s.World.PageSize); n != want {
			t.Errorf("%s: %d pages walked, the truth counts %d", it, n, want)
		}
		if rr := reach[it]; rr.maxPage > 0 && rr.size > int64(rr.maxPage*s.World.PageSize) && !past[it] {
			t.Errorf("%s: goes on past its limit, its next page not read as past it", it)
		}
	}
	_, requests, err := newTruth(s).estimateNight(1 << 40)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("walked %d content lists and entities %v; the night's estimate: %d requests", len(walked), kinds, requests)
}

// commentOf reports whether comment cid is on the first pages of the
// comments of video id by author in the world w.
func commentOf(w *world.World, author, id, cid string, pages, pageSize int) bool {
	for off := int64(0); off < int64(pages*pageSize); off += int64(pageSize) {
		cs, _, _ := w.VideoComments(id, author, off)
		for _, c := range cs {
			if c.ID == cid {
				return true
			}
		}
	}
	return false
}
