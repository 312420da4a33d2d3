package jobfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/concurrency"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

func TestParseJobDefaults(t *testing.T) {
	t.Parallel()
	job, err := Parse("j.yaml", []byte(`
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
	if job.API.KeyEnv != KeyEnvDefault || job.Limits.Workers != 0 || job.Limits.MaxPages != MaxPagesDefault ||
		time.Duration(job.Limits.LeaseTimeout) != LeaseTimeoutDefault || job.API.Prefixes.ShortVideo != "/shortvideo" {
		t.Errorf("defaults not applied: %+v", job)
	}
	if job.Expand.Followers == nil || job.Expand.Following == nil || job.Expand.Followers.MaxPages != MaxPagesDefault {
		t.Errorf("default expansion = %+v", job.Expand)
	}
	seeds := job.SeedTasks()
	if len(seeds) != 2 || seeds[0].Key != "alice" {
		t.Errorf("seeds = %+v", seeds)
	}
}

func TestEverySeedKindBecomesATask(t *testing.T) {
	t.Parallel()
	job, err := Parse("j.yaml", []byte(`
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
	for _, s := range job.SeedTasks() {
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

// jobHead is lines 1-3 of the job files of the error tests.
const jobHead = "name: x\napi:\n  base_url: http://127.0.0.1:9/api\n"

const oneSeed = "seeds: {shortvideo: {profiles: [a]}}\n"

// Every rejection names file, line and full dotted key, and says why in the
// job's words; several come out sorted by line.
func TestParseJobErrorsNameKeyAndLine(t *testing.T) {
	t.Parallel()
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	cases := []struct {
		name, text, want string
	}{
		// Unknown keys at any depth, with a hint.
		{"unknown key", jobHead + "limits:\n  workerz: 3\n" + oneSeed,
			"j.yaml:5: limits.workerz: unknown key (did you mean workers?)"},
		{"unknown top key", jobHead + oneSeed + "speed: 3\n", "j.yaml:5: speed: unknown key"},
		{"unknown deep key", jobHead + "seeds:\n  shortvideo:\n    profilez: [a]\n",
			"j.yaml:6: seeds.shortvideo.profilez: unknown key (did you mean profiles?)"},
		{"unknown edge", jobHead + "expand:\n  friends: {}\n" + oneSeed, "j.yaml:5: expand.friends: unknown key"},
		{"unknown edge option", jobHead + "expand:\n  followers: {max_page: 3}\n" + oneSeed,
			"j.yaml:5: expand.followers.max_page: unknown key (did you mean max_pages?)"},
		{"unknown keyword option", jobHead + "seeds:\n  shortvideo:\n    keyword_searches:\n      - {query: cats, color: red}\n",
			"j.yaml:7: seeds.shortvideo.keyword_searches[0].color: unknown key"},
		{"duplicate key", jobHead + "limits:\n  workers: 2\n  workers: 3\n" + oneSeed,
			"j.yaml:6: limits.workers: duplicate key (first at line 5)"},
		// Wrong types anywhere, lists and keyword forms included.
		{"wrong type", jobHead + "limits:\n  workers: four\n" + oneSeed, `j.yaml:5: limits.workers: expected an integer, got "four"`},
		{"wrong type in list", jobHead + "seeds:\n  shortvideo:\n    profiles: [a, b, {x: 1}]\n",
			"j.yaml:6: seeds.shortvideo.profiles[2]: expected a string, got a mapping"},
		{"mapping for list", jobHead + "seeds:\n  photosocial:\n    posts: {a: 1}\n",
			"j.yaml:6: seeds.photosocial.posts: expected a list, got a mapping"},
		{"scalar for mapping", jobHead + "limits: 3\n" + oneSeed, "j.yaml:4: limits: expected a mapping, got 3"},
		{"no value", jobHead + "limits:\n  workers:\n" + oneSeed, "j.yaml:5: limits.workers: expected an integer, got no value"},
		{"float for integer", jobHead + "limits:\n  max_pages: 2.5\n" + oneSeed, "j.yaml:5: limits.max_pages: expected an integer, got 2.5"},
		{"bool", jobHead + "seeds:\n  shortvideo:\n    trending_feed: 1\n", "j.yaml:6: seeds.shortvideo.trending_feed: expected true or false, got 1"},
		{"keyword form", jobHead + "seeds:\n  shortvideo:\n    keyword_searches: [[a]]\n",
			"j.yaml:6: seeds.shortvideo.keyword_searches[0]: expected a keyword, or a mapping with query and options, got a list"},
		{"keyword option type", jobHead + "seeds:\n  shortvideo:\n    keyword_searches:\n      - {query: c, trim: maybe}\n",
			`j.yaml:7: seeds.shortvideo.keyword_searches[0].trim: expected true or false, got "maybe"`},
		{"bad keyword enum", jobHead + "seeds:\n  shortvideo:\n    keyword_searches:\n      - {query: cats, sort_by: newest}\n",
			"j.yaml:7: seeds.shortvideo.keyword_searches[0]: /shortvideo/search/keyword: bad_request: parameter sort_by must be one of relevance|most-liked|date-posted"},
		{"keyword both forms", jobHead + "seeds:\n  shortvideo:\n    keyword_searches:\n      - {keyword: a, query: b}\n",
			"j.yaml:7: seeds.shortvideo.keyword_searches[0]: /shortvideo/search/keyword: bad_request: parameter keyword and query are both set; use one form"},
		{"bad duration", jobHead + "  timeout: soon\n" + oneSeed, `j.yaml:4: api.timeout: "soon" is not a duration like 30s, 2m or 7d`},
		{"duration without unit", jobHead + "  timeout: 30\n" + oneSeed, "j.yaml:4: api.timeout: 30 is not a duration like 30s, 2m or 7d"},
		{"sorted by line", jobHead + "  rate: many\nlimits:\n  workerz: 1\nseeds:\n  shortvideo:\n    profiles: [[a]]\n  photosocial: []\n",
			"j.yaml:4: api.rate: expected a number, got \"many\"\n" +
				"j.yaml:6: limits.workerz: unknown key (did you mean workers?)\n" +
				"j.yaml:9: seeds.shortvideo.profiles[0]: expected a string, got a list\n" +
				"j.yaml:10: seeds.photosocial: expected a mapping, got a list"},
		// Semantic checks, located the same way.
		{"missing name", "api:\n  base_url: http://127.0.0.1:9/api\n" + oneSeed, "j.yaml:1: name: is required: a name for the job"},
		{"no seeds", jobHead + "seeds: {}\n", "j.yaml:4: seeds: no seeds: list at least one, e.g. seeds.shortvideo.profiles"},
		{"bad handle", jobHead + "seeds:\n  shortvideo:\n    profiles:\n      - ok\n      - \"bad handle!\"\n",
			`j.yaml:8: seeds.shortvideo.profiles[1]: "bad handle!" is not a handle (letters, digits, . and _, optionally after @)`},
		{"bad highlight", jobHead + "seeds:\n  photosocial:\n    highlights: [\"highlight:12a\"]\n",
			`j.yaml:6: seeds.photosocial.highlights[0]: "highlight:12a" is not a highlight id (digits, optionally after highlight:)`},
		{"bad post url", jobHead + "seeds:\n  photosocial:\n    posts: [\"/p/abc\"]\n",
			`j.yaml:6: seeds.photosocial.posts[0]: "/p/abc" is not an absolute http(s) post or reel URL`},
		{"not yaml", "name: [x\n", "j.yaml:1: not valid YAML: did not find expected ',' or ']'"},
		{"empty", "", "j.yaml:1: the job file is empty"},
		{"not a mapping", "- a\n", "j.yaml:1: a job file is a mapping of keys (name, api, limits, seeds, expand), got a list"},
		// What the database or the upstream would refuse.
		{"NUL in keyword", jobHead + "seeds:\n  shortvideo:\n    hashtag_searches: [\"a\\0b\"]\n",
			`j.yaml:6: seeds.shortvideo.hashtag_searches[0]: "a\x00b" contains the control character U+0000 at byte 1`},
		{"raw control character", jobHead + "seeds:\n  photosocial:\n    reels_searches: [\"surf\x01\"]\n",
			"j.yaml:6: seeds.photosocial.reels_searches[0]: contains the control character U+0001"},
		{"invalid UTF-8", jobHead + "seeds:\n  shortvideo:\n    top_searches:\n      - caf\xe9\n",
			"j.yaml:7: seeds.shortvideo.top_searches[0]: is not valid UTF-8 (byte 0xe9)"},
		{"long keyword", jobHead + "seeds:\n  shortvideo:\n    keyword_searches: [" + long("k", 501) + "]\n",
			"j.yaml:6: seeds.shortvideo.keyword_searches[0]: is 501 bytes long; a search is at most 500"},
		{"long hashtag", jobHead + "seeds:\n  shortvideo:\n    hashtag_searches: [" + long("é", 300) + "]\n",
			`j.yaml:6: seeds.shortvideo.hashtag_searches[0]: "` + long("é", 30) + `…" is 600 bytes long; a search is at most 500`},
		{"long handle", jobHead + "seeds:\n  photosocial:\n    profiles: [\"@" + long("h", 65) + "\"]\n",
			`j.yaml:6: seeds.photosocial.profiles[0]: "@` + long("h", 59) + `…" is 65 bytes long; a handle is at most 64`},
		{"long name", "name: " + long("n", 1001) + "\napi: {base_url: http://127.0.0.1:9/api}\n" + oneSeed, "j.yaml:1: name: is 1001 bytes long; at most 1000"},
		{"long url", jobHead + "seeds:\n  photosocial:\n    posts: [\"https://x.example/p/" + long("c", 2100) + "/\"]\n",
			"j.yaml:6: seeds.photosocial.posts[0]: is 2121 bytes long; strings are at most 2048 bytes"},
		{"NaN rate", jobHead + "  rate: .nan\n" + oneSeed, "j.yaml:4: api.rate: must be a finite number, got .nan"},
		{"Inf rate", jobHead + "  rate: -.inf\n" + oneSeed, "j.yaml:4: api.rate: must be a finite number, got -.inf"},
		{"wrapping max_pages", jobHead + "limits:\n  max_pages: 4294967296\n" + oneSeed,
			"j.yaml:5: limits.max_pages: must be between 1 and 2147483647, got 4294967296 (a list's page limit; omit the key for the default)"},
		{"beyond 64 bits", jobHead + "limits:\n  max_depth: 99999999999999999999\n" + oneSeed,
			"j.yaml:5: limits.max_depth: 99999999999999999999 is out of range (at most 9223372036854775807)"},
		{"negative api", jobHead + "  rate: -1\n  max_retries: -1\n" + oneSeed,
			"j.yaml:4: api.rate: must be between 0 and 1e+06 requests per second, got -1 (0: no ceiling)\n" +
				"j.yaml:5: api.max_retries: must be between 0 and 1000, got -1 (0: no retries)"},
		{"negative duration", jobHead + "limits:\n  lease_timeout: -1s\n" + oneSeed, "j.yaml:5: limits.lease_timeout: must not be negative, got -1s"},
		{"negative limits", jobHead + "limits:\n  max_depth: -1\n  max_credits: -5\n" + oneSeed,
			"j.yaml:5: limits.max_depth: must be between 0 and 2147483647, got -1 (0: the seeds and their own lists only)\n" +
				"j.yaml:6: limits.max_credits: must not be negative, got -5"},
		// Zero means what it says or is rejected.
		{"zero workers and pages", jobHead + "limits:\n  workers: 0\n  max_pages: 0\n" + oneSeed,
			"j.yaml:5: limits.workers: must be between 1 and 4096, got 0 (omit the key for the adaptive limit)\n" +
				"j.yaml:6: limits.max_pages: must be between 1 and 2147483647, got 0 (a list's page limit; omit the key for the default)"},
		{"zero edge pages", jobHead + "expand:\n  followers: {max_pages: 0}\n" + oneSeed,
			"j.yaml:5: expand.followers.max_pages: must be between 1 and 2147483647, got 0 (omit the key for limits.max_pages)"},
		// The dialect: presets, overrides by endpoint and parameter, what a
		// preset cannot do.
		// Adaptive revisits need a budget; their keys need them on.
		{"adaptive without a budget", jobHead + "reuse:\n  adaptive: true\n" + oneSeed,
			"j.yaml:5: reuse.adaptive: needs a credit budget for the night to spend: set limits.max_credits"},
		{"adaptive keys alone", jobHead + "reuse:\n  max_age: 10d\n" + oneSeed,
			"j.yaml:5: reuse.max_age: applies only with reuse.adaptive: true"},
		{"adaptive importance", jobHead + "limits: {max_credits: 10}\nreuse:\n  adaptive: true\n  min_yield: -1\n  importance: {shortvideo.profile: 2, shortvideo.profiles: 0}\n  counter_weight: 0\n" + oneSeed,
			"j.yaml:7: reuse.min_yield: must be a number >= 0 (expected new entries or counter changes per credit), got -1\n" +
				"j.yaml:8: reuse.importance.shortvideo.profile: names no seed list (e.g. shortvideo.profiles)\n" +
				"j.yaml:8: reuse.importance.shortvideo.profiles: must be a weight above 0 and at most 1e6, got 0\n" +
				"j.yaml:9: reuse.counter_weight: must be a weight above 0 and at most 1e6 (new entries a counter change is worth), got 0"},
		{"unknown preset", jobHead + "  preset: realapi\n" + oneSeed,
			`j.yaml:4: api.preset: "realapi" is not a preset: contract (what the sandbox serves) or scrapecreators (the real service)`},
		{"unknown endpoint", jobHead + "  endpoints:\n    shortvideo:\n      folowers: {path: /v1/x}\n" + oneSeed,
			"j.yaml:6: api.endpoints.shortvideo.folowers: is not an endpoint; the endpoints are " + strings.Join(endpointNames(), ", ")},
		{"unknown parameter", jobHead + "  endpoints:\n    shortvideo:\n      song:\n        params: {clip: clipId}\n" + oneSeed,
			"j.yaml:7: api.endpoints.shortvideo.song.params.clip: is not a parameter of /shortvideo/song; it takes id"},
		{"bad override path", jobHead + "  endpoints:\n    photosocial:\n      comments: {path: v2/comments}\n" + oneSeed,
			`j.yaml:6: api.endpoints.photosocial.comments.path: "v2/comments" must start with / and hold a path only (at most 1000 bytes, no ? or #)`},
		{"prefixes under the real preset", "name: x\napi:\n  preset: scrapecreators\n  prefixes: {shortvideo: /v1/tiktok}\n" + oneSeed,
			"j.yaml:4: api.prefixes: applies to the contract preset only: under scrapecreators each endpoint's path is whole; change one with api.endpoints.<platform>.<endpoint>.path"},
		{"secUid seeds under the real preset", "name: x\napi:\n  preset: scrapecreators\nseeds: {shortvideo: {sec_uids: [MS4wLjABAAAAv7iSuuXDJGDvJkmH_vz1qkDZYo1apxgzaxdBSeIuPiM]}}\n",
			"j.yaml:4: seeds.shortvideo.sec_uids: the scrapecreators preset addresses shortvideo.followers lists by handle (the endpoint takes no secUid parameter): list the accounts under seeds.shortvideo.profiles instead"},
		{"zero burst", jobHead + "  rate: 5\n  burst: 0\n" + oneSeed, "j.yaml:5: api.burst: must be between 1 and 1000000, got 0"},
		// Durations have minimums; a lease outlasts a request.
		{"lease shorter than a request", jobHead + "limits:\n  lease_timeout: 1ms\n" + oneSeed,
			"j.yaml:5: limits.lease_timeout: 1ms is shorter than api.timeout (1m0s): a lease must outlast a request; set at least 1m0s"},
		{"timeout past the default lease", jobHead + "  timeout: 5m\n" + oneSeed,
			"j.yaml:4: api.timeout: 5m0s is longer than limits.lease_timeout (default 2m0s): a lease must outlast a request; set limits.lease_timeout to at least 5m0s"},
		{"duration minimums", jobHead + "  timeout: 500ms\n  retry_initial: 0s\n  retry_after_cap: 10ms\n" + oneSeed,
			"j.yaml:4: api.timeout: 500ms is shorter than the minimum 1s\n" +
				"j.yaml:5: api.retry_initial: 0s is shorter than the minimum 1ms\n" +
				"j.yaml:6: api.retry_after_cap: 10ms is shorter than the minimum 1s"},
		{"retry_max below retry_initial", jobHead + "  retry_initial: 2s\n  retry_max: 1s\n" + oneSeed,
			"j.yaml:5: api.retry_max: 1s is shorter than retry_initial (2s)"},
		// Secrets: the key's variable and where it may go.
		{"key_env outside the namespace", "name: x\napi:\n  base_url: https://elsewhere.example/api\n  key_env: PGPASSWORD\n" + oneSeed,
			`j.yaml:4: api.key_env: "PGPASSWORD" is not a variable of the CRAWLER_ namespace (CRAWLER_ then A-Z, 0-9, _; e.g. CRAWLER_API_KEY): a job file may not name another variable`},
		{"empty key_env", jobHead + "  key_env: \"\"\n" + oneSeed,
			`j.yaml:4: api.key_env: "" is not a variable of the CRAWLER_ namespace (CRAWLER_ then A-Z, 0-9, _; e.g. CRAWLER_API_KEY): a job file may not name another variable`},
		{"plain http elsewhere", "name: x\napi:\n  base_url: http://api.example.com/api\n" + oneSeed,
			`j.yaml:3: api.base_url: "http://api.example.com/api" would send the API key over plain http to a host that is not loopback: use https (plain http goes only to 127.0.0.0/8, ::1 and localhost, unless the operator passes crawler run --allow-insecure-http)`},
		{"not http", "name: x\napi:\n  base_url: ftp://host/x?token=hunter2\n" + oneSeed,
			`j.yaml:3: api.base_url: "ftp://host/x" must be an absolute http(s) URL with a host, e.g. https://api.example.com/api`},
		{"no base_url", "name: x\n" + oneSeed, "j.yaml:1: api.base_url: is required: the service address including /api"},
		{"empty prefix", jobHead + "  prefixes: {shortvideo: \"\"}\n" + oneSeed, `j.yaml:4: api.prefixes.shortvideo: "" must start with /`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("j.yaml", []byte(tc.text))
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T %v is not Errors", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// Credentials in base_url never appear in a message, whatever the URL's
// shape, from the job's validation or the client's.
func TestBaseURLCredentialsNeverEchoed(t *testing.T) {
	t.Parallel()
	const cred = "must not carry credentials (user:password@): the key is read from api.key_env and sent in x-api-key"
	for _, u := range []string{
		"user:hunter2@host/api", "//user:hunter2@/x", "http://user:hunter2@", "http://user:hunter2@host:port/",
		"https://user:hunter2@api.example.com/api", "https://hunter2@api.example.com/api", "hunter2@host", "http://[::1:hunter2@/",
	} {
		_, err := Parse("j.yaml", []byte("name: x\napi:\n  base_url: \""+u+"\"\n"+oneSeed))
		if err == nil || err.Error() != "j.yaml:3: api.base_url: "+cred {
			t.Errorf("%s: %v", u, err)
		}
		_, err = sources.New(clientAt(u))
		if err == nil || err.Error() != "sources: base_url: "+cred {
			t.Errorf("client %s: %v", u, err)
		}
	}
	// Shapes without an @: whatever is shown is redacted to scheme, host and path.
	for u, want := range map[string]string{
		"api.example.com/api?key=hunter2":   "(a value that is not an absolute URL, not shown) must be an absolute http(s) URL with a host, e.g. https://api.example.com/api",
		"https://:hunter2/x":                "(a value that is not an absolute URL, not shown) must be an absolute http(s) URL with a host, e.g. https://api.example.com/api",
		"http://example.com/api#k=hunter2":  `"http://example.com/api" would send the API key over plain http to a host that is not loopback: use https (plain http goes only to 127.0.0.0/8, ::1 and localhost, unless the operator passes crawler run --allow-insecure-http)`,
		"gopher://example.com/?tok=hunter2": `"gopher://example.com/" must be an absolute http(s) URL with a host, e.g. https://api.example.com/api`,
	} {
		_, err := Parse("j.yaml", []byte("name: x\napi:\n  base_url: \""+u+"\"\n"+oneSeed))
		if err == nil || err.Error() != "j.yaml:3: api.base_url: "+want {
			t.Errorf("%s: %v", u, err)
		}
		if _, err := sources.New(clientAt(u)); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("client %s: %v", u, err)
		}
	}
}

// clientAt is a client configuration with the defaults, for base.
func clientAt(base string) sources.Config {
	c := sources.Config{Options: sources.DefaultOptions(), APIKey: "k"}
	c.BaseURL = base
	return c
}

// Plain http carries the key only to loopback hosts, unless the operator
// allows it; --base-url is checked the same way, as a flag.
func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	t.Parallel()
	job := func(base string) []byte { return []byte("name: x\napi:\n  base_url: " + base + "\n" + oneSeed) }
	for _, base := range []string{"http://127.0.0.1:9/api", "http://127.9.9.9/api", "http://localhost:8/api", "http://[::1]:8/api", "https://api.example.com/api"} {
		j, err := Parse("j.yaml", job(base))
		if err != nil {
			t.Errorf("%s: %v", base, err)
			continue
		}
		if _, err := sources.New(j.ClientConfig("k", nil)); err != nil {
			t.Errorf("client %s: %v", base, err)
		}
	}
	insecure := "http://10.0.0.8/api"
	if _, err := Parse("j.yaml", job(insecure)); err == nil {
		t.Error("plain http to 10.0.0.8 accepted")
	}
	if _, err := sources.New(clientAt(insecure)); err == nil {
		t.Error("client: plain http to 10.0.0.8 accepted")
	}
	j, err := ParseWith("j.yaml", job(insecure), LoadOptions{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatalf("allowed by the operator: %v", err)
	}
	if _, err := sources.New(j.ClientConfig("k", nil)); err != nil {
		t.Errorf("client, allowed by the operator: %v", err)
	}
	// The override is what is checked, named as the flag.
	_, err = ParseWith("j.yaml", job("https://api.example.com/api"), LoadOptions{BaseURL: "http://example.com/api"})
	want := `--base-url: "http://example.com/api" would send the API key over plain http to a host that is not loopback: use https (plain http goes only to 127.0.0.0/8, ::1 and localhost, unless the operator passes crawler run --allow-insecure-http)`
	if err == nil || err.Error() != want {
		t.Errorf("override: %v", err)
	}
	if j, err := ParseWith("j.yaml", job("https://api.example.com/api"), LoadOptions{BaseURL: "http://127.0.0.1:7/api"}); err != nil || j.API.BaseURL != "http://127.0.0.1:7/api" {
		t.Errorf("loopback override: %v", err)
	}
	// A job file cannot allow it.
	if _, err := Parse("j.yaml", []byte(jobHead+"  allowinsecurehttp: true\n"+oneSeed)); err == nil ||
		err.Error() != "j.yaml:4: api.allowinsecurehttp: unknown key" {
		t.Errorf("job file setting the flag: %v", err)
	}
	if _, err := Parse("j.yaml", []byte(jobHead+"allowinsecurehttp: true\n"+oneSeed)); err == nil ||
		err.Error() != "j.yaml:4: allowinsecurehttp: unknown key" {
		t.Errorf("job file setting the flag: %v", err)
	}
}

// Zero means what it says: no retries, seeds only; absent keys take the
// defaults.
func TestJobZeroMeansZero(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	job, err := Parse("j.yaml", []byte("name: x\napi:\n  base_url: "+srv.URL+"/api\n  max_retries: 0\n  retry_initial: 1ms\n  retry_max: 1ms\nlimits:\n  max_depth: 0\n"+oneSeed))
	if err != nil {
		t.Fatal(err)
	}
	if job.Limits.MaxDepth != 0 || job.API.MaxRetries != 0 {
		t.Errorf("explicit zeros became max_depth %d, max_retries %d", job.Limits.MaxDepth, job.API.MaxRetries)
	}
	cfg := job.ClientConfig("k", nil)
	if cfg.MaxRetries != 0 {
		t.Errorf("ClientConfig.MaxRetries = %d, want 0 (none)", cfg.MaxRetries)
	}
	c, err := sources.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sources.Do(context.Background(), c, nil, endpoints.SVProfileCall("a")); err == nil {
		t.Fatal("a 503 succeeded")
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("max_retries: 0 made %d requests, want 1", n)
	}

	job, err = Parse("j.yaml", []byte(jobHead+oneSeed))
	if err != nil {
		t.Fatal(err)
	}
	if job.Limits.MaxDepth != MaxDepthDefault || job.API.MaxRetries != sources.MaxRetriesDefault || job.ClientConfig("k", nil).MaxRetries != sources.MaxRetriesDefault ||
		time.Duration(job.API.Timeout) != sources.TimeoutDefault || time.Duration(job.Limits.LeaseTimeout) != LeaseTimeoutDefault {
		t.Errorf("absent keys: max_depth %d, max_retries %d, timeout %v, lease %v", job.Limits.MaxDepth, job.API.MaxRetries, job.API.Timeout, job.Limits.LeaseTimeout)
	}
}

// A job file above the cap is refused from its size, before it is read:
// a 50 MB file costs no memory, and a stream (a device, a pipe) is read
// only up to the cap.
func TestJobFileSizeCap(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Load(big)
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != big+": the job file is more than 1048576 bytes; job files are at most 1048576 bytes (1 MiB)" {
		t.Errorf("50 MB file: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing a 50 MB file allocated %d bytes", alloc)
	}
	runtime.ReadMemStats(&before)
	_, err = Load("/dev/zero")
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != "/dev/zero: the job file is more than 1048576 bytes; job files are at most 1048576 bytes (1 MiB)" {
		t.Errorf("endless stream: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("refusing an endless stream allocated %d bytes", alloc)
	}
	// At the cap, the file is parsed: a thousand seeds and a comment up to
	// the cap (what is tested is the size; 87,000 seeds filling it took 2 s
	// of CPU to parse under the race detector).
	seeds := "name: x\napi: {base_url: http://127.0.0.1:9/api}\nseeds:\n  shortvideo:\n    profiles:\n"
	text := seeds + strings.Repeat("      - abc\n", 1000)
	text += strings.Repeat("#", MaxFileBytes-len(text))
	job, err := Parse("j.yaml", []byte(text))
	if err != nil || len(job.Seeds.ShortVideo.Profiles) != 1000 || len(text) != MaxFileBytes {
		t.Errorf("file at the cap: %v", err)
	}
	if _, err := Parse("j.yaml", []byte(text+"\n")); err == nil || err.Error() != "j.yaml: the job file is more than 1048576 bytes; job files are at most 1048576 bytes (1 MiB)" {
		t.Errorf("a byte past the cap: %v", err)
	}
}

// Refusing a job file costs memory bounded by the caps, measured as the
// growth of VmHWM in a child process that does nothing else: a 50 MB file
// is refused from its size (nothing read), an endless stream after 1 MiB,
// and the worst file under the cap (a value every two bytes) after
// MaxJobValues values.
func TestJobFileMemory(t *testing.T) {
	if path := os.Getenv("JOBMEM_FILE"); path != "" {
		before := vmHWMKiB(t)
		_, err := Load(path)
		fmt.Printf("growth-kib %d\nerror %v\n", vmHWMKiB(t)-before, err)
		return
	}
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if f, err := os.Create(big); err != nil {
		t.Fatal(err)
	} else if err := errors.Join(f.Truncate(50<<20), f.Close()); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(values, []byte(jobHead+"seeds: {shortvideo: {profiles: ["+strings.Repeat("a,", 199_000)+"]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, err string
		maxKiB    int64
	}{
		{big, big + ": the job file is more than 1048576 bytes; job files are at most 1048576 bytes (1 MiB)", 4 << 10 * raceFactor},
		{"/dev/zero", "/dev/zero: the job file is more than 1048576 bytes; job files are at most 1048576 bytes (1 MiB)", 8 << 10 * raceFactor},
		{values, values + ":4: seeds.shortvideo.profiles[99993]: the file holds more than 100000 values (aliases expanded); job files are capped there", 80 << 10 * raceFactor},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestJobFileMemory$", "-test.count=1")
		cmd.Env = append(os.Environ(), "JOBMEM_FILE="+tc.path)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.path, err, out)
		}
		var growth int64
		var msg string
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "growth-kib "); ok {
				growth, _ = strconv.ParseInt(v, 10, 64)
			} else if v, ok := strings.CutPrefix(line, "error "); ok {
				msg = v
			}
		}
		if msg != tc.err {
			t.Errorf("%s: error %q, want %q", tc.path, msg, tc.err)
		}
		if growth > tc.maxKiB {
			t.Errorf("%s: peak RSS grew by %d KiB, want at most %d", tc.path, growth, tc.maxKiB)
		}
		t.Logf("%s: peak RSS grew by %d KiB", filepath.Base(tc.path), growth)
	}
}

func vmHWMKiB(t *testing.T) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// YAML aliases are followed (a job may reuse a value) but cannot blow up:
// nested merges that expand to a billion values are refused after
// MaxJobValues, fast; an alias inside its own anchor is named.
func TestJobAliasesAreBounded(t *testing.T) {
	t.Parallel()
	job, err := Parse("j.yaml", []byte(jobHead+"expand:\n  followers: &edge {max_pages: 3}\n  following: {<<: *edge}\nseeds:\n  shortvideo:\n    profiles: &p [a, b]\n    live: *p\n"))
	if err != nil {
		t.Fatal(err)
	}
	if job.Expand.Following == nil || job.Expand.Following.MaxPages != 3 || len(job.Seeds.ShortVideo.Live) != 2 {
		t.Errorf("aliases: following %+v, live %v", job.Expand.Following, job.Seeds.ShortVideo.Live)
	}

	var b strings.Builder
	b.WriteString(jobHead + "x0: &m0 {workers: 1}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x%d: &m%d {<<: [*m%d, *m%d, *m%d, *m%d, *m%d, *m%d, *m%d, *m%d, *m%d, *m%d]}\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("limits: {<<: [*m9, *m9, *m9, *m9, *m9, *m9, *m9, *m9, *m9, *m9]}\n" + oneSeed)
	start := time.Now()
	_, err = Parse("j.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), ": limits: the file holds more than 100000 values (aliases expanded); job files are capped there") {
		t.Errorf("billion laughs: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("billion laughs took %v", d)
	}

	// Values are bounded before yaml builds its tree, too.
	_, err = Parse("j.yaml", []byte(jobHead+"seeds: {shortvideo: {profiles: ["+strings.Repeat("a,", 250_000)+"]}}\n"))
	if err == nil || err.Error() != "j.yaml: the file holds more than 100000 values; job files are capped there" {
		t.Errorf("250k values: %v", err)
	}

	_, err = Parse("j.yaml", []byte(jobHead+"seeds:\n  shortvideo:\n    profiles: &p [a, *p]\n"))
	if err == nil || err.Error() != "j.yaml:6: seeds.shortvideo.profiles[1]: alias *p refers to a value that contains it" {
		t.Errorf("self-reference: %v", err)
	}
}

// The example jobs in the repository parse, in both dialects.
func TestExampleJobParses(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"../jobs.example.yaml", "../jobs.scrapecreators.example.yaml"} {
		if _, err := Load(f); err != nil {
			t.Fatal(err)
		}
	}
}

// The run's stored spec keeps the api section flat, durations as text, and
// never the operator's flag.
func TestJobSpecJSON(t *testing.T) {
	t.Parallel()
	job, err := ParseWith("j.yaml", []byte(jobHead+"  max_retries: 0\n  outage_window: 90s\n"+oneSeed), LoadOptions{AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(job.API)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"base_url":"http://127.0.0.1:9/api","prefixes":{"shortvideo":"/shortvideo","photosocial":"/photosocial"},"timeout":"1m0s",` +
		`"max_retries":0,"retry_initial":"500ms","retry_max":"30s","retry_after_cap":"5m0s","outage_window":"1m30s","rate":0,"burst":1,"key_env":"CRAWLER_API_KEY"}`
	if string(b) != want {
		t.Errorf("spec api\n%s\nwant\n%s", b, want)
	}
	var back API
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Options, func() sources.Options { o := job.API.Options; o.AllowInsecureHTTP = false; return o }()) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

func endpointNames() []string {
	var names []string
	for _, e := range sources.Endpoints {
		names = append(names, e.Name)
	}
	return names
}

// The real service's preset needs no base_url and reaches every endpoint
// by its own path and parameter names; an override changes one endpoint
// and leaves the others as the preset says.
func TestScrapeCreatorsPreset(t *testing.T) {
	t.Parallel()
	job, err := Parse("j.yaml", []byte(`name: x
api:
  preset: scrapecreators
  endpoints:
    shortvideo:
      trending_feed: {fixed: {region: GB}}
      followers: {params: {secUid: user_id}}
    photosocial:
      comments: {path: /v3/instagram/post/comments}
seeds: {shortvideo: {profiles: [a]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := job.ClientConfig("k", nil)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]string{
		"shortvideo.followers":     "/v1/tiktok/user/followers user_id cursor->min_time",
		"shortvideo.following":     "/v1/tiktok/user/following handle cursor->min_time",
		"shortvideo.song":          "/v1/tiktok/song clipId",
		"shortvideo.trending_feed": "/v1/tiktok/get-trending-feed region=GB",
		"photosocial.comments":     "/v3/instagram/post/comments",
		"photosocial.transcript":   "/v2/instagram/media/transcript",
		"photosocial.highlight":    "/v1/instagram/user/highlight/detail",
	} {
		r, ok := job.API.Route(kind)
		got := r.Path
		switch kind {
		case "shortvideo.followers", "shortvideo.following":
			got += " " + job.SentAs(kind, "secUid") + " cursor->" + r.SentAs("cursor")
		case "shortvideo.song":
			got += " " + r.SentAs("id")
		case "shortvideo.trending_feed":
			got += " region=" + r.Fixed["region"]
		}
		if !ok || got != want {
			t.Errorf("%s: %q, want %q", kind, got, want)
		}
	}
	if r, _ := job.API.Route("shortvideo.popular_videos"); r.Retired == "" {
		t.Error("popular videos are not retired under the real preset")
	}
	// The contract's default: paths under the prefixes, names unchanged.
	job2, err := Parse("j.yaml", []byte(jobHead+oneSeed))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := job2.API.Route("shortvideo.followers"); r.Path != "/shortvideo/user/followers" || job2.SentAs("shortvideo.followers", "secUid") != "secUid" {
		t.Errorf("contract route %+v", r)
	}
}

// limits.workers, when the job file sets it, caps the client's requests in
// flight; unset, the adaptive limit is free (up to its hard ceiling).
func TestWorkersCapRequestsInFlight(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limits string
		want   int
	}{{"", 0}, {"limits:\n  workers: 12\n", 12}} {
		job, err := Parse("j.yaml", []byte("name: x\napi:\n  base_url: https://api.example.com/api\n"+c.limits+oneSeed))
		if err != nil {
			t.Fatal(err)
		}
		cfg := job.ClientConfig("k", nil)
		if cfg.MaxInFlight != c.want {
			t.Errorf("%q: MaxInFlight %d, want %d", c.limits, cfg.MaxInFlight, c.want)
		}
		cl, err := sources.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if st := cl.Concurrency(); (c.want > 0 && st.Ceiling != c.want) || (c.want == 0 && st.Ceiling != concurrency.HardCeiling) {
			t.Errorf("%q: the client's ceiling %d", c.limits, st.Ceiling)
		}
	}
}
