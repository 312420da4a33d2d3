package sandbox

import "strings"

// Photo-sharing shapes of the real preset (snake_case as the samples).

type psProfileRealJSON struct {
	Data struct {
		User psUserJSON `json:"user"`
	} `json:"data"`
	Status string `json:"status"`
}

type commentRealJSON struct {
	ID                string          `json:"id"`
	Text              string          `json:"text"`
	CreatedAt         string          `json:"created_at"` // ISO 8601
	CommentLikeCount  int64           `json:"comment_like_count"`
	ChildCommentCount *int64          `json:"child_comment_count"` // null where the contract says 0
	User              commentUserReal `json:"user"`
}

type commentUserReal struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

// commentWithRepliesJSON is a comment with include_replies=true.
type commentWithRepliesJSON struct {
	commentRealJSON
	Replies        []commentRealJSON `json:"replies"`
	RepliesCursor  *string           `json:"replies_cursor"`
	HasMoreReplies bool              `json:"has_more_replies"`
}

// commentsRealJSON: no has_more; the last page has no cursor.
type commentsRealJSON struct {
	Comments any    `json:"comments"`
	Cursor   string `json:"cursor,omitempty"`
}

type reelRealJSON struct {
	ID            string        `json:"id"`
	Shortcode     string        `json:"shortcode"`
	URL           string        `json:"url"`
	Caption       string        `json:"caption"`
	Owner         reelOwnerReal `json:"owner"`
	TakenAt       string        `json:"taken_at"` // ISO 8601
	LikeCount     int64         `json:"like_count"`
	CommentCount  int64         `json:"comment_count"`
	VideoDuration float64       `json:"video_duration"`
}

type reelOwnerReal struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

type reelsRealJSON struct {
	Reels []reelRealJSON `json:"reels"`
}

type transcriptsRealJSON struct {
	Transcripts []transcriptJSON `json:"transcripts"`
}

type embedRealJSON struct {
	HTML string `json:"html"`
}

type highlightRealJSON struct {
	ID         string              `json:"id"`
	Title      string              `json:"title"`
	MediaCount int64               `json:"media_count"`
	User       highlightUserJSON   `json:"user"`
	Items      []highlightItemJSON `json:"items"`
}

const (
	// repliesShown is how many replies a comment shows with include_replies.
	repliesShown = 3
	// repliesCredits is what include_replies costs, whatever it returns.
	repliesCredits = 15
	// reelsPagesMax is the last page of the reels search; later pages are 400.
	reelsPagesMax = 11
)

var _ = realRoute("/v1/instagram/profile", envSuccess, (*realWorld).psProfileReal) // 13

// psProfileReal is the contract's photo profile with status "ok"; a private
// account answers {} free, as in the contract. Cacheable.
func (w *realWorld) psProfileReal(q query) (realReply, error) {
	h, err := realHandle(q, "handle")
	if err != nil {
		return realReply{}, err
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return realReply{}, err
	}
	age, err := maxAge(q)
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.psProfile(translated("handle", h))
	if err != nil || rep.free {
		return realReply{body: rep.body, free: rep.free}, err
	}
	var body psProfileRealJSON
	body.Data.User, body.Status = rep.body.(psProfileJSON).Data.User, "ok"
	return realReply{body: body, cacheKey: h, maxAge: age}, nil
}

// realPost reads the url parameter, a post or reel URL on the real
// platform's host (any other host is 400, as the real service cannot fetch
// it), and refuses blocked posts.
func realPost(q query) (string, error) {
	code, err := postCode(q)
	if err != nil {
		return "", err
	}
	if err := onHost(q, "url", realPSHosts, realPSSite+"/p/<code>/"); err != nil {
		return "", err
	}
	return code, blocked("post", code)
}

var _ = realRoute("/v2/instagram/post/comments", envSuccess|envRemaining|envCharged, (*realWorld).psCommentsReal) // 14

// psCommentsReal is the contract's comment list behind an opaque string
// cursor; include_replies=true adds replies and costs repliesCredits.
func (w *realWorld) psCommentsReal(q query) (realReply, error) {
	if _, err := realPost(q); err != nil {
		return realReply{}, err
	}
	off, err := cursorOffset(q)
	if err != nil {
		return realReply{}, err
	}
	replies, err := boolParam(q, "include_replies")
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.psComments(translated("url", q.get("url"), "cursor", itoa(off)))
	if err != nil {
		return realReply{}, err
	}
	page := rep.body.(commentsPageJSON)
	body := commentsRealJSON{}
	if next, ok := parseDigits(page.Cursor); ok {
		body.Cursor = opaqueCursor(next)
	}
	plain := make([]commentRealJSON, len(page.Comments))
	for i, c := range page.Comments {
		plain[i] = commentReal(c)
	}
	if !replies {
		body.Comments = plain
		return realReply{body: body}, nil
	}
	with := make([]commentWithRepliesJSON, len(plain))
	code, _ := postCode(q)
	for i, c := range page.Comments {
		with[i] = w.withReplies(plain[i], c, code)
	}
	body.Comments = with
	return realReply{body: body, charge: repliesCredits}, nil
}

func commentReal(c commentJSON) commentRealJSON {
	r := commentRealJSON{ID: c.ID, Text: c.Text, CreatedAt: isoTime(c.CreatedAt), CommentLikeCount: c.LikeCount,
		User: commentUserReal{ID: psAccountID(c.User.Username), Username: c.User.Username, IsVerified: c.User.IsVerified}}
	if c.ChildCommentCount != 0 {
		n := c.ChildCommentCount
		r.ChildCommentCount = &n
	}
	return r
}

// withReplies adds the first repliesShown of c's child_comment_count
// replies (those the replies endpoint lists first) to c, a comment of the
// post code.
func (w *realWorld) withReplies(r commentRealJSON, c commentJSON, code string) commentWithRepliesJSON {
	n := min(c.ChildCommentCount, repliesShown)
	out := commentWithRepliesJSON{commentRealJSON: r, Replies: make([]commentRealJSON, 0, n),
		HasMoreReplies: c.ChildCommentCount > n}
	for j := range n {
		out.Replies = append(out.Replies, w.psReply(code, c.ID, j).commentRealJSON)
	}
	if out.HasMoreReplies {
		cur := opaqueCursor(n)
		out.RepliesCursor = &cur
	}
	return out
}

// psReplyJSON is a reply as the replies endpoint lists it.
type psReplyJSON struct {
	commentRealJSON
	ParentCommentID string `json:"parent_comment_id"`
}

// psReply is reply j to comment cid of the post code: derived from the
// comment, so the replies a comment shows and those its replies endpoint
// lists are the same; posted within a month after a day past the post.
func (w *realWorld) psReply(code, cid string, j int64) psReplyJSON {
	seed := hashOf("comment", cid, "replies")
	id, user := digitsAt('1', seed, j), handleAt(seed, j)
	return psReplyJSON{commentRealJSON: commentRealJSON{ID: id, Text: sentence(hashOf("comment", id, "text"), 1, 8),
		CreatedAt:        isoTime(takenAt("post", code) + 86400 + pick("comment", id, "createdAt", 30*86400)),
		CommentLikeCount: w.grow("comment", id, "likeCount", 100, 1),
		User:             commentUserReal{ID: psAccountID(user), Username: user, IsVerified: verified(user)}}, ParentCommentID: cid}
}

var _ = realRoute("/v2/instagram/reels/search", envSuccess|envRemaining, (*realWorld).psReelsReal) // 15

// psReelsReal is the contract's reels search, pages 1 to reelsPagesMax.
func (w *realWorld) psReelsReal(q query) (realReply, error) {
	raw, err := q.required("query")
	if err != nil {
		return realReply{}, err
	}
	if err := enumParam(q, "date_posted", []string{"last-hour", "last-day", "last-week", "last-month", "last-year"}); err != nil {
		return realReply{}, err
	}
	if n, ok := parseDigits(q.get("page")); ok && n > reelsPagesMax {
		return realReply{}, badRequest("parameter %q must be between 1 and %d", "page", reelsPagesMax)
	}
	rep, err := w.psReelsSearch(translated("query", raw, "page", q.get("page")))
	if err != nil {
		return realReply{}, err
	}
	reels := rep.body.(reelsPageJSON).Reels
	out := make([]reelRealJSON, len(reels))
	for i, r := range reels {
		out[i] = reelRealJSON{ID: r.ID, Shortcode: r.Code, URL: realPSSite + "/reel/" + r.Code + "/", Caption: r.Caption,
			Owner:   reelOwnerReal{ID: psAccountID(r.Owner.Username), Username: r.Owner.Username, IsVerified: verified(r.Owner.Username)},
			TakenAt: isoTime(r.TakenAt), LikeCount: r.LikeCount, CommentCount: w.commentCount(r.Code),
			VideoDuration: 3 + float64(pick("reel", r.Code, "duration", 900))/10}
	}
	return realReply{body: reelsRealJSON{Reels: out}}, nil
}

// commentCount is the length of the comment list of a post or reel, as
// psComments counts it: its code's c<N> (and r<N> a day), else
// hash-derived.
func (w *realWorld) commentCount(code string) int64 {
	toks := splitTokens(code, "")
	total, ok := countToken(toks, 'c')
	if !ok {
		total = pick("post", code, "comments", 100)
	}
	growth, _ := growthToken(toks)
	return total + growth*w.day
}

var _ = realRoute("/v2/instagram/media/transcript", envSuccess, (*realWorld).psTranscriptReal) // 16

// psTranscriptReal is the contract's transcript. Cacheable.
func (w *realWorld) psTranscriptReal(q query) (realReply, error) {
	code, err := realPost(q)
	if err != nil {
		return realReply{}, err
	}
	age, err := maxAge(q)
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.psTranscript(q)
	if err != nil {
		return realReply{}, err
	}
	return realReply{body: transcriptsRealJSON{Transcripts: rep.body.(transcriptsJSON).Transcripts},
		cacheKey: code, maxAge: age}, nil
}

var _ = realRoute("/v1/instagram/user/embed", envSuccess, (*realWorld).psEmbedReal) // 17

// psEmbedReal is the contract's embed.
func (w *realWorld) psEmbedReal(q query) (realReply, error) {
	h, err := realHandle(q, "handle")
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.psEmbed(translated("handle", h))
	if err != nil {
		return realReply{}, err
	}
	return realReply{body: embedRealJSON{HTML: rep.body.(embedJSON).HTML}}, nil
}

var _ = realRoute("/v1/instagram/user/highlight/detail", envSuccess, (*realWorld).psHighlightReal) // 18

// psHighlightReal is the contract's highlight; ids starting with 403 are
// blocked (403), as ids starting with 404 are missing.
func (w *realWorld) psHighlightReal(q query) (realReply, error) {
	id := q.get("id")
	if strings.HasPrefix(id, "403") && len(id) <= 30 && strings.Trim(id, "0123456789") == "" {
		return realReply{}, forbidden("This highlight is not available: the platform blocked it")
	}
	rep, err := w.psHighlight(q)
	if err != nil {
		return realReply{}, err
	}
	h := rep.body.(highlightJSON)
	return realReply{body: highlightRealJSON{ID: h.ID, Title: h.Title, MediaCount: h.MediaCount, User: h.User,
		Items: h.Items}}, nil
}
