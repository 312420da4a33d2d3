package kinds

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/sources"
)

// The job file's expand section.

// Expand holds the expansion edges; a nil edge is not followed.
type Expand struct {
	// Followers and Following: a profile -> its followers / following lists.
	Followers *Edge `yaml:"followers" json:"followers,omitempty"`
	Following *Edge `yaml:"following" json:"following,omitempty"`
	// FollowerProfiles: a follower or following entry -> its profile, one
	// hop deeper (snowball sampling).
	FollowerProfiles *Edge `yaml:"follower_profiles" json:"follower_profiles,omitempty"`
	// SongVideos: a song -> the videos using it.
	SongVideos *Edge `yaml:"song_videos" json:"song_videos,omitempty"`
	// VideoAuthors: any video seen -> its author's profile, one hop deeper.
	VideoAuthors *Edge `yaml:"video_authors" json:"video_authors,omitempty"`
	// SearchResults: a keyword, hashtag or top search result -> its user's
	// profile, its video's author's profile, or its sound's song, one hop
	// deeper.
	SearchResults *Edge `yaml:"search_results" json:"search_results,omitempty"`
	// Comments bounds the comment lists of post seeds (always fetched: a
	// post seed is its comments) and of reels.
	Comments *Edge `yaml:"comments" json:"comments,omitempty"`
	// ReelComments and ReelTranscripts: a reel found by a reels search ->
	// its comments / its transcript, one hop deeper.
	ReelComments    *Edge `yaml:"reel_comments" json:"reel_comments,omitempty"`
	ReelTranscripts *Edge `yaml:"reel_transcripts" json:"reel_transcripts,omitempty"`

	// The real service's content (issue 27; no such endpoints in the
	// contract, so these keys are refused under its preset).
	//
	// Videos: a short-video profile -> its videos, newest first.
	Videos *Edge `yaml:"videos" json:"videos,omitempty"`
	// VideoComments and VideoTranscripts: a video of a profile's list or a
	// video seed -> its comments / its transcript, one hop deeper.
	VideoComments    *Edge `yaml:"video_comments" json:"video_comments,omitempty"`
	VideoTranscripts *Edge `yaml:"video_transcripts" json:"video_transcripts,omitempty"`
	// CommentReplies: a comment (of a video, or of a post with more
	// replies than its answer carries) -> its replies, a list of the same
	// thread, at the comment's depth.
	CommentReplies *Edge `yaml:"comment_replies" json:"comment_replies,omitempty"`
	// Posts, Reels and Highlights: a photo-sharing profile -> its posts,
	// its reels (newest first), its highlights.
	Posts      *Edge `yaml:"posts" json:"posts,omitempty"`
	Reels      *Edge `yaml:"reels" json:"reels,omitempty"`
	Highlights *Edge `yaml:"highlights" json:"highlights,omitempty"`
	// HighlightDetails: a highlight a profile lists -> its detail and
	// media, one hop deeper.
	HighlightDetails *Edge `yaml:"highlight_details" json:"highlight_details,omitempty"`
	// PostComments and PostTranscripts: a post or reel of a profile's
	// lists, or a media seed -> its comments / its transcript (videos
	// only), one hop deeper.
	PostComments    *Edge `yaml:"post_comments" json:"post_comments,omitempty"`
	PostTranscripts *Edge `yaml:"post_transcripts" json:"post_transcripts,omitempty"`
}

// edges names every edge, for defaults and validation.
func (e *Expand) Edges() map[string]**Edge {
	return map[string]**Edge{
		"followers": &e.Followers, "following": &e.Following, "follower_profiles": &e.FollowerProfiles,
		"song_videos": &e.SongVideos, "video_authors": &e.VideoAuthors, "search_results": &e.SearchResults,
		"comments": &e.Comments, "reel_comments": &e.ReelComments, "reel_transcripts": &e.ReelTranscripts,
		"videos": &e.Videos, "video_comments": &e.VideoComments, "video_transcripts": &e.VideoTranscripts,
		"comment_replies": &e.CommentReplies, "posts": &e.Posts, "reels": &e.Reels, "highlights": &e.Highlights,
		"highlight_details": &e.HighlightDetails, "post_comments": &e.PostComments, "post_transcripts": &e.PostTranscripts,
	}
}

// Edge configures one expansion edge.
type Edge struct {
	// MaxPages bounds each list walked along the edge (default:
	// limits.max_pages). Edges to single objects ignore it.
	MaxPages int `yaml:"max_pages" json:"max_pages"`
	// StopAtSeen ends a newest-first list along the edge at its first page
	// holding only entries stored by earlier runs (followers, following,
	// comments, song_videos; see Reuse.FullWalkEvery).
	StopAtSeen bool `yaml:"stop_at_seen" json:"stop_at_seen,omitempty"`
	// RefreshAfter is the refresh_after window of the entities fetched
	// along the edge (edges to an entity fetched whole), overriding
	// reuse.refresh_after. On a content edge (ChangeKeys) it is the
	// longest a list goes unwalked while its counter stays the same.
	RefreshAfter sources.Duration `yaml:"refresh_after" json:"refresh_after,omitempty"`
	// PostedAfter and PostedBefore are the date window of a dated list
	// along the edge (window.go), as written: a date or a duration back
	// from when the job was loaded; after and before, resolved
	// (ResolveWindow).
	PostedAfter   string    `yaml:"posted_after" json:"posted_after,omitempty"`
	PostedBefore  string    `yaml:"posted_before" json:"posted_before,omitempty"`
	after, before time.Time `yaml:"-"`
	// ChangedOnly (content edges only, ChangeKeys; nil: true) buys a list
	// along the edge again only when the counter on its parent page moved
	// since its last walk, it was never walked, or RefreshAfter passed;
	// false buys it again whenever its parent is walked.
	ChangedOnly *bool `yaml:"changed_only" json:"changed_only,omitempty"`
}

// Changed reports whether lists along e are bought again only when their
// counter moved (changed_only, default true).
func (e *Edge) Changed() bool { return e != nil && (e.ChangedOnly == nil || *e.ChangedOnly) }

// edgeDecl declares one expansion edge once: the tasks of which kinds make
// tasks of which kind, when the job turns it on. A mapping follows it
// (mapper.follow); the plan's credit bound, the depth of the tasks it
// makes, the refresh_after window they get and which expand keys accept
// stop_at_seen and refresh_after are all read from these declarations.
// Adding an edge is one declaration plus the mapping that follows it.
type edgeDecl struct {
	// Key is the expand section's key that turns the edge on; its
	// refresh_after, on a hop to an entity fetched whole, is the window
	// of the tasks found along it.
	Key string
	// From are the kinds whose tasks follow the edge; To the kind of the
	// tasks it makes.
	From []string
	To   string
	// Hop: To is another entity, one level deeper (max_depth counts it);
	// else To is a list of the same entity, at the task's depth.
	Hop bool
	// PerEntry: a task makes one To per entry of its pages (the plan's
	// bound); else one per task.
	PerEntry bool
	// Own lists kinds of From whose entries are their own entity (a
	// profile's videos are by the profile): the plan's bound counts
	// nothing for them.
	Own []string
	// Pages, when set, is the expand key whose max_pages bounds the lists
	// the edge makes, in place of their kind's (a post's comments found
	// along post_comments take post_comments' limit, not comments').
	Pages string
	// Counted: the task it makes is a content list whose parent page
	// carries its counter (a video's comment count, a comment's reply
	// count): changed_only and refresh_after decide whether it is bought
	// again (reuse.go, ChangeRule).
	Counted bool
}

// edgeDecls holds every edge in declaration order: where two edges lead
// from one kind to another, the first that is on gives the window.
var edgeDecls []*edgeDecl

// declareEdge adds e to the declarations.
func declareEdge(e edgeDecl) *edgeDecl {
	d := &e
	edgeDecls = append(edgeDecls, d)
	return d
}

// The edges of both platforms.
var (
	edgeFollowers = declareEdge(edgeDecl{Key: "followers", From: []string{KindSVProfile}, To: KindSVFollowers})
	edgeFollowing = declareEdge(edgeDecl{Key: "following", From: []string{KindSVProfile}, To: KindSVFollowing})
	// A follower or following entry -> its profile (snowball sampling).
	edgeFollowerProfiles = declareEdge(edgeDecl{Key: "follower_profiles", From: []string{KindSVFollowers, KindSVFollowing},
		To: KindSVProfile, Hop: true, PerEntry: true})
	// A keyword, hashtag or top search Result -> its user's or its video's
	// author's profile (the real hashtag search answers videos); a top
	// search's sound -> its song. Declared before video_authors: a profile
	// found by a search takes this edge's window.
	edgeSearchProfiles = declareEdge(edgeDecl{Key: "search_results", From: []string{KindSVKeywordSearch, KindSVHashtagSearch, KindSVTopSearch},
		To: KindSVProfile, Hop: true, PerEntry: true})
	edgeSearchSongs = declareEdge(edgeDecl{Key: "search_results", From: []string{KindSVTopSearch},
		To: KindSVSong, Hop: true, PerEntry: true})
	// Any video seen -> its author's profile.
	edgeVideoAuthors = declareEdge(edgeDecl{Key: "video_authors",
		From: []string{KindSVKeywordSearch, KindSVHashtagSearch, KindSVTopSearch, KindSVSongVideos, KindSVTrending, KindSVPopularVideos, KindSVProfile,
			KindSVProfileVideos, KindSVVideo},
		To: KindSVProfile, Hop: true, PerEntry: true, Own: []string{KindSVProfile, KindSVProfileVideos}})
	edgeSongVideos = declareEdge(edgeDecl{Key: "song_videos", From: []string{KindSVSong}, To: KindSVSongVideos})
	// A reel found by a reels search -> its comments, its transcript.
	edgeReelComments = declareEdge(edgeDecl{Key: "reel_comments", From: []string{KindPSReelsSearch},
		To: KindPSComments, Hop: true, PerEntry: true, Counted: true})
	edgeReelTranscripts = declareEdge(edgeDecl{Key: "reel_transcripts", From: []string{KindPSReelsSearch},
		To: KindPSTranscript, Hop: true, PerEntry: true})

	// The real service's content. A profile -> its videos; a video of the
	// list -> its comments and transcript; a video seed -> the same, once.
	edgeVideos               = declareEdge(edgeDecl{Key: "videos", From: []string{KindSVProfile}, To: KindSVProfileVideos})
	edgeVideoComments        = declareEdge(edgeDecl{Key: "video_comments", From: []string{KindSVProfileVideos}, To: KindSVVideoComments, Hop: true, PerEntry: true, Counted: true})
	edgeVideoTranscripts     = declareEdge(edgeDecl{Key: "video_transcripts", From: []string{KindSVProfileVideos}, To: KindSVTranscript, Hop: true, PerEntry: true})
	edgeSeedVideoComments    = declareEdge(edgeDecl{Key: "video_comments", From: []string{KindSVVideo}, To: KindSVVideoComments, Hop: true, Counted: true})
	edgeSeedVideoTranscripts = declareEdge(edgeDecl{Key: "video_transcripts", From: []string{KindSVVideo}, To: KindSVTranscript, Hop: true})
	// A comment -> its replies: a list of the comment's thread, at its
	// depth, one per comment with replies.
	edgeVideoCommentReplies = declareEdge(edgeDecl{Key: "comment_replies", From: []string{KindSVVideoComments}, To: KindSVCommentReplies, PerEntry: true, Counted: true})
	edgePostCommentReplies  = declareEdge(edgeDecl{Key: "comment_replies", From: []string{KindPSComments}, To: KindPSCommentReplies, PerEntry: true, Counted: true})
	// A photo-sharing profile -> its posts, reels and highlights; a
	// highlight it lists -> the highlight's detail.
	edgePosts            = declareEdge(edgeDecl{Key: "posts", From: []string{KindPSProfile}, To: KindPSUserPosts})
	edgeReels            = declareEdge(edgeDecl{Key: "reels", From: []string{KindPSProfile}, To: KindPSUserReels})
	edgeHighlights       = declareEdge(edgeDecl{Key: "highlights", From: []string{KindPSProfile}, To: KindPSHighlights})
	edgeHighlightDetails = declareEdge(edgeDecl{Key: "highlight_details", From: []string{KindPSHighlights}, To: KindPSHighlight, Hop: true, PerEntry: true})
	// A post or reel of a profile's lists -> its comments and transcript; a
	// media seed -> the same, once.
	edgePostComments        = declareEdge(edgeDecl{Key: "post_comments", From: []string{KindPSUserPosts, KindPSUserReels}, To: KindPSComments, Hop: true, PerEntry: true, Pages: "post_comments", Counted: true})
	edgePostTranscripts     = declareEdge(edgeDecl{Key: "post_transcripts", From: []string{KindPSUserPosts, KindPSUserReels}, To: KindPSTranscript, Hop: true, PerEntry: true})
	edgeSeedPostComments    = declareEdge(edgeDecl{Key: "post_comments", From: []string{KindPSPost}, To: KindPSComments, Hop: true, Pages: "post_comments", Counted: true})
	edgeSeedPostTranscripts = declareEdge(edgeDecl{Key: "post_transcripts", From: []string{KindPSPost}, To: KindPSTranscript, Hop: true})
)

// expandFields indexes the fields of Expand by their job-file key.
var expandFields = yamlstrict.Fields(reflect.TypeFor[Expand]())

// Edge is the job's configuration of the expand key (nil: off).
func (e *Expand) Edge(key string) *Edge {
	idx, ok := expandFields[key]
	if !ok {
		panic("kinds: no expand key " + key)
	}
	return reflect.ValueOf(e).Elem().FieldByIndex(idx).Interface().(*Edge)
}

// on reports whether the job follows the edge.
func (d *edgeDecl) on(j Job) bool { return j.Edge(d.Key) != nil }

// from reports whether tasks of kind follow the edge.
func (d *edgeDecl) from(kind string) bool { return slices.Contains(d.From, kind) }

// task is the task the edge makes from t, for key: at t's depth, or one
// level deeper with the window of the edge it was found along.
func (d *edgeDecl) task(j Job, t *Task, key string, params map[string]string) NewTask {
	var nt NewTask
	if !d.Hop {
		nt = named(d.To).task(j, key, params, t.Depth)
	} else {
		nt = named(d.To).task(j, key, params, t.Depth+1)
		nt.RefreshAfter = hopWindow(j, t.Kind, d.To)
	}
	if d.Counted {
		// A content list's refresh_after is its edge's own: the longest
		// it goes unwalked while its counter stays the same.
		nt.RefreshAfter = time.Duration(j.Edge(d.Key).RefreshAfter)
	}
	if d.Pages != "" {
		nt.MaxPages = j.ListPages(j.Edge(d.Pages))
	}
	return nt
}

// follow adds the task the edge makes from t for key to res, when the job
// turns the edge on.
func (m *mapper) follow(res *Result, t *Task, d *edgeDecl, key string, params map[string]string) {
	if d.on(m.job) {
		res.Children = append(res.Children, d.task(m.job, t, key, params))
	}
}

// ParamCount is the task parameter of a content list found along a
// counted edge whose changed_only is on: the counter its parent page
// showed (ChangeRule).
const ParamCount = "count"

// followCounted is follow along a counted edge: when the edge's
// changed_only is on and the parent page sent the counter, the task
// carries it (ParamCount), to be compared with the one of its last walk,
// and the price of its page (NewTask.Credits), for the lease order.
func (m *mapper) followCounted(res *Result, t *Task, d *edgeDecl, key string, params map[string]string, count sources.Int64) {
	if e := m.job.Edge(d.Key); count.Valid && e.Changed() {
		params = maps.Clone(params)
		if params == nil {
			params = map[string]string{}
		}
		params[ParamCount] = strconv.FormatInt(count.V, 10)
		if d.on(m.job) {
			nt := d.task(m.job, t, key, params)
			nt.Credits = max(m.job.Route(d.To).Credits, 1)
			res.Children = append(res.Children, nt)
		}
		return
	}
	m.follow(res, t, d, key, params)
}

// hopWindow is the refresh_after window of a task of kind child found by a
// task of kind parent: that of the first edge from parent to child the job
// turns on, when the file sets one, else the job's. A task found along
// several edges keeps the window of the first that found it.
func hopWindow(j Job, parent, child string) time.Duration {
	for _, d := range edgeDecls {
		if d.Hop && d.To == child && d.from(parent) && d.on(j) {
			return j.Window("expand." + d.Key)
		}
	}
	return j.Window("")
}

// RefreshKeys are the expand keys whose refresh_after applies: hops to an
// entity fetched whole (its kind has a FreshRule); StopAtSeenKeys those
// whose stop_at_seen applies: the page limits of newest-first lists (their
// kind has Seen). Sorted, for messages.
func RefreshKeys() []string {
	var keys []string
	for _, d := range edgeDecls {
		if d.Hop && named(d.To).Fresh != nil {
			keys = append(keys, d.Key)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// ChangeKeys are the content edges (their tasks' counters decide whether
// they are bought again): those changed_only applies to, and whose
// refresh_after is a list's maximum age. Sorted, for messages.
func ChangeKeys() []string {
	var keys []string
	for _, d := range edgeDecls {
		if d.Counted {
			keys = append(keys, d.Key)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// ChangedKinds are the content list kinds job j buys again only when their
// counter moved: those an edge whose changed_only is on leads to. Sorted.
func ChangedKinds(j Job) []string {
	var out []string
	for _, d := range edgeDecls {
		if d.Counted && j.Edge(d.Key).Changed() {
			out = append(out, d.To)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func StopAtSeenKeys() []string {
	var keys []string
	for _, k := range registry {
		if k.Seen != nil && k.Pages != "" {
			keys = append(keys, k.Pages)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// BoundEdge is how tasks of a kind make tasks of another, for the plan's
// bound: the edges between the two kinds, any of which the job may turn on
// (a keyword search's profiles are found as results and as authors: once).
type BoundEdge struct {
	Child    string
	edges    []*edgeDecl
	PerEntry bool
	Hop      bool
}

// MaxPages is the page limit of the lists the edges make in job j, when
// an edge the job turns on gives its own (edgeDecl.Pages); 0: the child
// kind's.
func (b BoundEdge) MaxPages(j Job) int {
	for _, d := range b.edges {
		if d.on(j) && d.Pages != "" {
			return j.ListPages(j.Edge(d.Pages))
		}
	}
	return 0
}

// On reports whether job j follows any of the edges.
func (b BoundEdge) On(j Job) bool {
	return slices.ContainsFunc(b.edges, func(d *edgeDecl) bool { return d.on(j) })
}

// boundEdges are the edges from each kind, grouped by the kind they lead
// to, in declaration order; an edge's Own kinds count nothing.
var boundEdges = map[string][]BoundEdge{}

// BoundEdges are the ways tasks of kind make other tasks, for crawler
// plan's credit bound.
func BoundEdges(kind string) []BoundEdge { return boundEdges[kind] }

func init() {
	for _, d := range edgeDecls {
		if Of(d.To) == nil || expandFields[d.Key] == nil {
			panic(fmt.Sprintf("kinds: edge %s -> %s: unknown kind or expand key", d.Key, d.To))
		}
		for _, from := range d.From {
			if Of(from) == nil {
				panic("kinds: edge " + d.Key + " from unknown kind " + from)
			}
			if slices.Contains(d.Own, from) {
				continue
			}
			groups := boundEdges[from]
			i := slices.IndexFunc(groups, func(b BoundEdge) bool { return b.Child == d.To })
			if i < 0 {
				boundEdges[from] = append(groups, BoundEdge{Child: d.To, edges: []*edgeDecl{d}, PerEntry: d.PerEntry, Hop: d.Hop})
				continue
			}
			if groups[i].PerEntry != d.PerEntry || groups[i].Hop != d.Hop || groups[i].edges[0].Pages != d.Pages {
				panic("kinds: edges " + from + " -> " + d.To + " disagree on PerEntry, Hop or Pages")
			}
			groups[i].edges = append(groups[i].edges, d)
		}
	}
	for _, k := range registry {
		if k.Pages != "" && expandFields[k.Pages] == nil {
			panic("kinds: kind " + k.Name + " is bounded by unknown expand key " + k.Pages)
		}
	}
}
