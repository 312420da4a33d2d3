package real

import (
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/contract"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// Photo-sharing shapes of the real dialect (snake_case as the samples).

type psProfileJSON struct {
	Data struct {
		User contract.PSUser `json:"user"`
	} `json:"data"`
	Status string `json:"status"`
}

type commentJSON struct {
	ID                string          `json:"id"`
	Text              string          `json:"text"`
	CreatedAt         string          `json:"created_at"` // ISO 8601
	CommentLikeCount  int64           `json:"comment_like_count"`
	ChildCommentCount *int64          `json:"child_comment_count"` // null where the contract says 0
	User              commentUserJSON `json:"user"`
}

type commentUserJSON struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

// commentOf is comment c as the comments list shows it.
func commentOf(c world.Comment) commentJSON {
	r := commentJSON{ID: c.ID, Text: c.Text, CreatedAt: isoTime(c.CreatedAt), CommentLikeCount: c.Likes,
		User: commentUserJSON{ID: world.PSAccountID(c.User), Username: c.User, IsVerified: world.Verified(c.User)}}
	if c.Children != 0 {
		n := c.Children
		r.ChildCommentCount = &n
	}
	return r
}

// commentWithRepliesJSON is a comment with include_replies=true.
type commentWithRepliesJSON struct {
	commentJSON
	Replies        []commentJSON `json:"replies"`
	RepliesCursor  *string       `json:"replies_cursor"`
	HasMoreReplies bool          `json:"has_more_replies"`
}

// commentsJSON: no has_more; the last page has no cursor.
type commentsJSON struct {
	Comments any    `json:"comments"`
	Cursor   string `json:"cursor,omitempty"`
}

// replyJSON is a reply as the replies endpoint lists it.
type replyJSON struct {
	commentJSON
	ParentCommentID string `json:"parent_comment_id"`
}

type reelJSON struct {
	ID            string        `json:"id"`
	Shortcode     string        `json:"shortcode"`
	URL           string        `json:"url"`
	Caption       string        `json:"caption"`
	Owner         reelOwnerJSON `json:"owner"`
	TakenAt       string        `json:"taken_at"` // ISO 8601
	LikeCount     int64         `json:"like_count"`
	CommentCount  int64         `json:"comment_count"`
	VideoDuration float64       `json:"video_duration"`
}

type reelOwnerJSON struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

type reelsJSON struct {
	Reels []reelJSON `json:"reels"`
}

type transcriptsJSON struct {
	Transcripts []contract.Transcript `json:"transcripts"`
}

type embedJSON struct {
	HTML string `json:"html"`
}

const (
	// repliesShown is how many replies a comment shows with include_replies.
	repliesShown = 3
	// repliesCredits is what include_replies costs, whatever it returns.
	repliesCredits = 15
	// reelsPagesMax is the last page of the reels search; later pages are 400.
	reelsPagesMax = 11
)

var _ = route("/v1/instagram/profile", envSuccess, psProfile) // 13

// psProfile is the photo profile with status "ok"; a private account
// answers {} free, as in the contract. Cacheable.
func psProfile(s *service, p *api.Params) reply {
	h := handle(p, "handle")
	p.Bool("trim")
	age := maxAge(p)
	a := s.account(p, h)
	if a.Private {
		return reply{body: struct{}{}, free: true}
	}
	var body psProfileJSON
	body.Data.User, body.Status = contract.PSUserOf(s.PSProfile(a)), "ok"
	return reply{body: body, cacheKey: h, maxAge: age}
}

var _ = route("/v2/instagram/post/comments", envSuccess|envRemaining|envCharged, psComments) // 14

// psComments is the post's comment list behind an opaque string cursor;
// include_replies=true adds replies and costs repliesCredits.
func psComments(s *service, p *api.Params) reply {
	code, off, replies := post(p), opaqueOffset(p, "cursor"), p.Bool("include_replies")
	if !p.OK() || !p.Keep(world.PostExists(code)) {
		return reply{}
	}
	comments, win := s.PostComments(code, off)
	body := commentsJSON{}
	if win.More {
		body.Cursor = opaqueCursor(win.Next)
	}
	if !replies {
		plain := make([]commentJSON, len(comments))
		for i, c := range comments {
			plain[i] = commentOf(c)
		}
		body.Comments = plain
		return reply{body: body}
	}
	with := make([]commentWithRepliesJSON, len(comments))
	for i, c := range comments {
		with[i] = s.withReplies(c, code)
	}
	body.Comments = with
	return reply{body: body, charge: repliesCredits}
}

// withReplies is comment c of the post code with the first repliesShown
// of its replies (those the replies endpoint lists first).
func (s *service) withReplies(c world.Comment, code string) commentWithRepliesJSON {
	n := min(c.Children, repliesShown)
	out := commentWithRepliesJSON{commentJSON: commentOf(c), Replies: make([]commentJSON, 0, n),
		HasMoreReplies: c.Children > n}
	for _, r := range s.FirstPostReplies(code, c.ID, n) {
		out.Replies = append(out.Replies, commentOf(r))
	}
	if out.HasMoreReplies {
		cur := opaqueCursor(n)
		out.RepliesCursor = &cur
	}
	return out
}

var _ = route("/v2/instagram/reels/search", envSuccess|envRemaining, psReels) // 15

// psReels is the reels search, pages 1 to reelsPagesMax.
func psReels(s *service, p *api.Params) reply {
	raw := p.Required("query")
	p.Enum("date_posted", []string{"last-hour", "last-day", "last-week", "last-month", "last-year"})
	if n, ok := api.ParseDigits(p.Get("page")); ok && n > reelsPagesMax {
		p.Fail("parameter %q must be between 1 and %d", "page", reelsPagesMax)
	}
	kw, page := world.ReadKeyword(p, raw, "query"), p.Page("page")
	if !p.OK() {
		return reply{}
	}
	reels := s.ReelsSearch(kw, page)
	out := make([]reelJSON, len(reels))
	for i, r := range reels {
		out[i] = reelJSON{ID: r.ID, Shortcode: r.Code, URL: psSite + "/reel/" + r.Code + "/", Caption: r.Caption,
			Owner:   reelOwnerJSON{ID: world.PSAccountID(r.Owner), Username: r.Owner, IsVerified: world.Verified(r.Owner)},
			TakenAt: isoTime(r.TakenAt), LikeCount: r.Likes, CommentCount: s.CommentCount(r.Code), VideoDuration: r.Duration}
	}
	return reply{body: reelsJSON{Reels: out}}
}

var _ = route("/v2/instagram/media/transcript", envSuccess, psTranscript) // 16

// psTranscript is the post's transcript. Cacheable.
func psTranscript(_ *service, p *api.Params) reply {
	code, age := post(p), maxAge(p)
	if p.OK() {
		p.Keep(world.PostExists(code))
	}
	return reply{body: transcriptsJSON{Transcripts: contract.TranscriptsOf(code)}, cacheKey: code, maxAge: age}
}

var _ = route("/v1/instagram/user/embed", envSuccess, psEmbed) // 17

// psEmbed is the profile's embed.
func psEmbed(s *service, p *api.Params) reply {
	h := handle(p, "handle")
	s.account(p, h)
	return reply{body: embedJSON{HTML: world.Embed(h)}}
}

var _ = route("/v1/instagram/user/highlight/detail", envSuccess, psHighlight) // 18

// psHighlight is the highlight; ids starting with 403 are blocked (403),
// as ids starting with 404 are missing.
func psHighlight(s *service, p *api.Params) reply {
	if id := p.Get("id"); strings.HasPrefix(id, "403") && api.IsDigits(id) {
		p.Keep(api.Forbidden("This highlight is not available: the platform blocked it"))
	}
	id := world.ReadHighlightID(p)
	if !p.OK() {
		return reply{}
	}
	return reply{body: contract.HighlightOf(s.Highlight(id))}
}
