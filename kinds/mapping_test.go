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

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
)

var update = flag.Bool("update", false, "write the mapping tests' golden files")

// testJob is a Job whose edges are on by expand key, every list bounded by
// maxPages, no refresh windows, in the dialect of preset (the contract's
// when empty).
type testJob struct {
	on       []string
	maxPages int
	preset   string
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

func (j testJob) Route(kind string) sources.Route {
	o := sources.DefaultOptions()
	o.Preset = j.preset
	r, _ := o.Route(kind)
	return r
}

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
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := mapFixture(t, testJob{on: c.on, maxPages: 5}, c.task, c.file)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name, summary(res)+"\n")
		})
	}
}

// contractCases are TestMapping's: the contract's answers, written by the
// sandbox.
var contractCases = func() []mappingCase {
	const secUID = "MS4wLjABAAAAYWxpY2VfZjEwX2cw"
	follow := map[string]string{"handle": "alice_f10_g0"}
	all := []string{"followers", "following", "follower_profiles", "song_videos", "video_authors", "search_results", "comments", "reel_comments", "reel_transcripts"}
	return []mappingCase{
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
	}
}()

// dialectCase is a mapping case and its dialect (the contract's when
// preset is empty).
type dialectCase struct {
	mappingCase
	preset string
}

// allMappingCases are the mapping tests' cases of both dialects.
func allMappingCases() []dialectCase {
	var out []dialectCase
	for _, c := range contractCases {
		out = append(out, dialectCase{c, ""})
	}
	for _, c := range realCases {
		out = append(out, dialectCase{c, sources.PresetScrapeCreators})
	}
	return out
}

// checkGolden compares what a mapping produced with the golden file named
// after the case (rewritten with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", "mapping", "golden", strings.ReplaceAll(name, " ", "_")+".txt")
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

// TestMappingReal maps the real service's sample answers (testdata/mapping/
// real_*.json, cut from the official CLI's samples; see the README there)
// with the kinds that map the contract's, against golden files: the client
// speaks both dialects into the same rows.
func TestMappingReal(t *testing.T) {
	t.Parallel()
	for _, c := range realCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := mapFixture(t, testJob{on: c.on, maxPages: 5, preset: sources.PresetScrapeCreators}, c.task, c.file)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name, summary(res)+"\n")
		})
	}
}

type mappingCase struct {
	name string
	task Task
	on   []string
	file string
}

const realSecUID = "MS4wLjABAAAAINC_ElRRtestowner"

var (
	realFollow = map[string]string{"handle": "stoolpresidente"}
	realAll    = []string{"followers", "following", "follower_profiles", "song_videos", "video_authors", "search_results", "comments", "reel_comments", "reel_transcripts"}
	realCases  = []mappingCase{
		{"real profile", Task{Kind: KindSVProfile, Key: "stoolpresidente"}, []string{"followers", "following"}, "real_shortvideo.profile.json"},
		{"real followers", Task{Kind: KindSVFollowers, Key: realSecUID, Params: realFollow, MaxPages: 5}, realAll, "real_shortvideo.followers.json"},
		{"real followers, trimmed", Task{Kind: KindSVFollowers, Key: realSecUID, Params: realFollow, MaxPages: 5}, nil, "real_shortvideo.followers.trimmed.json"},
		{"real followers, last page", Task{Kind: KindSVFollowers, Key: realSecUID, Params: realFollow, MaxPages: 5, Cursor: "1737751376"}, nil, "real_shortvideo.followers.last_page.json"},
		{"real following", Task{Kind: KindSVFollowing, Key: realSecUID, Params: realFollow, MaxPages: 5}, realAll, "real_shortvideo.following.json"},
		{"real following, trimmed", Task{Kind: KindSVFollowing, Key: realSecUID, Params: realFollow, MaxPages: 5}, nil, "real_shortvideo.following.trimmed.json"},
		{"real keyword search", Task{Kind: KindSVKeywordSearch, Key: "query=super+bowl", Params: map[string]string{"query": "super bowl"}, MaxPages: 5}, realAll, "real_shortvideo.keyword_search.json"},
		{"real keyword search, trimmed", Task{Kind: KindSVKeywordSearch, Key: "query=super+bowl", Params: map[string]string{"query": "super bowl"}, MaxPages: 5}, nil, "real_shortvideo.keyword_search.trimmed.json"},
		{"real hashtag search", Task{Kind: KindSVHashtagSearch, Key: "fyp", MaxPages: 5}, realAll, "real_shortvideo.hashtag_search.json"},
		{"real hashtag search, trimmed", Task{Kind: KindSVHashtagSearch, Key: "friends", MaxPages: 5}, nil, "real_shortvideo.hashtag_search.trimmed.json"},
		{"real top search", Task{Kind: KindSVTopSearch, Key: "funny dogs", MaxPages: 5}, realAll, "real_shortvideo.top_search.json"},
		{"real song", Task{Kind: KindSVSong, Key: "6717159721276540930"}, realAll, "real_shortvideo.song.json"},
		{"real song, no id_str", Task{Kind: KindSVSong, Key: "6717159721276540930"}, nil, "real_shortvideo.song.no_id_str.json"},
		{"real song videos", Task{Kind: KindSVSongVideos, Key: "7439295283975702544", MaxPages: 5}, realAll, "real_shortvideo.song_videos.json"},
		{"real trending feed", Task{Kind: KindSVTrending, Key: "trending"}, realAll, "real_shortvideo.trending_feed.json"},
		{"real popular videos", Task{Kind: KindSVPopularVideos, Key: "popular_videos"}, nil, "real_shortvideo.popular_videos.json"},
		{"real popular creators", Task{Kind: KindSVPopularCreators, Key: "popular_creators"}, realAll, "real_shortvideo.popular_creators.json"},
		{"real popular creators, no link", Task{Kind: KindSVPopularCreators, Key: "popular_creators"}, nil, "real_shortvideo.popular_creators.no_link.json"},
		{"real live", Task{Kind: KindSVLive, Key: "thejustalex"}, realAll, "real_shortvideo.live.json"},
		{"real photo profile", Task{Kind: KindPSProfile, Key: "adrianhorning"}, realAll, "real_photosocial.profile.json"},
		{"real photo profile, trimmed", Task{Kind: KindPSProfile, Key: "adrianhorning"}, nil, "real_photosocial.profile.trimmed.json"},
		{"real comments", Task{Kind: KindPSComments, Key: "https://www.instagram.com/p/DOq6eV6iIgD/", MaxPages: 5}, realAll, "real_photosocial.comments.json"},
		{"real reels search", Task{Kind: KindPSReelsSearch, Key: "dogs", MaxPages: 5}, []string{"reel_comments", "reel_transcripts"}, "real_photosocial.reels_search.json"},
		{"real transcript", Task{Kind: KindPSTranscript, Key: "https://www.instagram.com/reel/DHsD6HGqJhp/"}, realAll, "real_photosocial.transcript.json"},
		{"real embed", Task{Kind: KindPSEmbed, Key: "adrianhorning"}, realAll, "real_photosocial.embed.json"},
		{"real highlight", Task{Kind: KindPSHighlight, Key: "18067016518767507"}, realAll, "real_photosocial.highlight.json"},
		// The real service's own endpoints (issue 27).
		{"real profile, videos on", Task{Kind: KindSVProfile, Key: "stoolpresidente"}, contentEdges, "real_shortvideo.profile.json"},
		{"real profile videos", Task{Kind: KindSVProfileVideos, Key: "stoolpresidente", Params: realFollow, MaxPages: 5}, contentEdges, "real_shortvideo.profile_videos.json"},
		{"real profile videos, trimmed", Task{Kind: KindSVProfileVideos, Key: "stoolpresidente", Params: realFollow, MaxPages: 5}, contentEdges, "real_shortvideo.profile_videos.trimmed.json"},
		{"real video", Task{Kind: KindSVVideo, Key: "https://www.tiktok.com/@stoolpresidente/video/7463250363559218474"}, contentEdges, "real_shortvideo.video.json"},
		{"real video comments", Task{Kind: KindSVVideoComments, Key: "https://www.tiktok.com/@stoolpresidente/video/7463250363559218474", MaxPages: 5}, contentEdges, "real_shortvideo.video_comments.json"},
		{"real video comments, trimmed", Task{Kind: KindSVVideoComments, Key: "https://www.tiktok.com/@stoolpresidente/video/7517114944362499342", MaxPages: 5}, contentEdges, "real_shortvideo.video_comments.trimmed.json"},
		{"real video comment replies", Task{Kind: KindSVCommentReplies, Key: "7623828115408274207", Params: map[string]string{"url": "https://www.tiktok.com/@stoolpresidente/video/7623818255903329566"}, MaxPages: 5}, contentEdges, "real_shortvideo.comment_replies.json"},
		{"real video transcript", Task{Kind: KindSVTranscript, Key: "https://www.tiktok.com/@stoolpresidente/video/7499229683859426602"}, contentEdges, "real_shortvideo.transcript.json"},
		{"real photo profile, lists on", Task{Kind: KindPSProfile, Key: "adrianhorning"}, contentEdges, "real_photosocial.profile.json"},
		{"real user posts", Task{Kind: KindPSUserPosts, Key: "barstoolsports", Params: map[string]string{"handle": "barstoolsports"}, MaxPages: 5}, contentEdges, "real_photosocial.user_posts.json"},
		{"real user posts, trimmed", Task{Kind: KindPSUserPosts, Key: "barstoolsports", Params: map[string]string{"handle": "barstoolsports"}, MaxPages: 5}, contentEdges, "real_photosocial.user_posts.trimmed.json"},
		{"real user reels", Task{Kind: KindPSUserReels, Key: "adrianhorning", Params: map[string]string{"handle": "adrianhorning"}, MaxPages: 5}, contentEdges, "real_photosocial.user_reels.json"},
		{"real user reels, trimmed", Task{Kind: KindPSUserReels, Key: "jane", Params: map[string]string{"handle": "jane"}, MaxPages: 5}, contentEdges, "real_photosocial.user_reels.trimmed.json"},
		{"real post", Task{Kind: KindPSPost, Key: "https://www.instagram.com/p/DF5s0duxDts/"}, contentEdges, "real_photosocial.post.json"},
		{"real post, trimmed", Task{Kind: KindPSPost, Key: "https://www.instagram.com/reel/DLDXI0fylTC/"}, contentEdges, "real_photosocial.post.trimmed.json"},
		{"real post comment replies", Task{Kind: KindPSCommentReplies, Key: "18038110327814211", Params: map[string]string{"url": "https://www.instagram.com/reel/C8rKmYvsrck"}, MaxPages: 5}, contentEdges, "real_photosocial.comment_replies.json"},
		{"real highlights", Task{Kind: KindPSHighlights, Key: "jane"}, contentEdges, "real_photosocial.highlights.json"},
		{"real comments, replies on", Task{Kind: KindPSComments, Key: "https://www.instagram.com/p/DOq6eV6iIgD/", MaxPages: 5}, contentEdges, "real_photosocial.comments.json"},
		{"real comments, more replies", Task{Kind: KindPSComments, Key: "https://www.instagram.com/p/DOq6eV6iIgD/", MaxPages: 5}, contentEdges, "real_photosocial.comments.more_replies.json"},
	}
	// contentEdges turns on every edge of the real service's content.
	contentEdges = []string{"videos", "video_comments", "video_transcripts", "comment_replies", "posts", "reels", "highlights",
		"highlight_details", "post_comments", "post_transcripts", "video_authors"}
)

// realCase maps the real case named name (from realCases).
func realCase(t *testing.T, name string) *Result {
	t.Helper()
	for _, c := range realCases {
		if c.name == name {
			res, err := mapFixture(t, testJob{on: c.on, maxPages: 5, preset: sources.PresetScrapeCreators}, c.task, c.file)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("no real case %q", name)
	return nil
}

// TestMappingRealFacts checks, beyond the golden counts, the values that
// the real service's shapes make easy to lose.
func TestMappingRealFacts(t *testing.T) {
	t.Parallel()
	t.Run("a follow page's next cursor is its min_time", func(t *testing.T) {
		for name, want := range map[string]string{"real followers": "1737751140", "real followers, trimmed": "1750289478",
			"real following": "1694905758", "real following, trimmed": "1734010829"} {
			if res := realCase(t, name); res.Next != want || res.Stop != "" {
				t.Errorf("%s: next %q stop %q, want next %q and the walk going on", name, res.Next, res.Stop, want)
			}
		}
		if res := realCase(t, "real followers, last page"); res.Stop != "end" {
			t.Errorf("has_more 0: stop %q, want end", res.Stop)
		}
		follows := sinks.Rows[sinks.SVFollow](&realCase(t, "real following").Batch)
		if len(follows) != 2 || follows[0].Follower != "stoolpresidente" || follows[0].Followee != "barstoolgruden" {
			t.Errorf("followings = %+v", follows)
		}
	})
	t.Run("the song id keeps its digits", func(t *testing.T) {
		for _, name := range []string{"real song", "real song, no id_str"} {
			songs := sinks.Rows[sinks.SVSong](&realCase(t, name).Batch)
			if len(songs) != 1 || songs[0].SongID != "6717159721276540930" || deref(songs[0].Title) != "Different (Acoustic)" ||
				deref(songs[0].AuthorName) != "Micah Tyler" || songs[0].CoverLargeURL == nil {
				t.Errorf("%s: songs = %+v", name, songs)
			}
			snaps := sinks.Rows[sinks.SVSongSnapshot](&realCase(t, name).Batch)
			if len(snaps) != 1 || snaps[0].UsageCount == nil || *snaps[0].UsageCount != 358 {
				t.Errorf("%s: snapshots = %+v", name, snaps)
			}
		}
	})
	t.Run("trending videos without an author handle are stored", func(t *testing.T) {
		res := realCase(t, "real trending feed")
		videos := sinks.Rows[sinks.SVVideo](&res.Batch)
		const key = "secuid:MS4wLjABAAAANbZGXVN-iwJvesiIVGgD_nRTpyI4PGOXHEbt01cN9U5S3Ih21qUe5WQ9ztsn2J6h"
		if len(videos) != 2 || res.Drops.N != 0 || videos[0].VideoID != "7540000301621841183" || deref(videos[0].AuthorUniqueID) != key {
			t.Fatalf("videos = %+v, drops %d", videos, res.Drops.N)
		}
		users := sinks.Rows[sinks.SVUser](&res.Batch)
		if len(users) != 1 || users[0].UniqueID != key || deref(users[0].UserID) != "6754760670083138566" || deref(users[0].Nickname) != "Bre 🤍" {
			t.Errorf("users = %+v", users)
		}
	})
	t.Run("hashtag search videos land as that search's results", func(t *testing.T) {
		res := realCase(t, "real hashtag search")
		results := sinks.Rows[sinks.SVSearchResult](&res.Batch)
		if len(results) != 1 || results[0].Kind != sinks.SearchHashtag || results[0].QueryKey != sinks.QueryKey("fyp", nil) ||
			results[0].Type != sinks.ResultVideo || deref(results[0].VideoID) != "6862153058223197445" || results[0].Rank != 1 {
			t.Errorf("results = %+v", results)
		}
		// The hashtags a video carries (cha_list) are stored as such, partial
		// (no counters), linked to the video: never as search results.
		tags, links := sinks.Rows[sinks.SVHashtag](&res.Batch), sinks.Rows[sinks.SVVideoHashtag](&res.Batch)
		if len(tags) != 1 || tags[0].Name != "fyp" || !tags[0].Partial || len(tags[0].Raw) == 0 ||
			len(links) != 1 || links[0] != (sinks.SVVideoHashtag{VideoID: "6862153058223197445", Name: "fyp"}) {
			t.Errorf("hashtags %+v, links %+v", tags, links)
		}
		videos := sinks.Rows[sinks.SVVideo](&res.Batch)
		if len(videos) != 1 || deref(videos[0].AuthorUniqueID) != "bellapoarch" || deref(videos[0].SongID) != "6840839890826038022" {
			t.Errorf("videos = %+v", videos)
		}
	})
	t.Run("top search posts are videos with their ISO times", func(t *testing.T) {
		res := realCase(t, "real top search")
		videos := sinks.Rows[sinks.SVVideo](&res.Batch)
		if len(videos) != 2 || videos[0].CreateTime == nil || *videos[0].CreateTime != 1774326345 {
			t.Errorf("videos = %+v", videos)
		}
	})
}

// TestMappingRealObjects checks the real service's object answers and
// photo-sharing lists, as TestMappingRealFacts does.
func TestMappingRealObjects(t *testing.T) {
	t.Parallel()
	t.Run("comments' created_at is parsed", func(t *testing.T) {
		comments := sinks.Rows[sinks.PSComment](&realCase(t, "real comments").Batch)
		if len(comments) != 2 || comments[0].CreatedAt != 1758042184 || comments[0].Username != "catherina_thijs" ||
			comments[0].LikeCount == nil || *comments[0].LikeCount != 0 || deref(comments[0].CommentID) != "18051843701642870" {
			t.Errorf("comments = %+v", comments)
		}
	})
	t.Run("reels: shortcode as code, taken_at, no play count", func(t *testing.T) {
		res := realCase(t, "real reels search")
		reels := sinks.Rows[sinks.PSReel](&res.Batch)
		if len(reels) != 3 || reels[0].Code != "DOq6eV6iIgD" || reels[0].TakenAt == nil || *reels[0].TakenAt != 1758041805 {
			t.Errorf("reels = %+v", reels)
		}
		snaps := sinks.Rows[sinks.PSReelSnapshot](&res.Batch)
		if snaps[0].PlayCount != nil || snaps[0].LikeCount == nil || *snaps[0].LikeCount != 3487 {
			t.Errorf("snapshots = %+v", snaps)
		}
	})
	t.Run("live reads liveRoom", func(t *testing.T) {
		live := sinks.Rows[sinks.SVLiveStatus](&realCase(t, "real live").Batch)
		want := sinks.SVLiveStatus{UniqueID: "thejustalex", IsLive: ptr(true), Title: ptr("6'13 Grateful Streamer"), ViewerCount: ptr(int64(804)), StartTime: ptr(int64(1751744708))}
		if len(live) != 1 || live[0].UniqueID != want.UniqueID || *live[0].IsLive != *want.IsLive || deref(live[0].Title) != *want.Title ||
			*live[0].ViewerCount != *want.ViewerCount || *live[0].StartTime != *want.StartTime {
			t.Errorf("live = %+v", live)
		}
	})
	t.Run("popular creators: handle from tt_link, counts from follower_cnt", func(t *testing.T) {
		creators := sinks.Rows[sinks.SVPopularCreator](&realCase(t, "real popular creators").Batch)
		if len(creators) != 2 || creators[0].UniqueID != "sanievv_" || creators[0].FollowerCount == nil || *creators[0].FollowerCount != 431339 {
			t.Errorf("creators = %+v", creators)
		}
	})
	t.Run("highlight items keep their id", func(t *testing.T) {
		res := realCase(t, "real highlight")
		h := sinks.Rows[sinks.PSHighlight](&res.Batch)
		items := sinks.Rows[sinks.PSHighlightItem](&res.Batch)
		if len(h) != 1 || h[0].HighlightID != "18067016518767507" || deref(h[0].OwnerUsername) != "jane" ||
			len(items) != 1 || deref(items[0].ItemID) != "3565907942018983442_21393171" || items[0].VideoURL == nil {
			t.Errorf("highlight = %+v, items = %+v", h, items)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestMappingRealContent checks, beyond the golden counts, the values the
// real service's own endpoints' samples carry (issue 27).
func TestMappingRealContent(t *testing.T) {
	t.Parallel()
	t.Run("a video's comments and their replies keep their thread", func(t *testing.T) {
		c := sinks.Rows[sinks.SVComment](&realCase(t, "real video comments").Batch)
		if len(c) != 1 || c[0].CommentID != "7463276288959824682" || c[0].VideoID != "7463250363559218474" || c[0].ParentID != nil ||
			deref(c[0].AuthorUniqueID) != "tmoneyhoney18" || *c[0].CreateTime != 1737679448 || *c[0].DiggCount != 1015 || *c[0].ReplyCount != 9 {
			t.Errorf("comments = %+v", c)
		}
		r := sinks.Rows[sinks.SVComment](&realCase(t, "real video comment replies").Batch)
		if len(r) != 2 || deref(r[0].ParentID) != "7623828115408274207" || r[0].VideoID != "7623818255903329566" || r[0].ReplyCount != nil ||
			deref(r[1].AuthorUniqueID) != "mbb_bell" {
			t.Errorf("replies = %+v", r)
		}
	})
	t.Run("a video by URL: its counters as a snapshot", func(t *testing.T) {
		res := realCase(t, "real video")
		v, s := sinks.Rows[sinks.SVVideo](&res.Batch), sinks.Rows[sinks.SVVideoSnapshot](&res.Batch)
		if len(v) != 1 || v[0].VideoID != "7463250363559218474" || deref(v[0].AuthorUniqueID) != "stoolpresidente" ||
			len(s) != 1 || *s[0].PlayCount != 355687 || *s[0].CommentCount != 270 {
			t.Errorf("videos %+v, snapshots %+v", v, s)
		}
	})
	t.Run("a transcript is WEBVTT with speech", func(t *testing.T) {
		tr := sinks.Rows[sinks.SVTranscript](&realCase(t, "real video transcript").Batch)
		if len(tr) != 1 || tr[0].VideoID != "7499229683859426602" || !tr[0].HasSpeech || !strings.HasPrefix(deref(tr[0].Text), "WEBVTT") {
			t.Errorf("transcripts = %+v", tr)
		}
	})
	t.Run("a profile's posts: code, pk, caption, counters", func(t *testing.T) {
		res := realCase(t, "real user posts")
		p, s := sinks.Rows[sinks.PSPost](&res.Batch), sinks.Rows[sinks.PSPostSnapshot](&res.Batch)
		if len(p) != 1 || p[0].Code != "DH3tWudxIKB" || deref(p[0].PostID) != "3600545900919030401" || deref(p[0].OwnerUsername) != "barstoolsports" ||
			!strings.HasPrefix(deref(p[0].Caption), "Dana is neglecting") || *p[0].TakenAt != 1743438570 || deref(p[0].ProductType) != "clips" ||
			len(s) != 1 || *s[0].LikeCount != 387 || *s[0].CommentCount != 12 || *s[0].PlayCount != 35499 {
			t.Errorf("posts %+v, snapshots %+v", p, s)
		}
	})
	t.Run("a profile's reels: the media's pk, as the reels search's ids", func(t *testing.T) {
		res := realCase(t, "real user reels")
		r, s := sinks.Rows[sinks.PSReel](&res.Batch), sinks.Rows[sinks.PSReelSnapshot](&res.Batch)
		if len(r) != 1 || r[0].ReelID != "3540614075954356349" || r[0].Code != "DEiyb48AeB9" || deref(r[0].OwnerUsername) != "adrianhorning" ||
			len(s) != 1 || *s[0].PlayCount != 3865 || *s[0].LikeCount != 126 {
			t.Errorf("reels %+v, snapshots %+v", r, s)
		}
		if l := sinks.Rows[sinks.PSProfileReel](&res.Batch); len(l) != 1 || l[0] != (sinks.PSProfileReel{Username: "adrianhorning", ReelID: "3540614075954356349"}) {
			t.Errorf("links %+v", l)
		}
	})
	t.Run("a post by URL reads xdt_shortcode_media", func(t *testing.T) {
		res := realCase(t, "real post")
		p, s := sinks.Rows[sinks.PSPost](&res.Batch), sinks.Rows[sinks.PSPostSnapshot](&res.Batch)
		if len(p) != 1 || p[0].Code != "DF5s0duxDts" || deref(p[0].PostID) != "3565077699422862188" || !strings.HasPrefix(deref(p[0].Caption), "I built my own") ||
			len(s) != 1 || *s[0].PlayCount != 4651 || *s[0].LikeCount != 153 || *s[0].CommentCount != 17 {
			t.Errorf("posts %+v, snapshots %+v", p, s)
		}
	})
	t.Run("replies beyond those shown are followed, shown ones stored with their parent", func(t *testing.T) {
		res := realCase(t, "real comments, more replies")
		var replies int
		for _, c := range sinks.Rows[sinks.PSComment](&res.Batch) {
			if deref(c.ParentID) == "18051843701642870" {
				replies++
			}
		}
		if replies != 3 || len(res.Children) != 2 || res.Children[0].Params["url"] != "https://www.instagram.com/p/DOq6eV6iIgD/" {
			t.Errorf("%d replies stored, children %+v", replies, res.Children)
		}
	})
}
