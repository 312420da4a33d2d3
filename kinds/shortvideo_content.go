package kinds

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
	"github.com/socialcrawl/crawler/sources/endpoints"
)

// The real service's short-video content (issue 27), each kind declared
// once: a creator's videos, one video by URL, a video's comments and their
// replies, its transcript. Their endpoints are the real service's own
// (sources.Endpoint.RealOnly): under the contract's preset a job naming
// their seeds or edges is refused (Unserved).

// KindSVProfileVideos: a creator's videos, newest first; key: handle;
// params: handle (the owner, as adaptive revisits read it).
const KindSVProfileVideos = "shortvideo.profile_videos"

var _ = register(&Kind{
	Name:  KindSVProfileVideos,
	List:  true,
	Pages: "videos",
	Call:  byKeyCursor(endpoints.SVProfileVideosCall, mapSVProfileVideos),
	Dated: true,
	Seen: seenBy(seenProfileVideos, func(t *Task) string { return t.Key }, func(r *Result) []string {
		rows := sinks.Rows[sinks.SVProfileVideo](&r.Batch)
		keys := make([]string, len(rows))
		for i, v := range rows {
			keys[i] = v.VideoID
		}
		return keys
	}),
	Reexpand: storedProfileVideos,
})

func mapSVProfileVideos(m *mapper, t *Task, page *sources.Page[endpoints.SVVideo]) (*Result, error) {
	res, win := listResult(t, page), m.dateWindow(t)
	defer win.end(t, res)
	for _, it := range page.Items {
		if !win.keep(it.V.CreateTime) {
			continue
		}
		if it.V.Author.UniqueID == "" && it.V.Author.UID == "" {
			it.V.Author.UniqueID = sources.Text(t.Key) // the creator's own list
		}
		if !m.addVideo(t, res, it, "", "videos") {
			continue
		}
		id := string(it.V.ID)
		sinks.Add(&res.Batch, sinks.SVProfileVideo{UniqueID: t.Key, VideoID: id})
		m.followVideo(res, t, edgeVideoComments, edgeVideoTranscripts, m.videoURL(string(it.V.URL), t.Key, id), it.V.Stats.CommentCount)
	}
	return res, nil
}

// videoURL is a video's web address: the one its answer carried, else one
// built on the dialect's web address from its author and id.
func (m *mapper) videoURL(given, handle, id string) string {
	if _, _, why := videoOf(given); given != "" && why == "" {
		return canonicalVideoURL(m.job, KindSVVideoComments, given) // as a seed of it is keyed
	}
	return m.job.Route(KindSVVideoComments).VideoURL(handle, id)
}

// followVideo adds a video's comments and transcript tasks along comments
// and transcripts, keyed by its URL; count is the video's comment count
// as the page showed it.
func (m *mapper) followVideo(res *Result, t *Task, comments, transcripts *edgeDecl, videoURL string, count sources.Int64) {
	m.followCounted(res, t, comments, videoURL, nil, count)
	m.follow(res, t, transcripts, videoURL, nil)
}

type runOwnerParams = runListParams

var (
	seenProfileVideos           = db.Prepare[seenParams]("SeenProfileVideos")
	runProfileVideos            = db.Prepare[runOwnerParams]("RunProfileVideos")
	runVideoCommentsWithReplies = db.Prepare[runOwnerParams]("RunVideoCommentsWithReplies")
)

// storedProfileVideos expands a creator's videos list again from the
// videos its walk in this run stored, as mapSVProfileVideos does.
func storedProfileVideos(ctx context.Context, q db.Querier, j Job, t *Task) ([]NewTask, error) {
	rows, err := runProfileVideos.Query(ctx, q, runOwnerParams{Owner: t.Key, RunID: t.RunID})
	if err != nil {
		return nil, err
	}
	type video struct {
		id, url, author string
		comments        *int64
	}
	videos, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (video, error) {
		var v video
		return v, r.Scan(&v.id, &v.url, &v.author, &v.comments)
	})
	if err != nil {
		return nil, err
	}
	res, m := &Result{}, &mapper{job: j}
	for _, v := range videos {
		if v.author != "" && !isSecUIDUser(v.author) {
			m.follow(res, t, edgeVideoAuthors, v.author, nil)
		}
		m.followVideo(res, t, edgeVideoComments, edgeVideoTranscripts, m.videoURL(v.url, t.Key, v.id), storedCount(v.comments))
	}
	return res.Children, nil
}

// KindSVVideo: one video by its URL (a seed); key: the URL as given.
const KindSVVideo = "shortvideo.video"

var _ = register(&Kind{
	Name:  KindSVVideo,
	Seeds: seedsOf("seeds.shortvideo.videos", checkVideoURL, videoTasks),
	Call:  byKey(endpoints.SVVideoCall, mapSVVideo),
	Fresh: &FreshRule{Expand: always(func(j Job, t *Task) []NewTask { return videoSeedLists(j, t, sources.Int64{}) })},
})

// videoSeedLists are the tasks a video seed makes whatever its answer: its
// comments and transcript, keyed by the URL the seed gave; count is the
// video's comment count as its answer showed it (none when not fetched).
func videoSeedLists(j Job, t *Task, count sources.Int64) []NewTask {
	res := &Result{}
	(&mapper{job: j}).followVideo(res, t, edgeSeedVideoComments, edgeSeedVideoTranscripts, t.Key, count)
	return res.Children
}

var checkVideoURL = quoted(func(v string) string {
	if len(v) > sources.MaxURLBytes {
		return fmt.Sprintf("is %d bytes long; a URL is at most %d", len(v), sources.MaxURLBytes)
	}
	_, _, why := videoOf(v)
	return why
})

func mapSVVideo(m *mapper, t *Task, d *endpoints.SVVideoDetail) (*Result, error) {
	res := &Result{Stop: StopDone, Items: 1}
	if len(d.Video.Raw) == 0 {
		res.Drop("aweme_detail: absent")
		res.Stop = "done: the answer carries no video (aweme_detail)"
		return res, nil
	}
	m.addVideo(t, res, d.Video, "", "aweme_detail")
	res.Children = append(res.Children, videoSeedLists(m.job, t, d.Video.V.Stats.CommentCount)...)
	return res, nil
}

// KindSVVideoComments: a video's comments; key: the video's URL.
const KindSVVideoComments = "shortvideo.video_comments"

var _ = register(&Kind{
	Name:  KindSVVideoComments,
	List:  true,
	Pages: "video_comments",
	Call:  byKeyCursor(endpoints.SVVideoCommentsCall, mapSVVideoComments),
	Change: &ChangeRule{Gone: func(t *Task) GoneScope {
		return GoneScope{Platform: "shortvideo", Owner: sinks.VideoIDOf(t.Key)}
	}, Expand: storedReplies(&storedVideoCommentsWithReplies, func(t *Task) string { return sinks.VideoIDOf(t.Key) }, edgeVideoCommentReplies),
		Explain: explainBy(&storedSVCommentCounts, func(t *Task) string { return sinks.VideoIDOf(t.Key) }, svCounted(false))},
	// Again from stored data: the replies of the comments with replies
	// that its walk in this run stored.
	Reexpand: storedIDs(&runVideoCommentsWithReplies, func(t *Task) string { return sinks.VideoIDOf(t.Key) }, edgeVideoCommentReplies, urlParam),
})

// storedCount is a counter as stored data gives it (nil: none).
func storedCount(n *int64) sources.Int64 {
	if n == nil {
		return sources.Int64{}
	}
	return sources.Int64{V: *n, Valid: true}
}

// urlParam is the params of a comment's replies task: its video's or
// post's URL, the key of the comments task t.
func urlParam(t *Task) map[string]string { return map[string]string{"url": t.Key} }

func mapSVVideoComments(m *mapper, t *Task, page *sources.Page[endpoints.SVComment]) (*Result, error) {
	res := listResult(t, page)
	for _, it := range page.Items {
		if !addSVComment(res, it, sinks.VideoIDOf(t.Key), "") {
			continue
		}
		if it.V.ReplyCount.V > 0 {
			m.followCounted(res, t, edgeVideoCommentReplies, string(it.V.ID), urlParam(t), it.V.ReplyCount)
		}
	}
	return res, nil
}

// addSVComment adds a comment (a reply when parent, or the answer, names
// the comment it answers) on video (its answer's aweme_id first), or
// counts it dropped with a reason; it reports whether it was added.
func addSVComment(res *Result, it sources.Item[endpoints.SVComment], video, parent string) bool {
	c := it.V
	if c.VideoID != "" {
		video = string(c.VideoID)
	}
	if c.ParentID != "" {
		parent = string(c.ParentID)
	}
	author := string(c.Author.UniqueID)
	why := entryProblem("comments", it.Pos, "cid", string(c.ID), "aweme_id", video, "user.unique_id", author, "reply_id", parent)
	if why == "" && video == "" {
		why = fmt.Sprintf("comments[%d]: no aweme_id, and no video id in the URL", it.Pos)
	}
	if err := sinks.CheckUnixTime("create_time", c.CreateTime.V); why == "" && err != nil {
		why = fmt.Sprintf("comments[%d]: %v", it.Pos, err)
	}
	if why != "" {
		res.Drop(why)
		return false
	}
	row := sinks.SVComment{CommentID: string(c.ID), VideoID: video, ParentID: strPtr(parent), AuthorUniqueID: strPtr(author),
		Text: string(c.Text), CreateTime: intPtr(c.CreateTime), DiggCount: intPtr(c.DiggCount), Raw: it.Raw}
	if parent == "" {
		row.ReplyCount = intPtr(c.ReplyCount)
	}
	sinks.Add(&res.Batch, row)
	return true
}

// KindSVCommentReplies: the replies to a video's comment; key: the
// comment's id (cid); params: url, its video's URL.
const KindSVCommentReplies = "shortvideo.comment_replies"

var _ = register(&Kind{
	Name:  KindSVCommentReplies,
	List:  true,
	Pages: "comment_replies",
	Call: mapped(func(t *Task) sources.Call[*sources.Page[endpoints.SVComment]] {
		return endpoints.SVCommentRepliesCall(t.Params["url"], t.Key, t.Cursor)
	}, mapSVCommentReplies),
	Change: &ChangeRule{Gone: func(t *Task) GoneScope {
		return GoneScope{Platform: "shortvideo", Owner: sinks.VideoIDOf(t.Params["url"]), Parent: t.Key}
	}, Explain: explainBy(&storedSVCommentCounts, func(t *Task) string { return sinks.VideoIDOf(t.Params["url"]) }, svCounted(true))},
})

func mapSVCommentReplies(m *mapper, t *Task, page *sources.Page[endpoints.SVComment]) (*Result, error) {
	res := listResult(t, page)
	for _, it := range page.Items {
		addSVComment(res, it, sinks.VideoIDOf(t.Params["url"]), t.Key)
	}
	return res, nil
}

// KindSVTranscript: a video's transcript; key: the video's URL.
const KindSVTranscript = "shortvideo.transcript"

var _ = register(&Kind{
	Name:  KindSVTranscript,
	Call:  byKey(endpoints.SVTranscriptCall, mapSVTranscript),
	Fresh: &FreshRule{}, // a transcript does not change; nothing to expand
})

func mapSVTranscript(m *mapper, t *Task, tr *endpoints.SVTranscript) (*Result, error) {
	id := string(tr.ID)
	if id == "" {
		id = sinks.VideoIDOf(t.Key)
	}
	if id == "" {
		return &Result{Stop: "done: neither the answer nor its URL names the video", Drops: Drops{N: 1, Reason: "id: absent"}, Items: 1}, nil
	}
	if err := checkObjectKeys("shortvideo/video/transcript", "id", id); err != nil {
		return nil, err
	}
	// A transcript is WEBVTT: speech is at least one timed cue.
	speech := tr.Text.Valid && strings.Contains(tr.Text.V, "-->")
	res := &Result{Stop: StopDone, Items: 1}
	sinks.Add(&res.Batch, sinks.SVTranscript{VideoID: id, VideoURL: t.Key, Text: nullTextPtr(tr.Text), HasSpeech: speech, Raw: tr.Raw})
	if !speech {
		res.Stop = "done: no speech"
	}
	return res, nil
}
