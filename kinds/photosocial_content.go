package kinds

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

// The real service's photo-sharing content (issue 27), each kind declared
// once: a profile's posts and reels, one post by URL, the replies to a
// comment beyond those shown, a profile's highlights. Their endpoints are
// the real service's own (see shortvideo_content.go).

var (
	seenProfilePosts           = db.Prepare[seenParams]("SeenProfilePosts")
	seenProfileReels           = db.Prepare[seenParams]("SeenProfileReels")
	runProfilePosts            = db.Prepare[runOwnerParams]("RunProfilePosts")
	runProfileReels            = db.Prepare[runOwnerParams]("RunProfileReels")
	runProfileHighlights       = db.Prepare[runOwnerParams]("RunProfileHighlights")
	runPostCommentsWithReplies = db.Prepare[runOwnerParams]("RunPostCommentsWithReplies")
	storedPostStmt             = db.Prepare[storedPostParams]("StoredPost")
	storedPSProfileStmt        = db.Prepare[storedProfileParams]("StoredPSProfile")
)

type storedPostParams struct {
	Code string `db:"code"`
}

// followPSLists adds a public profile's posts, reels and highlights tasks,
// keyed by its handle.
func (m *mapper) followPSLists(res *Result, t *Task, handle string) {
	params := map[string]string{"handle": handle}
	for _, d := range []*edgeDecl{edgePosts, edgeReels, edgeHighlights} {
		m.follow(res, t, d, handle, params)
	}
}

// storedPSProfile expands a photo-sharing profile as mapPSProfile would,
// from what its fetch stored: its lists, unless it is private; ok false
// when no fetch stored it (a private account's empty answer stores
// nothing), and the profile is fetched.
func storedPSProfile(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, bool, error) {
	var private bool
	err := storedPSProfileStmt.QueryRow(ctx, q, storedProfileParams{UniqueID: t.Key}).Scan(&private)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil || private {
		return nil, err == nil, err
	}
	res := &Result{}
	(&mapper{job: j}).followPSLists(res, t, t.Key)
	return res.Children, true, nil
}

// mediaURL is the URL a post's or reel's comments and transcript are asked
// with, and keyed by: on the host its answer's URL gives (else the
// dialect's web address), at the canonical path of its code, /reel/<code>/
// for a reel, /p/<code>/ otherwise. The real service gives one reel
// several URL forms (/<owner>/p/<code>/ in a profile's posts, /reel/<code>
// in its reels): one canonical form makes it one task, bought once.
func (m *mapper) mediaURL(given, code string, reel bool) string {
	r := m.job.Route(KindPSComments)
	if u, err := url.Parse(given); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		r.WebBase = u.Scheme + "://" + u.Host
	}
	if reel {
		return r.ReelURL(code)
	}
	return r.PostURL(code)
}

// followPost adds a post's comments task and, for a video, its transcript
// task, keyed by its URL; count is its comment count as the page showed
// it.
func (m *mapper) followPost(res *Result, t *Task, comments, transcripts *edgeDecl, postURL string, video bool, count sources.Int64) {
	m.followCounted(res, t, comments, postURL, nil, count)
	if video {
		m.follow(res, t, transcripts, postURL, nil)
	}
}

// addPSPost adds a post of list and its counters, its owner owner when the
// answer names none, or counts it dropped with a reason; it reports
// whether it was added.
func addPSPost(res *Result, it sources.Item[endpoints.PSPost], list, owner string) bool {
	p := it.V
	if p.OwnerUsername != "" {
		owner = string(p.OwnerUsername)
	}
	why := entryProblem(list, it.Pos, "code", string(p.Code), "pk", string(p.ID), "owner.username", owner)
	if err := sinks.CheckUnixTime("taken_at", p.TakenAt.V); why == "" && err != nil {
		why = fmt.Sprintf("%s[%d]: %v", list, it.Pos, err)
	}
	if why != "" {
		res.Drop(why)
		return false
	}
	code := string(p.Code)
	sinks.Add(&res.Batch, sinks.PSPost{
		Code: code, PostID: textPtr(p.ID), URL: textPtr(p.URL), OwnerUsername: strPtr(owner), MediaType: intPtr(p.MediaType),
		ProductType: textPtr(p.ProductType), Caption: textPtr(p.Caption), TakenAt: intPtr(p.TakenAt), Raw: it.Raw,
	})
	sinks.Add(&res.Batch, sinks.PSPostSnapshot{Code: code, LikeCount: intPtr(p.LikeCount), CommentCount: intPtr(p.CommentCount), PlayCount: intPtr(p.PlayCount)})
	return true
}

// KindPSUserPosts: a profile's posts (reels included), newest first; key:
// handle; params: handle (the owner).
const KindPSUserPosts = "photosocial.user_posts"

var _ = register(&Kind{
	Name:  KindPSUserPosts,
	List:  true,
	Pages: "posts",
	Call:  byKeyCursor(endpoints.PSUserPostsCall, mapPSUserPosts),
	Dated: true,
	Seen: seenBy(seenProfilePosts, func(t *Task) string { return t.Key }, func(r *Result) []string {
		rows := sinks.Rows[sinks.PSProfilePost](&r.Batch)
		keys := make([]string, len(rows))
		for i, p := range rows {
			keys[i] = p.Code
		}
		return keys
	}),
	Reexpand: storedProfilePosts,
})

func mapPSUserPosts(m *mapper, t *Task, page *sources.Page[endpoints.PSPost]) (*Result, error) {
	res, win := listResult(t, page), m.dateWindow(t)
	defer win.end(t, res)
	for _, it := range page.Items {
		if !win.keep(it.V.TakenAt) || !addPSPost(res, it, "items", t.Key) {
			continue
		}
		p := it.V
		sinks.Add(&res.Batch, sinks.PSProfilePost{Username: t.Key, Code: string(p.Code)})
		m.followPost(res, t, edgePostComments, edgePostTranscripts, m.mediaURL(string(p.URL), string(p.Code), p.ProductType == "clips"), p.Video(), p.CommentCount)
	}
	return res, nil
}

// storedProfilePosts expands a profile's posts list again from the posts
// its walk in this run stored, as mapPSUserPosts does.
func storedProfilePosts(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
	rows, err := runProfilePosts.Query(ctx, q, runOwnerParams{Owner: t.Key, RunID: t.RunID})
	if err != nil {
		return nil, err
	}
	type post struct {
		code, url   string
		video, reel bool
		comments    *int64
	}
	posts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (post, error) {
		var p post
		return p, r.Scan(&p.code, &p.url, &p.video, &p.reel, &p.comments)
	})
	if err != nil {
		return nil, err
	}
	res, m := &Result{}, &mapper{job: j}
	for _, p := range posts {
		m.followPost(res, t, edgePostComments, edgePostTranscripts, m.mediaURL(p.url, p.code, p.reel), p.video, storedCount(p.comments))
	}
	return res.Children, nil
}

// KindPSUserReels: a profile's reels, newest first; key: handle; params:
// handle (the owner).
const KindPSUserReels = "photosocial.user_reels"

var _ = register(&Kind{
	Name:  KindPSUserReels,
	List:  true,
	Pages: "reels",
	Call:  byKeyCursor(endpoints.PSUserReelsCall, mapPSUserReels),
	Dated: true,
	Seen: seenBy(seenProfileReels, func(t *Task) string { return t.Key }, func(r *Result) []string {
		rows := sinks.Rows[sinks.PSProfileReel](&r.Batch)
		keys := make([]string, len(rows))
		for i, p := range rows {
			keys[i] = p.ReelID
		}
		return keys
	}),
	Reexpand: storedProfileReels,
})

func mapPSUserReels(m *mapper, t *Task, page *sources.Page[endpoints.PSReel]) (*Result, error) {
	res, win := listResult(t, page), m.dateWindow(t)
	defer win.end(t, res)
	for _, it := range page.Items {
		if !win.keep(it.V.TakenAt) {
			continue
		}
		if it.V.OwnerUsername == "" {
			it.V.OwnerUsername = sources.Text(t.Key) // the profile's own list
		}
		if !addPSReel(res, it, "items") {
			continue
		}
		r := it.V
		sinks.Add(&res.Batch, sinks.PSProfileReel{Username: t.Key, ReelID: string(r.ID)})
		m.followPost(res, t, edgePostComments, edgePostTranscripts, m.mediaURL(string(r.URL), string(r.Code), true), true, r.CommentCount)
	}
	return res, nil
}

// storedProfileReels expands a profile's reels list again from the reels
// its walk in this run stored, as mapPSUserReels does.
func storedProfileReels(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
	reels, err := runReels(ctx, q, &runProfileReels, t.Key, t)
	if err != nil {
		return nil, err
	}
	res, m := &Result{}, &mapper{job: j}
	for _, r := range reels {
		m.followPost(res, t, edgePostComments, edgePostTranscripts, m.mediaURL(r.url, r.code, true), true, sources.Int64{})
	}
	return res.Children, nil
}

// KindPSPost: one post or reel by its URL (a media seed); key: the URL as
// given.
const KindPSPost = "photosocial.post"

var _ = register(&Kind{
	Name:  KindPSPost,
	Seeds: seedsOf("seeds.photosocial.media", checkPostURL, mediaTasks),
	Call:  byKey(endpoints.PSPostCall, mapPSPost),
	Fresh: &FreshRule{Expand: storedPost},
})

func mapPSPost(m *mapper, t *Task, d *endpoints.PSPostDetail) (*Result, error) {
	res := &Result{Stop: StopDone, Items: 1}
	if !d.Found {
		res.Drop("data.xdt_shortcode_media: absent")
		res.Stop = "done: the answer carries no post"
		return res, nil
	}
	if d.Post.V.Code == "" {
		d.Post.V.Code = sources.Text(sinks.PostCode(t.Key))
	}
	if addPSPost(res, d.Post, "data.xdt_shortcode_media", "") {
		// Keyed as the owner's lists key it: a reel at /reel/<code>/ even
		// when the seed named it /p/<code>/.
		p := d.Post.V
		m.followPost(res, t, edgeSeedPostComments, edgeSeedPostTranscripts, m.mediaURL(t.Key, string(p.Code), p.ProductType == "clips"), p.Video(), p.CommentCount)
	}
	return res, nil
}

// storedPost expands a media seed as mapPSPost would, from its stored post:
// its comments and, for a video, its transcript; ok false when no fetch
// stored it.
func storedPost(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, bool, error) {
	var video, reel bool
	code := sinks.PostCode(t.Key)
	err := storedPostStmt.QueryRow(ctx, q, storedPostParams{Code: code}).Scan(&video, &reel)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	res, m := &Result{}, &mapper{job: j}
	m.followPost(res, t, edgeSeedPostComments, edgeSeedPostTranscripts, m.mediaURL(t.Key, code, reel), video, sources.Int64{})
	return res.Children, true, nil
}

// KindPSCommentReplies: the replies to a comment of a post or reel; key:
// the comment's id; params: url, its post's URL.
const KindPSCommentReplies = "photosocial.comment_replies"

var _ = register(&Kind{
	Name:  KindPSCommentReplies,
	List:  true,
	Pages: "comment_replies",
	Call: mapped(func(t *Task) sources.Call[*sources.Page[endpoints.PSComment]] {
		return endpoints.PSCommentRepliesCall(t.Params["url"], t.Key, t.Cursor)
	}, mapPSCommentReplies),
	Change: &ChangeRule{Gone: func(t *Task) GoneScope {
		return GoneScope{Platform: "photosocial", Owner: sinks.PostCode(t.Params["url"]), Parent: t.Key}
	}, Explain: explainBy(&storedPSCommentCounts, func(t *Task) string { return sinks.PostCode(t.Params["url"]) }, psCounted(true))},
})

func mapPSCommentReplies(m *mapper, t *Task, page *sources.Page[endpoints.PSComment]) (*Result, error) {
	res := listResult(t, page)
	postURL := t.Params["url"]
	for _, it := range page.Items {
		addPSComment(res, postURL, sinks.PostCode(postURL), it, "comments", &t.Key)
	}
	return res, nil
}

// KindPSHighlights: the highlights a profile lists (one answer); key:
// handle.
const KindPSHighlights = "photosocial.highlights"

var _ = register(&Kind{
	Name:     KindPSHighlights,
	Call:     byKey(endpoints.PSHighlightsCall, mapPSHighlights),
	Reexpand: storedIDs(&runProfileHighlights, func(t *Task) string { return t.Key }, edgeHighlightDetails, noParams),
})

func noParams(*Task) map[string]string { return nil }

func mapPSHighlights(m *mapper, t *Task, page *sources.Page[endpoints.PSHighlightEntry]) (*Result, error) {
	res := &Result{Stop: StopDone, Items: page.Info().Items, Drops: Drops{N: page.Dropped, Reason: page.DropReason}}
	for _, it := range page.Items {
		h := it.V
		id := string(h.ID)
		why := entryProblem("highlights", it.Pos, "id", id)
		if _, err := endpoints.HighlightDigits(id); why == "" && err != nil {
			why = fmt.Sprintf("highlights[%d]: id %q is not a highlight id", it.Pos, id)
		}
		if why != "" {
			res.Drop(why)
			continue
		}
		sinks.Add(&res.Batch, sinks.PSProfileHighlight{Username: t.Key, HighlightID: id, Position: it.Pos + 1,
			Title: textPtr(h.Title), CoverURL: textPtr(h.CoverURL), Raw: it.Raw})
		m.follow(res, t, edgeHighlightDetails, id, nil)
	}
	return res, nil
}
