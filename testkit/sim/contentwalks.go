package sim

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/sandbox"
)

// The complete-list invariant for content walks (issue 32): a creator's
// videos list, a video's comments or a comment's replies that a run walked
// to its end (crawl.tasks outcome done_end) stored exactly what the
// sandbox listed that day, read from its world's truth (sandbox.ContentAt:
// in the content world, comments and replies that arrive and are
// deleted). The rows a run stored of a list are those whose last_seen_run
// is the run: shortvideo.profile_videos for a videos list,
// shortvideo.comments without a parent for a video's comments, with the
// comment as parent for its replies.

// contentWalk is a complete walk of a content list, and what its run
// stored of it.
type contentWalk struct {
	kind, key, videoURL string // task kind and key; the replies' video URL (params.url)
	pages               int
	stored              []string
}

func completeContentWalks(ctx context.Context, conn *pgx.Conn, runIDs []int64) ([]contentWalk, error) {
	rows, err := conn.Query(ctx, `SELECT t.kind, t.key, coalesce(t.params->>'url', ''), t.pages,
		  CASE t.kind
		    WHEN 'shortvideo.profile_videos' THEN
		      ARRAY(SELECT v.video_id FROM shortvideo.profile_videos v WHERE v.unique_id = t.key AND v.last_seen_run = t.run_id)
		    WHEN 'shortvideo.video_comments' THEN
		      ARRAY(SELECT c.comment_id FROM shortvideo.comments c
		        WHERE c.video_id = substring(t.key FROM '/video/([0-9]+)') AND c.parent_comment_id IS NULL AND c.last_seen_run = t.run_id)
		    ELSE ARRAY(SELECT c.comment_id FROM shortvideo.comments c WHERE c.parent_comment_id = t.key AND c.last_seen_run = t.run_id) END
		FROM crawl.tasks t WHERE t.run_id = ANY($1) AND t.state = 'done' AND t.outcome = 'done_end'
		  AND t.kind IN ('shortvideo.profile_videos', 'shortvideo.video_comments', 'shortvideo.comment_replies') ORDER BY 1, 2`, runIDs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (contentWalk, error) {
		var w contentWalk
		err := row.Scan(&w.kind, &w.key, &w.videoURL, &w.pages, &w.stored)
		return w, err
	})
}

// videoOf is the video id and author handle of a video URL
// (https://www.tiktok.com/@<author>/video/<id>).
func videoOf(raw string) (id, author string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ""
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) >= 3 && segs[1] == "video" {
		return path.Base(u.Path), strings.TrimPrefix(segs[0], "@")
	}
	return "", ""
}

// completeContentLists compares every complete content walk of the night
// with the sandbox's list that day.
func (c *checker) completeContentLists(r *nightResult, walks []contentWalk) ([]Violation, error) {
	if len(walks) == 0 {
		return nil, nil
	}
	truth, err := sandbox.ContentAt(c.s.World.Churn, r.day)
	if err != nil {
		return nil, err
	}
	var out []Violation
	for _, w := range walks {
		var want []string
		switch w.kind {
		case "shortvideo.profile_videos":
			if strings.HasPrefix(w.key, "private") { // served empty
				break
			}
			vs, err := truth.CreatorVideos(w.key)
			if err != nil {
				return nil, err
			}
			for _, v := range vs {
				want = append(want, v.ID)
			}
		case "shortvideo.video_comments":
			id, author := videoOf(w.key)
			want = contentIDsOf(truth.VideoComments(id, author))
		default:
			id, author := videoOf(w.videoURL)
			want = contentIDsOf(truth.CommentReplies(id, author, w.key))
		}
		if missing, extra := diff(want, w.stored); len(missing)+len(extra) > 0 {
			out = append(out, Violation{Night: r.day, Timeline: r.timeline, Invariant: InvCompleteList,
				Detail: fmt.Sprintf("%s %s, complete after %d pages: %d stored, the sandbox lists %d; missing %s; extra %s",
					w.kind, w.key, w.pages, len(w.stored), len(want), firstN(missing, 3), firstN(extra, 3))})
		}
	}
	return out, nil
}

func contentIDsOf(cs []sandbox.ContentComment) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return slices.Clip(out)
}
