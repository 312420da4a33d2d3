package pipeline

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
)

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
	// A keyword or top search result -> its user's or its video's author's
	// profile; a top search's sound -> its song. Declared before
	// video_authors: a profile found by a search takes this edge's window.
	edgeSearchProfiles = declareEdge(edgeDecl{Key: "search_results", From: []string{KindSVKeywordSearch, KindSVTopSearch},
		To: KindSVProfile, Hop: true, PerEntry: true})
	edgeSearchSongs = declareEdge(edgeDecl{Key: "search_results", From: []string{KindSVTopSearch},
		To: KindSVSong, Hop: true, PerEntry: true})
	// Any video seen -> its author's profile.
	edgeVideoAuthors = declareEdge(edgeDecl{Key: "video_authors",
		From: []string{KindSVKeywordSearch, KindSVTopSearch, KindSVSongVideos, KindSVTrending, KindSVPopularVideos, KindSVProfile},
		To:   KindSVProfile, Hop: true, PerEntry: true, Own: []string{KindSVProfile}})
	edgeSongVideos = declareEdge(edgeDecl{Key: "song_videos", From: []string{KindSVSong}, To: KindSVSongVideos})
	// A reel found by a reels search -> its comments, its transcript.
	edgeReelComments = declareEdge(edgeDecl{Key: "reel_comments", From: []string{KindPSReelsSearch},
		To: KindPSComments, Hop: true, PerEntry: true})
	edgeReelTranscripts = declareEdge(edgeDecl{Key: "reel_transcripts", From: []string{KindPSReelsSearch},
		To: KindPSTranscript, Hop: true, PerEntry: true})
)

// expandFields indexes the fields of Expand by their job-file key.
var expandFields = yamlstrict.Fields(reflect.TypeFor[Expand]())

// edge is the job's configuration of the expand key (nil: off).
func (e *Expand) edge(key string) *Edge {
	idx, ok := expandFields[key]
	if !ok {
		panic("pipeline: no expand key " + key)
	}
	return reflect.ValueOf(e).Elem().FieldByIndex(idx).Interface().(*Edge)
}

// on reports whether the job follows the edge.
func (d *edgeDecl) on(j *Job) bool { return j.Expand.edge(d.Key) != nil }

// from reports whether tasks of kind follow the edge.
func (d *edgeDecl) from(kind string) bool { return slices.Contains(d.From, kind) }

// task is the task the edge makes from t, for key: at t's depth, or one
// level deeper with the window of the edge it was found along.
func (d *edgeDecl) task(j *Job, t *Task, key string, params map[string]string) NewTask {
	if !d.Hop {
		return kindNamed(d.To).task(j, key, params, t.Depth)
	}
	nt := kindNamed(d.To).task(j, key, params, t.Depth+1)
	nt.RefreshAfter = j.hopWindow(t.Kind, d.To)
	return nt
}

// follow adds the task the edge makes from t for key to res, when the job
// turns the edge on.
func (m *mapper) follow(res *result, t *Task, d *edgeDecl, key string, params map[string]string) {
	if d.on(m.job) {
		res.Children = append(res.Children, d.task(m.job, t, key, params))
	}
}

// hopWindow is the refresh_after window of a task of kind child found by a
// task of kind parent: that of the first edge from parent to child the job
// turns on, when the file sets one, else the job's. A task found along
// several edges keeps the window of the first that found it.
func (j *Job) hopWindow(parent, child string) time.Duration {
	for _, d := range edgeDecls {
		if !d.Hop || d.To != child || !d.from(parent) || !d.on(j) {
			continue
		}
		if j.has("expand." + d.Key + ".refresh_after") {
			return time.Duration(j.Expand.edge(d.Key).RefreshAfter)
		}
		break
	}
	return time.Duration(j.Reuse.RefreshAfter)
}

// refreshKeys are the expand keys whose refresh_after applies: hops to an
// entity fetched whole (its kind has a FreshRule); stopAtSeenKeys those
// whose stop_at_seen applies: the page limits of newest-first lists (their
// kind has Seen). Sorted, for messages.
func refreshKeys() []string {
	var keys []string
	for _, d := range edgeDecls {
		if d.Hop && kindNamed(d.To).Fresh != nil {
			keys = append(keys, d.Key)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func stopAtSeenKeys() []string {
	var keys []string
	for _, k := range registry {
		if k.Seen != nil && k.Pages != "" {
			keys = append(keys, k.Pages)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// boundEdge is how tasks of a kind make tasks of another, for the plan's
// bound: the edges between the two kinds, any of which the job may turn on
// (a keyword search's profiles are found as results and as authors: once).
type boundEdge struct {
	child    string
	edges    []*edgeDecl
	perEntry bool
	hop      bool
}

func (b boundEdge) on(j *Job) bool {
	return slices.ContainsFunc(b.edges, func(d *edgeDecl) bool { return d.on(j) })
}

// boundEdges are the edges from each kind, grouped by the kind they lead
// to, in declaration order; an edge's Own kinds count nothing.
var boundEdges = map[string][]boundEdge{}

func init() {
	for _, d := range edgeDecls {
		if kindOf(d.To) == nil || expandFields[d.Key] == nil {
			panic(fmt.Sprintf("pipeline: edge %s -> %s: unknown kind or expand key", d.Key, d.To))
		}
		for _, from := range d.From {
			if kindOf(from) == nil {
				panic("pipeline: edge " + d.Key + " from unknown kind " + from)
			}
			if slices.Contains(d.Own, from) {
				continue
			}
			groups := boundEdges[from]
			i := slices.IndexFunc(groups, func(b boundEdge) bool { return b.child == d.To })
			if i < 0 {
				boundEdges[from] = append(groups, boundEdge{child: d.To, edges: []*edgeDecl{d}, perEntry: d.PerEntry, hop: d.Hop})
				continue
			}
			if groups[i].perEntry != d.PerEntry || groups[i].hop != d.Hop {
				panic("pipeline: edges " + from + " -> " + d.To + " disagree on PerEntry or Hop")
			}
			groups[i].edges = append(groups[i].edges, d)
		}
	}
	for _, k := range registry {
		if k.Pages != "" && expandFields[k.Pages] == nil {
			panic("pipeline: kind " + k.Name + " is bounded by unknown expand key " + k.Pages)
		}
	}
}
