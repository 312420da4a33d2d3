package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseJobDefaults(t *testing.T) {
	t.Parallel()
	job, err := ParseJob("j.yaml", []byte(`
name: nightly
api:
  base_url: http://127.0.0.1:1/api
seeds:
  shortvideo:
    profiles: ["@alice", bob.b_2]
`))
	if err != nil {
		t.Fatal(err)
	}
	if job.API.KeyEnv != KeyEnvDefault || job.Limits.Workers != WorkersDefault || job.Limits.MaxPages != MaxPagesDefault ||
		time.Duration(job.Limits.LeaseTimeout) != LeaseTimeoutDefault || job.API.Prefixes.ShortVideo != "/shortvideo" {
		t.Errorf("defaults not applied: %+v", job)
	}
	if job.Expand.Followers == nil || job.Expand.Following == nil || job.Expand.Followers.MaxPages != MaxPagesDefault {
		t.Errorf("default expansion = %+v", job.Expand)
	}
	seeds := SeedTasks(job)
	if len(seeds) != 2 || seeds[0].Key != "alice" {
		t.Errorf("seeds = %+v", seeds)
	}
}

func TestEverySeedKindBecomesATask(t *testing.T) {
	t.Parallel()
	job, err := ParseJob("j.yaml", []byte(`
name: all
api: {base_url: https://h/api}
expand: {comments: {max_pages: 4}}
seeds:
  shortvideo:
    profiles: ["@a"]
    sec_uids: [MS4wLjABAAAAxyz]
    keyword_searches: [cats, {query: dogs, date_posted: this-week, trim: true}]
    hashtag_searches: [fit]
    top_searches: [cook]
    songs: ["123"]
    live: ["@b"]
    trending_feed: true
    popular_videos: true
    popular_creators: true
  photosocial:
    profiles: [c]
    posts: ["https://x.example/p/abc/"]
    reels_searches: [surf]
    transcripts: ["https://x.example/reel/def/"]
    embeds: ["@d"]
    highlights: ["highlight:77", "78"]
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range SeedTasks(job) {
		got = append(got, s.Kind+" "+s.Key)
	}
	want := []string{
		"shortvideo.profile a", "shortvideo.followers MS4wLjABAAAAxyz", "shortvideo.following MS4wLjABAAAAxyz",
		"shortvideo.keyword_search keyword=cats", "shortvideo.keyword_search query=dogs&date_posted=this-week&trim=true",
		"shortvideo.hashtag_search fit", "shortvideo.top_search cook", "shortvideo.song 123", "shortvideo.live b",
		"shortvideo.trending_feed trending", "shortvideo.popular_videos popular_videos", "shortvideo.popular_creators popular_creators",
		"photosocial.profile c", "photosocial.comments https://x.example/p/abc/", "photosocial.reels_search surf",
		"photosocial.transcript https://x.example/reel/def/", "photosocial.embed d", "photosocial.highlight 77", "photosocial.highlight 78",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("seed tasks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseJobErrorsNameKeyAndLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       []string // substrings of the error
	}{
		{"unknown key", "name: x\napi:\n  base_url: https://h/api\nlimits:\n  workerz: 3\nseeds: {shortvideo: {profiles: [a]}}\n",
			[]string{"j.yaml:5", "workerz", "unknown key"}},
		{"missing name", "api:\n  base_url: https://h/api\nseeds:\n  shortvideo:\n    profiles: [a]\n",
			[]string{"j.yaml:1", "name: is required"}},
		{"wrong type", "name: x\napi:\n  base_url: https://h/api\nlimits:\n  workers: many\nseeds: {shortvideo: {profiles: [a]}}\n",
			[]string{"j.yaml:5", `"many"`, "an integer"}},
		{"no seeds", "name: x\napi:\n  base_url: https://h/api\nseeds: {}\n",
			[]string{"j.yaml:4", "seeds: no seeds"}},
		{"bad handle", "name: x\napi:\n  base_url: https://h/api\nseeds:\n  shortvideo:\n    profiles:\n      - ok\n      - \"bad handle!\"\n",
			[]string{"j.yaml:8", "seeds.shortvideo.profiles[1]", "not a handle"}},
		{"bad duration", "name: x\napi:\n  base_url: https://h/api\n  timeout: soon\nseeds: {shortvideo: {profiles: [a]}}\n",
			[]string{"j.yaml:4", "duration"}},
		{"not yaml", "name: [x\n", []string{"j.yaml:"}},
		{"empty", "", []string{"j.yaml:1", "empty"}},
		{"bad keyword enum", "name: x\napi:\n  base_url: https://h/api\nseeds:\n  shortvideo:\n    keyword_searches:\n      - {query: cats, sort_by: newest}\n",
			[]string{"j.yaml:7", "seeds.shortvideo.keyword_searches[0]", "sort_by"}},
		{"unknown keyword option", "name: x\napi:\n  base_url: https://h/api\nseeds:\n  shortvideo:\n    keyword_searches:\n      - {query: cats, color: red}\n",
			[]string{"j.yaml:7", "color", "unknown key"}},
		{"bad highlight", "name: x\napi:\n  base_url: https://h/api\nseeds:\n  photosocial:\n    highlights: [\"highlight:12a\"]\n",
			[]string{"j.yaml:6", "seeds.photosocial.highlights[0]", "not a highlight id"}},
		{"bad post url", "name: x\napi:\n  base_url: https://h/api\nseeds:\n  photosocial:\n    posts: [\"/p/abc\"]\n",
			[]string{"j.yaml:6", "seeds.photosocial.posts[0]", "URL"}},
		{"unknown edge", "name: x\napi:\n  base_url: https://h/api\nexpand:\n  friends: {}\nseeds: {shortvideo: {profiles: [a]}}\n",
			[]string{"j.yaml:5", "friends", "unknown key"}},
		{"workers out of range", "name: x\napi:\n  base_url: https://h/api\nlimits:\n  workers: 0\n  max_pages: -1\nseeds: {shortvideo: {profiles: [a]}}\n",
			[]string{"limits.max_pages: must not be negative", "j.yaml:6"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJob("j.yaml", []byte(tc.text))
			if err == nil {
				t.Fatal("no error")
			}
			var errs JobErrors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T is not JobErrors", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
