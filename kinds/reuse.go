package kinds

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
)

// How the kinds declare their reuse across runs (docs/reuse.md): a kind
// fetched whole may declare a FreshRule (refresh_after skips a task whose
// entity another run fetched within its window), a list
// returned newest first a SeenFunc (stop_at_seen ends it at a page of
// entries earlier runs stored). The runner and crawler plan apply them.

// FreshRule declares how refresh_after reuses a kind's earlier fetches.
type FreshRule struct {
	// Last finds the latest successful fetch of t's entity by a run other
	// than runID within window; nil: lastDone, the kind's tasks that
	// ended done.
	Last func(ctx context.Context, q db.Querier, t *Task, runID int64, window time.Duration) (Fetch, bool, error)
	// Expand returns the tasks a fetch of t would have created, from the
	// stored data; ok false when the stored data cannot say, and the task
	// is fetched. nil: none.
	Expand func(ctx context.Context, q db.Querier, j Job, t *Task) (children []NewTask, ok bool, err error)
}

// ChangeRule declares a content list (a video's comments, a comment's
// replies, a post's or reel's comments) that a run buys again only when
// it changed (docs/reuse.md, "Content lists"): its task, found along an
// edge whose changed_only is on, carries the counter the parent page
// showed (ParamCount); the runner skips it (OutcomeSkippedUnchanged) when
// crawl.content_walks holds a walk of it that saw the same counter, within
// its refresh_after. Every walk's end is recorded there; a walk to the
// list's end marks the stored entries it no longer found (Gone).
//
// A rise's new entries may be on any page (the real service documents no
// order for comments or replies, and the platforms rank comments), so a
// walk cannot stop at the first stored entry. It stops instead at the
// page where the rise is explained (Explain): the counter counts the
// comments and all their replies, so the new entries and the moves of
// the stored comments' reply counts on the pages read add up to it. A fall
// is walked whole.
type ChangeRule struct {
	// Gone is where t's stored entries are, for marking those a walk to
	// the list's end no longer found.
	Gone func(t *Task) GoneScope
	// Expand, when set, is the tasks t leads to when it is not bought
	// again, from stored data: its comments' replies lists, each with its
	// counter as last seen, each deciding for itself (a replies list
	// never walked, as after a night cut by its budget, is bought).
	Expand func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error)
	// Explain is how much of the rise of t's counter since its last walk
	// a page of it (res, not yet written) accounts for, from what runs
	// before runID stored: an entry none stored (or one marked deleted)
	// counts 1 and its own counter (a comment's replies), a stored one the
	// move of its counter since. nil: the list is walked whole.
	Explain func(ctx context.Context, q db.Querier, runID int64, t *Task, res *Result) (int64, error)
}

// counted is an entry of a content list page: its key, and its own
// counter (a comment's reply count; 0 for a reply).
type counted struct {
	key string
	n   int64
}

// explainBy is a ChangeRule.Explain: the stored counters of the page's
// entries (entries(res)) are read with stmt, the list being owner(t)'s.
func explainBy(stmt *db.Stmt[seenParams], owner func(*Task) string, entries func(*Result) []counted) func(context.Context, db.Querier, int64, *Task, *Result) (int64, error) {
	return func(ctx context.Context, q db.Querier, runID int64, t *Task, res *Result) (int64, error) {
		page := map[string]int64{}
		var keys []string
		for _, e := range entries(res) {
			if _, ok := page[e.key]; !ok {
				keys = append(keys, e.key)
			}
			page[e.key] = e.n
		}
		if len(keys) == 0 {
			return 0, nil
		}
		rows, err := stmt.Query(ctx, q, seenParams{Owner: owner(t), Keys: keys, RunID: runID})
		if err != nil {
			return 0, err
		}
		stored := map[string]int64{}
		var (
			key string
			n   int64
		)
		if _, err := pgx.ForEachRow(rows, []any{&key, &n}, func() error { stored[key] = n; return nil }); err != nil {
			return 0, fmt.Errorf("explain the counter: %w", err)
		}
		var explained int64
		for _, k := range keys {
			if s, ok := stored[k]; ok {
				explained += page[k] - s
			} else {
				explained += 1 + page[k]
			}
		}
		return explained, nil
	}
}

var (
	storedSVCommentCounts = db.Prepare[seenParams]("StoredSVCommentCounts")
	storedPSCommentCounts = db.Prepare[seenParams]("StoredPSCommentCounts")
)

// svCounted are the entries of a short-video comments (replies false) or
// replies page, with their reply counts.
func svCounted(replies bool) func(*Result) []counted {
	return func(r *Result) []counted {
		var out []counted
		for _, c := range sinks.Rows[sinks.SVComment](&r.Batch) {
			if (c.ParentID != nil) != replies {
				continue
			}
			e := counted{key: c.CommentID}
			if c.ReplyCount != nil && !replies {
				e.n = *c.ReplyCount
			}
			out = append(out, e)
		}
		return out
	}
}

// psCounted are the entries of a photo-sharing comments (replies false:
// the replies a page shows with their comment are in its count) or
// replies page, by comment key, with their reply counts.
func psCounted(replies bool) func(*Result) []counted {
	return func(r *Result) []counted {
		var out []counted
		for _, c := range sinks.Rows[sinks.PSComment](&r.Batch) {
			if (c.ParentID != nil) != replies {
				continue
			}
			e := counted{key: sinks.CommentKey(c.PostCode, c.Username, c.CreatedAt, c.Text)}
			if c.ChildCommentCount != nil && !replies {
				e.n = *c.ChildCommentCount
			}
			out = append(out, e)
		}
		return out
	}
}

type ownerParams struct {
	Owner string `db:"owner"`
}

// storedReplies is a ChangeRule.Expand: the replies lists along d of the
// stored comments stmt returns (id, counter) for owner(t).
func storedReplies(stmt *db.Stmt[ownerParams], owner func(*Task) string, d *edgeDecl) func(context.Context, db.Querier, Job, *Task) ([]NewTask, error) {
	return func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
		rows, err := stmt.Query(ctx, q, ownerParams{Owner: owner(t)})
		if err != nil {
			return nil, err
		}
		type comment struct {
			id    string
			count *int64
		}
		comments, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (comment, error) {
			var c comment
			return c, r.Scan(&c.id, &c.count)
		})
		if err != nil {
			return nil, err
		}
		res, m := &Result{}, &mapper{job: j}
		for _, c := range comments {
			m.followCounted(res, t, d, c.id, urlParam(t), storedCount(c.count))
		}
		return res.Children, nil
	}
}

var (
	storedVideoCommentsWithReplies = db.Prepare[ownerParams]("StoredVideoCommentsWithReplies")
	storedPostCommentsWithReplies  = db.Prepare[ownerParams]("StoredPostCommentsWithReplies")
)

// GoneScope names a content list's stored entries: the comments table of
// Platform ("shortvideo" or "photosocial"), those of Owner (a video's id,
// a post's code) answering Parent ("": the top-level comments).
type GoneScope struct {
	Platform, Owner, Parent string
}

// Count is the counter t's parent page showed (ParamCount); ok false
// when t carries none (changed_only is off, or the page sent none).
func (t *Task) Count() (n int64, ok bool) {
	v, ok := t.Params[ParamCount]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// Fetch is a successful fetch by an earlier run.
type Fetch struct {
	RunID int64
	At    time.Time
}

// ReexpandFunc returns the tasks t creates, from the data t's fetch in
// run t.RunID stored, at t's depth (Kind.Reexpand).
type ReexpandFunc func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error)

// KnownFunc is a Kind's Known: the tasks a list leads to as the job's
// runs up to t's know it: the entries runs within the last within saw.
type KnownFunc func(ctx context.Context, q db.Querier, j Job, t *Task, within time.Duration) ([]NewTask, error)

// expandFunc is a FreshRule's Expand.
type expandFunc = func(ctx context.Context, q db.Querier, j Job, t *Task) (children []NewTask, ok bool, err error)

// reexpandBy is the Reexpand of a kind whose fresh rule's expansion from
// stored data also serves a task found again closer to a seed.
func reexpandBy(expand expandFunc) ReexpandFunc {
	return func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
		children, _, err := expand(ctx, q, j, t)
		return children, err
	}
}

// always is the expansion of a kind whose children do not depend on its
// answer: children(j, t), whatever was stored.
func always(children func(j Job, t *Task) []NewTask) expandFunc {
	return func(_ context.Context, _ db.Querier, j Job, t *Task) ([]NewTask, bool, error) {
		return children(j, t), true, nil
	}
}

// SeenFunc counts the entries of a fetched list page that earlier runs
// stored (stop_at_seen), and the page's entries; declared by kinds of
// lists returned newest first.
type SeenFunc func(ctx context.Context, q db.Querier, runID int64, t *Task, res *Result) (seen, total int, err error)

type (
	lastFetchParams struct {
		Kind     string `db:"kind"`
		Key      string `db:"key"`
		RunID    int64  `db:"run_id"`
		WindowUS int64  `db:"window_us"`
	}
	storedProfileParams struct {
		UniqueID string `db:"unique_id"`
	}
	runListParams struct {
		Owner string `db:"owner"`
		RunID int64  `db:"run_id"`
	}
	knownListParams struct {
		Owner    string `db:"owner"`
		Kind     string `db:"kind"`
		Key      string `db:"key"`
		RunID    int64  `db:"run_id"`
		WithinUS int64  `db:"within_us"`
		MaxPages int    `db:"max_pages"`
	}
	seenParams struct {
		Owner string   `db:"owner"`
		Keys  []string `db:"keys"`
		RunID int64    `db:"run_id"`
	}
)

var lastFetch = db.Prepare[lastFetchParams]("LastFetch")

var (
	runFollowers   = db.Prepare[runListParams]("RunFollowers")
	runFollowing   = db.Prepare[runListParams]("RunFollowing")
	knownFollowers = db.Prepare[knownListParams]("KnownFollowers")
	knownFollowing = db.Prepare[knownListParams]("KnownFollowing")
)

// The statements the kinds' Seen and Fresh rules read.
var (
	storedProfile  = db.Prepare[storedProfileParams]("StoredProfile")
	seenFollowers  = db.Prepare[seenParams]("SeenFollowers")
	seenFollowing  = db.Prepare[seenParams]("SeenFollowing")
	seenComments   = db.Prepare[seenParams]("SeenComments")
	seenSongVideos = db.Prepare[seenParams]("SeenSongVideos")
)

// LastDone is FreshRule.Last's default: the kind's tasks of other runs
// that ended done within window.
func LastDone(ctx context.Context, q db.Querier, t *Task, runID int64, window time.Duration) (Fetch, bool, error) {
	var f Fetch
	err := lastFetch.QueryRow(ctx, q, lastFetchParams{Kind: t.Kind, Key: t.Key, RunID: runID, WindowUS: window.Microseconds()}).Scan(&f.RunID, &f.At)
	if errors.Is(err, pgx.ErrNoRows) {
		return Fetch{}, false, nil
	}
	if err != nil {
		return Fetch{}, false, fmt.Errorf("last fetch of %s %s: %w", t.Kind, t.Key, err)
	}
	return f, true, nil
}

// seenBy returns a SeenFunc counting the distinct keys of a page, read by
// keys, with stmt, the owner of the list being owner(t).
func seenBy(stmt db.Stmt[seenParams], owner func(*Task) string, keys func(*Result) []string) SeenFunc {
	return func(ctx context.Context, q db.Querier, runID int64, t *Task, res *Result) (int, int, error) {
		set := map[string]bool{}
		var distinct []string
		for _, k := range keys(res) {
			if !set[k] {
				set[k] = true
				distinct = append(distinct, k)
			}
		}
		if len(distinct) == 0 {
			return 0, 0, nil
		}
		var n int
		if err := stmt.QueryRow(ctx, q, seenParams{Owner: owner(t), Keys: distinct, RunID: runID}).Scan(&n); err != nil {
			return 0, 0, fmt.Errorf("stop_at_seen: %w", err)
		}
		return n, len(distinct), nil
	}
}

// Expanding again from stored data (Kind.Reexpand): each kind reads what
// its task's fetch in run t.RunID stored and follows the edges its mapping
// follows, with mapper.follow, so the children get the keys, params, depth
// and windows a fetch at the task's depth would give them.

type runSearchParams struct {
	Kind     string `db:"search_kind"`
	QueryKey string `db:"query_key"`
	RunID    int64  `db:"run_id"`
}

var (
	runSongVideoAuthors = db.Prepare[runListParams]("RunSongVideoAuthors")
	runFeedAuthors      = db.Prepare[runListParams]("RunFeedAuthors")
	runSearchResults    = db.Prepare[runSearchParams]("RunSearchResults")
	runReelCodes        = db.Prepare[runListParams]("RunReelCodes")
)

// storedIDs expands a task again from the ids stmt returns for its owner
// in its run (owner(t)): each the key of a task along d, with params(t).
func storedIDs(stmt *db.Stmt[runListParams], owner func(*Task) string, d *edgeDecl, params func(*Task) map[string]string) ReexpandFunc {
	return func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
		ids, err := runStrings(ctx, q, stmt, owner(t), t)
		if err != nil {
			return nil, err
		}
		res, m := &Result{}, &mapper{job: j}
		for _, id := range ids {
			m.follow(res, t, d, id, params(t))
		}
		return res.Children, nil
	}
}

// storedReel is a reel a list stored: its code and the URL its answer
// carried ("" when none).
type storedReel struct{ code, url string }

// runReels are the reels stmt returns for owner in t's run.
func runReels(ctx context.Context, q db.Querier, stmt *db.Stmt[runListParams], owner string, t *Task) ([]storedReel, error) {
	rows, err := stmt.Query(ctx, q, runListParams{Owner: owner, RunID: t.RunID})
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (storedReel, error) {
		var x storedReel
		return x, r.Scan(&x.code, &x.url)
	})
}

// runStrings are the strings stmt returns for owner in t's run.
func runStrings(ctx context.Context, q db.Querier, stmt *db.Stmt[runListParams], owner string, t *Task) ([]string, error) {
	rows, err := stmt.Query(ctx, q, runListParams{Owner: owner, RunID: t.RunID})
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// storedVideoAuthors expands a list of videos again (stmt: its videos'
// authors, the list being owner(t)): each author's profile, as addVideo
// follows video_authors.
func storedVideoAuthors(stmt *db.Stmt[runListParams], owner func(*Task) string) ReexpandFunc {
	return func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
		authors, err := runStrings(ctx, q, stmt, owner(t), t)
		if err != nil {
			return nil, err
		}
		res, m := &Result{}, &mapper{job: j}
		for _, a := range authors {
			if m.storedAuthor(a) {
				m.follow(res, t, edgeVideoAuthors, a, nil)
			}
		}
		return res.Children, nil
	}
}

// storedAuthor reports whether a, a video author's profile key as the
// stored expansions give it (a handle, or userIDKey and the numeric id of
// an author known only by ids), is one the job can fetch.
func (m *mapper) storedAuthor(a string) bool {
	if strings.HasPrefix(a, userIDKey) {
		return m.byUserID()
	}
	return a != ""
}

// storedSearch expands a short-video search again from its results (of
// search kind kind, keyed qk(t)), as mapSVKeywordSearch,
// mapSVHashtagSearch and mapSVTopSearch do: a video's author (a video
// result of a top search follows search_results only when video_authors is
// off: addVideo did), a user result's profile, a sound result's song.
func storedSearch(kind string, qk func(*Task) string) ReexpandFunc {
	return func(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
		rows, err := runSearchResults.Query(ctx, q, runSearchParams{Kind: kind, QueryKey: qk(t), RunID: t.RunID})
		if err != nil {
			return nil, err
		}
		type result struct{ typ, author, user, song string }
		results, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (result, error) {
			var x result
			return x, r.Scan(&x.typ, &x.author, &x.user, &x.song)
		})
		if err != nil {
			return nil, err
		}
		res, m := &Result{}, &mapper{job: j}
		for _, r := range results {
			switch {
			case r.typ == sinks.ResultVideo && m.storedAuthor(r.author):
				m.follow(res, t, edgeVideoAuthors, r.author, nil)
				if kind != sinks.SearchTop || !edgeVideoAuthors.on(j) {
					m.follow(res, t, edgeSearchProfiles, r.author, nil)
				}
			case r.typ == sinks.ResultUser && r.user != "":
				m.follow(res, t, edgeSearchProfiles, r.user, nil)
			case r.typ == sinks.ResultSound && r.song != "":
				m.follow(res, t, edgeSearchSongs, r.song, nil)
			}
		}
		return res.Children, nil
	}
}

// storedReelsSearch expands a reels search again from the reels it found:
// each reel's comments and transcript, as mapPSReelsSearch does.
func storedReelsSearch(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
	reels, err := runReels(ctx, q, &runReelCodes, searchQueryKey(t), t)
	if err != nil {
		return nil, err
	}
	res, m := &Result{}, &mapper{job: j}
	for _, r := range reels {
		m.followReel(res, t, r.url, r.code, sources.Int64{})
	}
	return res.Children, nil
}
