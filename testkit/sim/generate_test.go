package sim

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
)

// TestGenerate: a seed is one scenario (the same every time), within its
// profile's bounds; over many seeds every choice the generator has is
// made both ways.
func TestGenerate(t *testing.T) {
	t.Parallel()
	for _, p := range Profiles {
		seen := map[string]bool{}
		for seed := int64(1); seed <= 120; seed++ {
			s, err := Generate(seed, p)
			if err != nil {
				t.Fatalf("%s seed %d: %v", p.Name, seed, err)
			}
			if seed <= 20 {
				if again, _ := Generate(seed, p); !reflect.DeepEqual(s, again) {
					t.Fatalf("%s seed %d: two scenarios:\n%s\n%s", p.Name, seed, s, again)
				}
			}
			if n := len(s.Nights); n < p.MinNights || n > p.MaxNights {
				t.Errorf("%s seed %d: %d nights", p.Name, seed, n)
			}
			_, requests, err := newTruth(s).estimateNight(p.MaxRequests)
			if err != nil || requests > p.MaxRequests && (len(s.Job.Seeds) > 1 || s.Job.MaxDepth > 1) {
				t.Errorf("%s seed %d: a night of %d requests (limit %d), %v", p.Name, seed, requests, p.MaxRequests, err)
			}
			for _, f := range features(s) {
				seen[f] = true
			}
		}
		for _, f := range []string{"contract", "scrapecreators", "prices", "faults", "adaptive", "fixed windows", "no reuse",
			"upstream cache", "replies", "seed file", "depth 0", "depth 2", "budget", "no budget", "kill", "term",
			"second process", "prune", "twin timing", "twin prune", "missing", "private", "blocked", "growing"} {
			if !seen[f] {
				t.Errorf("%s: no seed of 120 has %s", p.Name, f)
			}
		}
	}
}

// features names what a scenario combines.
func features(s *Scenario) []string {
	var f []string
	add := func(ok bool, name string) {
		if ok {
			f = append(f, name)
		}
	}
	j, w := s.Job, s.World
	add(true, w.Preset)
	add(len(w.Prices) > 0, "prices")
	add(w.ErrorRate+w.TruncateRate > 0, "faults")
	add(j.Reuse.Adaptive, "adaptive")
	add(j.Reuse.RefreshAfterHours > 0, "fixed windows")
	add(!j.Reuse.Adaptive && j.Reuse.RefreshAfterHours == 0, "no reuse")
	add(j.Reuse.UpstreamCache != "", "upstream cache")
	add(j.IncludeReplies, "replies")
	add(j.Videos != nil, "videos")
	add(j.VideoComments != nil, "video comments")
	add(j.CommentReplies != nil, "comment replies")
	add(j.VideoTranscripts != nil, "video transcripts")
	add(j.Posts != nil || j.Reels != nil || j.Highlights, "profile content")
	add(j.MaxDepth == 0, "depth 0")
	add(j.MaxDepth == 2, "depth 2")
	add(j.Budget > 0, "budget")
	add(j.Budget == 0, "no budget")
	add(j.Workers == 0, "default concurrency")
	add(w.BillAbandoned, "bill abandoned")
	add(w.HangPerMille > 0, "hangs")
	add(s.RealKills, "real kills")
	for _, sd := range j.Seeds {
		add(sd.InFile, "seed file")
		add(strings.HasPrefix(sd.Value, "missing"), "missing")
		add(strings.HasPrefix(sd.Value, "private"), "private")
		add(strings.Contains(sd.Value, "blocked"), "blocked")
		add(strings.Contains(sd.Value, "_r"), "growing")
	}
	for _, n := range s.Nights {
		add(n.Prune != nil, "prune")
		add(n.Twin == TwinTiming, "twin timing")
		add(n.Twin == TwinPrune, "twin prune")
		add(len(n.Procs) > 1, "second process")
		for _, p := range n.Procs {
			add(p.Signal == "KILL", "kill")
			add(p.Signal == "TERM", "term")
		}
	}
	return f
}

// TestJobFilesValid: every job file the generator writes is one the
// crawler accepts (a refusal would be the generator's bug, exit 2).
func TestJobFilesValid(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 60; seed++ {
		s, err := Generate(seed, Profiles["full"])
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		base := "http://127.0.0.1:9/api"
		if s.World.Preset == sandbox.PresetScrapeCreators {
			base = "http://127.0.0.1:9"
		}
		path, err := writeJob(dir, s, base, 3)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jobfile.Load(path); err != nil {
			t.Errorf("seed %d: %v\n%s", seed, err, s)
		}
	}
}

// TestRequestOf: a request the sandbox answered reads back as its item
// and page, in both presets (the real preset's min_time and opaque
// comment cursors included), on a day other than 0.
func TestRequestOf(t *testing.T) {
	t.Parallel()
	const day, pageSize = 2, 4
	for _, c := range []struct {
		preset, path, query string
		want                item
		page                int64
	}{
		{"contract", "/api/shortvideo/profile", "handle=s0_f9_g2", item{"shortvideo.profile", "s0_f9_g2"}, 0},
		{"contract", "/api/shortvideo/user/followers", "secUid=MS4wLjABAAAAczBfZjlfZzI&cursor=8", item{"shortvideo.followers", "s0_f9_g2"}, 2},
		{"contract", "/api/shortvideo/user/following", "secUid=MS4wLjABAAAAczBfZjlfZzI", item{"shortvideo.following", "s0_f9_g2"}, 0},
		{"contract", "/api/photosocial/post/comments", "url=https://www.photosocial.example/p/p0_c9/&cursor=4", item{"photosocial.comments", "p0_c9"}, 1},
		{"contract", "/api/photosocial/profile", "handle=ps0_f3", item{"photosocial.profile", "ps0_f3"}, 0},
		{"scrapecreators", "/v1/tiktok/profile", "handle=s0_f9_g2", item{"shortvideo.profile", "s0_f9_g2"}, 0},
		{"scrapecreators", "/v1/tiktok/user/followers", "handle=s0_f9_g2", item{"shortvideo.followers", "s0_f9_g2"}, 0},
		{"scrapecreators", "/v1/instagram/profile", "handle=ps0_f3", item{"photosocial.profile", "ps0_f3"}, 0},
	} {
		sb, err := sandbox.New(sandbox.Config{APIKeys: []string{apiKey}, Preset: c.preset, PageSize: pageSize, WorldTime: day, Churn: sandbox.ChurnHeavyTail})
		if err != nil {
			t.Fatal(err)
		}
		get(t, sb, c.path, c.query)
		a := sb.Arrivals(apiKey)
		r, ok := requestOf(c.preset, pageSize, day, a[len(a)-1])
		if !ok || r.it != c.want || r.page != c.page || r.status != 200 || r.credit != 1 {
			t.Errorf("%s %s?%s: read as %+v, %v; want %v page %d", c.preset, c.path, c.query, r, ok, c.want, c.page)
		}
	}
	// The real preset's cursors, as its answers hand them out: page 3 of a
	// follow list, page 2 of the comments.
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{apiKey}, Preset: "scrapecreators", PageSize: pageSize, WorldTime: day, Churn: sandbox.ChurnHeavyTail})
	if err != nil {
		t.Fatal(err)
	}
	next := func(path, query, field string) string {
		body := get(t, sb, path, query)
		_, rest, _ := strings.Cut(body, `"`+field+`":`)
		return strings.Trim(strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == '}' })[0], `"`)
	}
	mt := next("/v1/tiktok/user/followers", "handle=s0_f30_g2", "min_time")
	mt = next("/v1/tiktok/user/followers", "handle=s0_f30_g2&min_time="+mt, "min_time")
	get(t, sb, "/v1/tiktok/user/followers", "handle=s0_f30_g2&min_time="+mt)
	cur := next("/v2/instagram/post/comments", "url=https://www.instagram.com/p/p0_c9/", "cursor")
	get(t, sb, "/v2/instagram/post/comments", "url=https://www.instagram.com/p/p0_c9/&cursor="+cur)
	var pages []int64
	for _, a := range sb.Arrivals(apiKey) {
		r, ok := requestOf("scrapecreators", pageSize, day, a)
		if !ok {
			t.Fatalf("%s not read", a.Endpoint)
		}
		pages = append(pages, r.page)
	}
	if want := []int64{0, 1, 2, 0, 1}; !slices.Equal(pages, want) {
		t.Errorf("pages %v, want %v", pages, want)
	}
}

func get(t *testing.T, sb *sandbox.Server, path, query string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path+"?"+query, nil)
	req.Header.Set("x-api-key", apiKey)
	rec := httptest.NewRecorder()
	sb.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s?%s: %d %s", path, query, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestReach: the seeds reach their profiles, their lists at their depth,
// and the profiles of the entries within each list's page limit one
// deeper, up to max_depth, as the sandbox lists them that day.
func TestReach(t *testing.T) {
	t.Parallel()
	s := &Scenario{World: World{Preset: "contract", Churn: sandbox.ChurnHeavyTail, PageSize: 3}, Job: Job{MaxPages: 5, MaxDepth: 1,
		Followers: &List{MaxPages: 1}, FollowerProfiles: true,
		Seeds: []Seed{{Key: "shortvideo.profiles", Value: "s0_f7_g0"}, {Key: "shortvideo.profiles", Value: "missing_x"},
			{Key: "photosocial.posts", Value: postURL("contract", "p0_c7_r2")}}}}
	tr := newTruth(s)
	r, err := tr.reach(2)
	if err != nil {
		t.Fatal(err)
	}
	followers, _ := tr.followList("shortvideo.followers", "s0_f7_g0", 2)
	want := map[item]reached{
		profileItem("s0_f7_g0"):                       {depth: 0},
		{"shortvideo.followers", "s0_f7_g0"}:          {depth: 0, size: int64(len(followers)), maxPage: 1},
		profileItem("missing_x"):                      {depth: 0},
		commentsItem(postURL("contract", "p0_c7_r2")): {depth: 0, size: 7 + 2*2, maxPage: 5},
	}
	for _, h := range followers[:min(3, len(followers))] {
		want[profileItem(h)] = reached{depth: 1}
		f, _ := tr.followList("shortvideo.followers", h, 2)
		want[item{"shortvideo.followers", h}] = reached{depth: 1, size: int64(len(f)), maxPage: 1}
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("reach:\n%v\nwant\n%v", r, want)
	}
	s.Job.MaxDepth = 0
	if r, _ := newTruth(s).reach(2); len(r) != 4 {
		t.Errorf("max_depth 0 reaches %d items, want the 4 of the seeds: %v", len(r), r)
	}
}
