package kinds

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "write the mapping tests' golden files")

// testJob is a Job whose edges are on by expand key, every list bounded by
// maxPages, no refresh windows.
type testJob struct {
	on       []string
	maxPages int
}

func (j testJob) Edge(key string) *Edge {
	if slices.Contains(j.on, key) {
		return &Edge{MaxPages: j.maxPages}
	}
	return nil
}
func (j testJob) ListPages(e *Edge) int {
	if e != nil {
		return e.MaxPages
	}
	return j.maxPages
}
func (testJob) Window(string) time.Duration { return 0 }

func (testJob) SentAs(_, param string) string { return param }

// summary is what a mapping produced, one line per table (rows), per child
// task (kind key depth), and the list's control: how many items, the next
// cursor, the stop reason, the drops.
func summary(res *Result) string {
	var lines []string
	res.Batch.Each(func(table string, rows []any) {
		lines = append(lines, fmt.Sprintf("%s=%d", table, len(rows)))
	})
	slices.Sort(lines)
	for _, c := range res.Children {
		lines = append(lines, fmt.Sprintf("child %s %s @%d", c.Kind, c.Key, c.Depth))
	}
	lines = append(lines, fmt.Sprintf("items=%d next=%q stop=%q drops=%d %s", res.Items, res.Next, res.Stop, res.Drops.N, res.Drops.Reason))
	return strings.Join(lines, "\n")
}

// mapFixture maps the answer in testdata/mapping/file as the kind of task t
// maps its call's answer, with no server: the same path replay takes.
func mapFixture(t *testing.T, j Job, task Task, file string) (*Result, error) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "mapping", file))
	if err != nil {
		t.Fatal(err)
	}
	k := Of(task.Kind)
	endpoint, query := k.Call.request(&task)
	return k.Replay(j, &task, endpoint, query, body)
}

// TestMapping maps a JSON answer of every kind (written by the sandbox from
// the contract, lists cut to a few entries) and checks every table's rows,
// every child task and how the task goes on against its golden file
// (testdata/mapping/golden; go test -run TestMapping -update rewrites them).
func TestMapping(t *testing.T) {
	t.Parallel()
	const secUID = "MS4wLjABAAAAYWxpY2VfZjEwX2cw"
	follow := map[string]string{"handle": "alice_f10_g0"}
	all := []string{"followers", "following", "follower_profiles", "song_videos", "video_authors", "search_results", "comments", "reel_comments", "reel_transcripts"}
	for _, c := range []struct {
		name string
		task Task
		on   []string
		file string
	}{
		{"profile, lists on", Task{Kind: KindSVProfile, Key: "alice_f10_g0"}, []string{"followers", "following"}, "sv_profile.json"},
		{"profile, no edges", Task{Kind: KindSVProfile, Key: "alice_f10_g0"}, nil, "sv_profile.json"},
		{"followers", Task{Kind: KindSVFollowers, Key: secUID, Params: follow, MaxPages: 5}, nil, "sv_followers.json"},
		{"followers, profiles on", Task{Kind: KindSVFollowers, Key: secUID, Params: follow, MaxPages: 5, Depth: 1}, []string{"follower_profiles"}, "sv_followers.json"},
		{"following", Task{Kind: KindSVFollowing, Key: secUID, Params: follow, MaxPages: 5}, all, "sv_following.json"},
		{"keyword search", Task{Kind: KindSVKeywordSearch, Key: "keyword=cats", Params: map[string]string{"keyword": "cats"}, MaxPages: 5}, all, "sv_keyword_search.json"},
		{"hashtag search", Task{Kind: KindSVHashtagSearch, Key: "cats", MaxPages: 5}, all, "sv_hashtag_search.json"},
		{"top search", Task{Kind: KindSVTopSearch, Key: "cats_mixed_n8", MaxPages: 5}, []string{"search_results"}, "sv_top_search.json"},
		{"top search, authors too", Task{Kind: KindSVTopSearch, Key: "cats_mixed_n8", MaxPages: 5}, all, "sv_top_search.json"},
		{"song", Task{Kind: KindSVSong, Key: "6653244553457909184"}, all, "sv_song.json"},
		{"song videos", Task{Kind: KindSVSongVideos, Key: "6653244553457909184", MaxPages: 5}, all, "sv_song_videos.json"},
		{"live", Task{Kind: KindSVLive, Key: "live_alice"}, all, "sv_live.json"},
		{"trending feed", Task{Kind: KindSVTrending, Key: "trending"}, nil, "sv_trending_feed.json"},
		{"popular videos", Task{Kind: KindSVPopularVideos, Key: "popular_videos"}, all, "sv_popular_videos.json"},
		{"popular creators", Task{Kind: KindSVPopularCreators, Key: "popular_creators"}, all, "sv_popular_creators.json"},
		{"photo profile", Task{Kind: KindPSProfile, Key: "bob_f10_g0"}, all, "ps_profile.json"},
		{"embed", Task{Kind: KindPSEmbed, Key: "bob_f10_g0"}, all, "ps_embed.json"},
		{"comments", Task{Kind: KindPSComments, Key: "https://www.photosocial.example/p/ABC123/", MaxPages: 5}, all, "ps_comments.json"},
		{"reels search", Task{Kind: KindPSReelsSearch, Key: "cats", MaxPages: 5}, nil, "ps_reels_search.json"},
		{"reels search, comments and transcripts", Task{Kind: KindPSReelsSearch, Key: "cats", MaxPages: 5}, []string{"reel_comments", "reel_transcripts"}, "ps_reels_search.json"},
		{"transcript", Task{Kind: KindPSTranscript, Key: "https://www.photosocial.example/reel/ABC123/"}, all, "ps_transcript.json"},
		{"highlight", Task{Kind: KindPSHighlight, Key: "12345"}, all, "ps_highlight.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := mapFixture(t, testJob{on: c.on, maxPages: 5}, c.task, c.file)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "mapping", "golden", strings.ReplaceAll(c.name, " ", "_")+".txt")
			got := summary(res) + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("mapped:\n%swant (%s):\n%s", got, golden, want)
			}
		})
	}
}

// TestMappingEdgeCases maps answers the contract allows but the sandbox's
// world seldom gives: entries that cannot be stored, profiles without
// lists, a transcript without speech, a cursor no page answers, a body that
// does not decode, and an archive that answers another request.
func TestMappingEdgeCases(t *testing.T) {
	t.Parallel()
	const secUID = "MS4wLjABAAAAYWxpY2VfZjEwX2cw"
	follow := map[string]string{"handle": "alice"}
	job := testJob{on: []string{"followers", "following", "follower_profiles"}, maxPages: 5}
	for _, c := range []struct {
		name string
		task Task
		body string
		want string // the summary's last line, or the error's text
	}{
		{"follow entries without a handle are dropped", Task{Kind: KindSVFollowers, Key: secUID, Params: follow, MaxPages: 5},
			`{"followers":[{"uniqueId":"a","secUid":"s1"},{"nickname":"no handle"},null,{"unique_id":"b"}],"cursor":"4","hasMore":true}`,
			`items=4 next="4" stop="" drops=2 followers[1]: no uniqueId`},
		{"a page of only dropped entries goes on", Task{Kind: KindSVFollowers, Key: secUID, Params: follow, MaxPages: 5},
			`{"followers":[null,{"nickname":"x"}],"cursor":"2","hasMore":true}`,
			`items=2 next="2" stop="" drops=2 followers[1]: no uniqueId`},
		{"a profile without secUid has no lists", Task{Kind: KindSVProfile, Key: "alice"},
			`{"user":{"uniqueId":"alice"},"stats":{"followerCount":3}}`,
			`items=1 next="" stop="done: profile carries no secUid, lists not fetched" drops=0 `},
		{"a private profile has no lists", Task{Kind: KindSVProfile, Key: "alice"},
			`{"user":{"uniqueId":"alice","secUid":"` + secUID + `","privateAccount":true},"stats":{}}`,
			`items=1 next="" stop="done: private account, lists not fetched" drops=0 `},
		{"an empty photo profile is private and free", Task{Kind: KindPSProfile, Key: "bob"},
			`{}`,
			`items=0 next="" stop="done: private account (empty answer, not charged)" drops=0 `},
		{"a transcript without speech", Task{Kind: KindPSTranscript, Key: "https://www.photosocial.example/reel/ABC/"},
			`{"success":true,"transcripts":[{"id":"1","shortcode":"ABC","text":null}]}`,
			`items=1 next="" stop="done: no speech" drops=0 `},
		{"a reels cursor that is no page", Task{Kind: KindPSReelsSearch, Key: "cats", Cursor: "x", MaxPages: 5},
			`{}`,
			`items=0 next="" stop="bad page cursor \"x\"" drops=0 `},
		{"a body that is no object", Task{Kind: KindSVSong, Key: "123"},
			`[1,2]`,
			`/shortvideo/song: bad_request (HTTP 200): malformed body: json: cannot unmarshal array into Go value of type sources.envelope`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			k := Of(c.task.Kind)
			endpoint, query := k.Call.request(&c.task)
			res, err := k.Replay(job, &c.task, endpoint, query, []byte(c.body))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				lines := strings.Split(summary(res), "\n")
				got = lines[len(lines)-1]
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	t.Run("an archive that answers another request", func(t *testing.T) {
		t.Parallel()
		task := Task{Kind: KindSVSong, Key: "123"}
		_, err := Of(KindSVSong).Replay(job, &task, "/shortvideo/song", "id=456", []byte(`{"id":"456"}`))
		if !errors.Is(err, ErrReplayMismatch) {
			t.Errorf("err = %v, want ErrReplayMismatch", err)
		}
	})
}
