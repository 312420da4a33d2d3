package sandbox

import (
	"net/url"
	"strings"
)

// The real service's own endpoints, beyond the contract's 18 (issue 27):
// a creator's videos, one video, a video's comments and their replies, its
// transcript; a profile's posts, reels and highlights, one post, a
// comment's replies. The contract preset has no such paths (404). Shapes
// and parameters are the vendor's samples' (api-config/tiktok-apis.js and
// instagram-apis.js of ScrapeCreators/scrapecreators-cli, as
// docs/upstream.md cites them); the world behind them is content.go's.

// downloadCredits is what download_media (post, video) and
// use_ai_as_fallback (video transcript) cost when asked for, as the
// vendor's catalogue says.
const downloadCredits = 10

// creditsFor is what an answer costs: downloadCredits when the paid
// option param is true, else 1.
func creditsFor(q query, param string) (int64, error) {
	on, err := boolParam(q, param)
	if err != nil || !on {
		return 0, err
	}
	return downloadCredits, nil
}

// msCursor is an offset of a list written as the real service's
// millisecond cursors are: the world's now less the offset, in ms,
// decreasing page after page; msOffset reads it back (absent: 0).
func (w *world) msCursor(off int64) int64 { return (w.now() - off) * 1000 }

func (w *world) msOffset(q query, name string) (int64, error) {
	v := q.get(name)
	if v == "" {
		return 0, nil
	}
	n, ok := parseDigits(v)
	off := w.now() - n/1000
	if !ok || n%1000 != 0 || off < 0 || off >= e18 {
		return 0, badRequest("parameter %q must be a %s this endpoint returned", name, name)
	}
	return off, nil
}

// opaqueOffset reads a string cursor made by opaqueCursor from param name.
func opaqueOffset(q query, name string) (int64, error) {
	if q.get(name) == "" {
		return 0, nil
	}
	off, err := cursorOffset(query{url.Values{"cursor": {q.get(name)}}})
	if err != nil {
		return 0, badRequest("parameter %q is not a cursor this endpoint returned", name)
	}
	return off, nil
}

// realVideoURL reads the url parameter of the short-video endpoints: a
// video on the real platform's host, .../@<handle>/video/<digits>. The
// author's handle follows the account grammar (missing: 404, blocked: 403).
func realVideoURL(q query) (id, author string, err error) {
	raw, err := q.required("url")
	if err != nil {
		return "", "", err
	}
	if err := onHost(q, "url", realSVHosts, realSVSite+"/@<handle>/video/<id>"); err != nil {
		return "", "", err
	}
	u, _ := url.Parse(raw)
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) != 3 || !strings.HasPrefix(segs[0], "@") || segs[0] == "@" || segs[1] != "video" || !isDigitsOnly(segs[2]) {
		return "", "", badRequest("parameter %q must be a video URL like %s/@<handle>/video/<id>", "url", realSVSite)
	}
	author = segs[0][1:]
	if strings.HasPrefix(author, "missing") {
		return "", "", notFound("video not found")
	}
	return segs[2], author, blocked("video", author)
}

func isDigitsOnly(s string) bool {
	return s != "" && len(s) <= 30 && strings.Trim(s, "0123456789") == ""
}

type profileVideosRealJSON struct {
	AwemeList  []awemeJSON `json:"aweme_list"`
	HasMore    int         `json:"has_more"`
	MaxCursor  int64       `json:"max_cursor"`
	MinCursor  int64       `json:"min_cursor"`
	StatusCode int         `json:"status_code"`
	StatusMsg  string      `json:"status_msg"`
}

var _ = realRoute("/v3/tiktok/profile/videos", 0, (*realWorld).profileVideosReal)

// profileVideosReal pages a creator's videos, newest first, by max_cursor
// (handle or user_id; sort_by latest or popular, both the same order here).
func (w *realWorld) profileVideosReal(q query) (realReply, error) {
	if err := refuse(q, "cursor", "max_cursor"); err != nil {
		return realReply{}, err
	}
	h, err := w.userOf(q)
	if err != nil {
		return realReply{}, err
	}
	if err := enumParam(q, "sort_by", []string{"latest", "popular"}); err != nil {
		return realReply{}, err
	}
	if r := q.get("region"); r != "" && !isCountryCode(r) {
		return realReply{}, badRequest("parameter %q must be a two-letter country code", "region")
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return realReply{}, err
	}
	off, err := w.msOffset(q, "max_cursor")
	if err != nil {
		return realReply{}, err
	}
	a, err := w.lookupAccount(h)
	if err != nil {
		return realReply{}, err
	}
	l := w.videoList(a)
	total := l.total()
	if a.private {
		total = 0
	}
	win := paginate(off, total, w.pageSize)
	awemes := make([]awemeJSON, 0, win.end-win.start)
	for p := win.start; p < win.end; p++ {
		v := w.video(creatorVideoID(h, l.index(p)), h)
		awemes = append(awemes, w.aweme(v, musicOf(videoSong(v.ID))))
	}
	return realReply{body: profileVideosRealJSON{AwemeList: awemes, HasMore: boolInt(win.more),
		MaxCursor: w.msCursor(win.next), MinCursor: w.msCursor(win.start)}}, nil
}

type videoRealJSON struct {
	AwemeDetail awemeJSON `json:"aweme_detail"`
	StatusCode  int       `json:"status_code"`
	StatusMsg   string    `json:"status_msg"`
	Transcript  *string   `json:"transcript,omitempty"`
}

var _ = realRoute("/v2/tiktok/video", 0, (*realWorld).videoReal)

// videoReal is one video by URL; get_transcript adds its transcript,
// download_media costs downloadCredits.
func (w *realWorld) videoReal(q query) (realReply, error) {
	id, author, err := realVideoURL(q)
	if err != nil {
		return realReply{}, err
	}
	withTranscript, err := boolParam(q, "get_transcript")
	if err != nil {
		return realReply{}, err
	}
	charge, err := creditsFor(q, "download_media")
	if err != nil {
		return realReply{}, err
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return realReply{}, err
	}
	v := w.video(id, author)
	body := videoRealJSON{AwemeDetail: w.aweme(v, musicOf(videoSong(id)))}
	if withTranscript {
		body.Transcript = videoTranscript(id, author)
	}
	return realReply{body: body, charge: charge}, nil
}

// videoTranscript is the transcript of video id by author: null when the
// author's handle has the token nospeech.
func videoTranscript(id, author string) *string {
	if hasToken(splitTokens(author, ""), "nospeech") {
		return nil
	}
	t := webvtt(id)
	return &t
}

type svCommentUserJSON struct {
	UID      string `json:"uid"`
	UniqueID string `json:"unique_id"`
	SecUID   string `json:"sec_uid"`
	Nickname string `json:"nickname"`
}

type svCommentJSON struct {
	CID               string            `json:"cid"`
	AwemeID           string            `json:"aweme_id"`
	Text              string            `json:"text"`
	CreateTime        int64             `json:"create_time"`
	DiggCount         int64             `json:"digg_count"`
	ReplyCommentTotal int64             `json:"reply_comment_total"`
	ReplyID           string            `json:"reply_id"`
	User              svCommentUserJSON `json:"user"`
}

type svCommentsRealJSON struct {
	Comments   []svCommentJSON `json:"comments"`
	Cursor     int64           `json:"cursor"`
	HasMore    int             `json:"has_more"`
	Total      int64           `json:"total"`
	StatusCode int             `json:"status_code"`
	StatusMsg  string          `json:"status_msg"`
}

func svCommentUser(handle string) svCommentUserJSON {
	return svCommentUserJSON{UID: accountID(handle), UniqueID: handle, SecUID: secUIDOf(handle), Nickname: nickname(handle)}
}

var _ = realRoute("/v1/tiktok/video/comments", 0, (*realWorld).videoCommentsReal)

// videoCommentsReal pages a video's comments by a numeric cursor; each
// says how many replies it has.
func (w *realWorld) videoCommentsReal(q query) (realReply, error) {
	id, author, err := realVideoURL(q)
	if err != nil {
		return realReply{}, err
	}
	off, err := q.offset("cursor")
	if err != nil {
		return realReply{}, err
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return realReply{}, err
	}
	total := videoComments(id, author)
	win := paginate(off, total, w.pageSize)
	posted := w.video(id, author).CreateTime
	seed := hashOf("video", id, "comments")
	out := make([]svCommentJSON, 0, win.end-win.start)
	for i := win.start; i < win.end; i++ {
		cid, user := digitsAt('7', seed, i), handleAt(seed, i)
		out = append(out, svCommentJSON{CID: cid, AwemeID: id, Text: sentence(hashOf("comment", cid, "text"), 1, 12),
			CreateTime: posted + 60*(i+1) + pick("comment", cid, "createdAt", 60), DiggCount: w.grow("comment", cid, "likeCount", 1_000, 5),
			ReplyCommentTotal: commentReplies(cid), ReplyID: "0", User: svCommentUser(user)})
	}
	return realReply{body: svCommentsRealJSON{Comments: out, Cursor: win.next, HasMore: boolInt(win.more), Total: total}}, nil
}

var _ = realRoute("/v1/tiktok/video/comment/replies", envSuccess|envRemaining, (*realWorld).videoCommentRepliesReal)

// videoCommentRepliesReal pages the replies to a video's comment (cid and
// the video's URL) by a numeric cursor.
func (w *realWorld) videoCommentRepliesReal(q query) (realReply, error) {
	id, author, err := realVideoURL(q)
	if err != nil {
		return realReply{}, err
	}
	cid, err := q.required("comment_id")
	if err != nil {
		return realReply{}, err
	}
	if !isDigitsOnly(cid) {
		return realReply{}, badRequest("parameter %q must be a comment's cid", "comment_id")
	}
	off, err := q.offset("cursor")
	if err != nil {
		return realReply{}, err
	}
	total := commentReplies(cid)
	win := paginate(off, total, w.pageSize)
	posted := w.video(id, author).CreateTime
	seed := hashOf("comment", cid, "replies")
	out := make([]svCommentJSON, 0, win.end-win.start)
	for j := win.start; j < win.end; j++ {
		rid, user := digitsAt('7', seed, j), handleAt(seed, j)
		out = append(out, svCommentJSON{CID: rid, AwemeID: id, Text: sentence(hashOf("comment", rid, "text"), 1, 8),
			CreateTime: posted + 86400 + pick("comment", rid, "createdAt", 30*86400), DiggCount: w.grow("comment", rid, "likeCount", 100, 1),
			ReplyID: cid, User: svCommentUser(user)})
	}
	return realReply{body: svCommentsRealJSON{Comments: out, Cursor: win.next, HasMore: boolInt(win.more), Total: total}}, nil
}

type svTranscriptRealJSON struct {
	ID         string  `json:"id"`
	URL        string  `json:"url"`
	Transcript *string `json:"transcript"`
}

var _ = realRoute("/v1/tiktok/video/transcript", 0, (*realWorld).videoTranscriptReal)

// videoTranscriptReal is a video's transcript (null when nobody speaks);
// use_ai_as_fallback costs downloadCredits.
func (w *realWorld) videoTranscriptReal(q query) (realReply, error) {
	id, author, err := realVideoURL(q)
	if err != nil {
		return realReply{}, err
	}
	if l := q.get("language"); l != "" && (len(l) != 2 || strings.Trim(strings.ToLower(l), "abcdefghijklmnopqrstuvwxyz") != "") {
		return realReply{}, badRequest("parameter %q must be a two-letter language code", "language")
	}
	charge, err := creditsFor(q, "use_ai_as_fallback")
	if err != nil {
		return realReply{}, err
	}
	return realReply{body: svTranscriptRealJSON{ID: id, URL: videoURL(author, id), Transcript: videoTranscript(id, author)}, charge: charge}, nil
}

// Photo-sharing posts, as the user posts and reels lists and the post
// endpoint show them.

type psPostOwnerJSON struct {
	ID         string `json:"id"`
	PK         string `json:"pk"`
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

type psCaptionJSON struct {
	Text string `json:"text"`
}

type psPostJSON struct {
	PK           string          `json:"pk"`
	ID           string          `json:"id"`
	Code         string          `json:"code"`
	TakenAt      int64           `json:"taken_at"`
	MediaType    int64           `json:"media_type"`
	ProductType  string          `json:"product_type"`
	Caption      *psCaptionJSON  `json:"caption"`
	Owner        psPostOwnerJSON `json:"owner"`
	CommentCount int64           `json:"comment_count"`
	LikeCount    int64           `json:"like_count"`
	PlayCount    *int64          `json:"play_count,omitempty"`
	IGPlayCount  *int64          `json:"ig_play_count,omitempty"`
	URL          string          `json:"url"`
}

// postPK is the media id of the post code: derived from the code, so every
// answer that shows the post agrees.
func postPK(code string) string { return digitsAt('3', hashOf("post", code, "pk"), 0) }

func psPostOwner(handle string) psPostOwnerJSON {
	id := psAccountID(handle)
	return psPostOwnerJSON{ID: id, PK: id, Username: handle, IsVerified: verified(handle)}
}

// psPost is the post code by owner, as the lists show it at url.
func (w *realWorld) psPost(code, owner, url string) psPostJSON {
	t := postTypes[postKind(code)]
	pk := postPK(code)
	p := psPostJSON{PK: pk, ID: pk + "_" + psAccountID(owner), Code: code, TakenAt: takenAt("post", code),
		MediaType: t.mediaType, ProductType: t.productType, Caption: &psCaptionJSON{Text: sentence(hashOf("post", code, "caption"), 3, 12)},
		Owner: psPostOwner(owner), CommentCount: w.commentCount(code), LikeCount: w.grow("post", code, "likeCount", 10_000, 50), URL: url}
	if t.mediaType == 2 {
		plays := w.grow("reel", code, "playCount", 1_000_000, 10_000)
		p.PlayCount, p.IGPlayCount = &plays, &plays
	}
	return p
}

type userPostsRealJSON struct {
	Items         []psPostJSON    `json:"items"`
	NumResults    int             `json:"num_results"`
	MoreAvailable bool            `json:"more_available"`
	NextMaxID     string          `json:"next_max_id,omitempty"`
	User          psPostOwnerJSON `json:"user"`
	Status        string          `json:"status"`
}

// psCreator reads the handle of the photo-sharing lists (the sandbox
// knows accounts by handle only: a user_id is refused) and its account.
func (w *realWorld) psCreator(q query) (string, account, error) {
	if q.get("user_id") != "" {
		return "", account{}, badRequest("parameter %q: this stand-in knows accounts by handle only", "user_id")
	}
	h, err := realHandle(q, "handle")
	if err != nil {
		return "", account{}, err
	}
	a, err := w.lookupAccount(h)
	return h, a, err
}

// psList reads a profile list's request: its account (psCreator), trim,
// and the offset of the opaque cursor it takes as cursor (the contract's
// name refused).
func (w *realWorld) psList(q query, cursor string) (string, account, int64, error) {
	if err := refuse(q, "cursor", cursor); err != nil {
		return "", account{}, 0, err
	}
	h, a, err := w.psCreator(q)
	if err != nil {
		return "", account{}, 0, err
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return "", account{}, 0, err
	}
	off, err := opaqueOffset(q, cursor)
	return h, a, off, err
}

var _ = realRoute("/v2/instagram/user/posts", 0, (*realWorld).userPostsReal)

// userPostsReal pages a profile's posts (reels included), newest first, by
// an opaque next_max_id.
func (w *realWorld) userPostsReal(q query) (realReply, error) {
	h, a, off, err := w.psList(q, "next_max_id")
	if err != nil {
		return realReply{}, err
	}
	l := w.postList(a)
	total := l.total()
	if a.private {
		total = 0
	}
	win := paginate(off, total, w.pageSize)
	body := userPostsRealJSON{Items: make([]psPostJSON, 0, win.end-win.start), MoreAvailable: win.more, User: psPostOwner(h), Status: "ok"}
	for p := win.start; p < win.end; p++ {
		code := postCodeAt(h, l.index(p))
		body.Items = append(body.Items, w.psPost(code, h, realPSSite+"/"+h+"/p/"+code+"/"))
	}
	body.NumResults = len(body.Items)
	if win.more {
		body.NextMaxID = opaqueCursor(win.next)
	}
	return realReply{body: body}, nil
}

type reelItemJSON struct {
	Media psPostJSON `json:"media"`
}

type pagingInfoJSON struct {
	MaxID         string `json:"max_id,omitempty"`
	MoreAvailable bool   `json:"more_available"`
}

type userReelsRealJSON struct {
	Items      []reelItemJSON `json:"items"`
	PagingInfo pagingInfoJSON `json:"paging_info"`
	Status     string         `json:"status"`
}

var _ = realRoute("/v1/instagram/user/reels", 0, (*realWorld).userReelsReal)

// userReelsReal pages a profile's reels (its posts that are reels, in their
// order) by an opaque max_id; entries are under items[].media.
func (w *realWorld) userReelsReal(q query) (realReply, error) {
	h, a, off, err := w.psList(q, "max_id")
	if err != nil {
		return realReply{}, err
	}
	first, total := reelsOf(w.postList(a))
	if a.private {
		total = 0
	}
	win := paginate(off, total, w.pageSize)
	body := userReelsRealJSON{Items: make([]reelItemJSON, 0, win.end-win.start), PagingInfo: pagingInfoJSON{MoreAvailable: win.more}, Status: "ok"}
	for p := win.start; p < win.end; p++ {
		code := postCodeAt(h, first+3*p)
		body.Items = append(body.Items, reelItemJSON{Media: w.psPost(code, h, realPSSite+"/reel/"+code)})
	}
	if win.more {
		body.PagingInfo.MaxID = opaqueCursor(win.next)
	}
	return realReply{body: body}, nil
}

type postDetailJSON struct {
	Typename          string          `json:"__typename"`
	ID                string          `json:"id"`
	Shortcode         string          `json:"shortcode"`
	IsVideo           bool            `json:"is_video"`
	ProductType       string          `json:"product_type"`
	VideoPlayCount    *int64          `json:"video_play_count,omitempty"`
	Owner             psPostOwnerJSON `json:"owner"`
	Caption           edgesJSON       `json:"edge_media_to_caption"`
	ParentComments    countJSON       `json:"edge_media_to_parent_comment"`
	PreviewLikes      countJSON       `json:"edge_media_preview_like"`
	TakenAtTimestamp  int64           `json:"taken_at_timestamp"`
	CommentsDisabled  bool            `json:"comments_disabled"`
	LikeAndViewHidden bool            `json:"like_and_view_counts_disabled"`
}

type edgesJSON struct {
	Edges []struct {
		Node psCaptionJSON `json:"node"`
	} `json:"edges"`
}

type postRealJSON struct {
	Data struct {
		Media postDetailJSON `json:"xdt_shortcode_media"`
	} `json:"data"`
	Extensions struct {
		IsFinal bool `json:"is_final"`
	} `json:"extensions"`
	Status string `json:"status"`
}

var _ = realRoute("/v1/instagram/post", 0, (*realWorld).postReal)

// postReal is one post or reel by URL: its owner is the URL's account
// segment (/<handle>/p/<code>/), else a hashed one; download_media costs
// downloadCredits.
func (w *realWorld) postReal(q query) (realReply, error) {
	code, err := realPost(q)
	if err != nil {
		return realReply{}, err
	}
	if strings.HasPrefix(code, "missing") {
		return realReply{}, notFound("post not found")
	}
	charge, err := creditsFor(q, "download_media")
	if err != nil {
		return realReply{}, err
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return realReply{}, err
	}
	owner := handleAt(hashOf("post", code, "owner"), 0)
	if u, _ := url.Parse(q.get("url")); u != nil {
		if segs := strings.Split(strings.Trim(u.Path, "/"), "/"); len(segs) >= 3 && handleRe(segs[0]) {
			owner = segs[0]
		}
	}
	p := w.psPost(code, owner, "")
	d := postDetailJSON{Typename: "XDTGraphImage", ID: p.PK, Shortcode: code, IsVideo: p.MediaType == 2, ProductType: p.ProductType,
		VideoPlayCount: p.PlayCount, Owner: p.Owner, ParentComments: countJSON{p.CommentCount}, PreviewLikes: countJSON{p.LikeCount},
		TakenAtTimestamp: p.TakenAt}
	if d.IsVideo {
		d.Typename = "XDTGraphVideo"
	}
	d.Caption.Edges = append(d.Caption.Edges, struct {
		Node psCaptionJSON `json:"node"`
	}{Node: *p.Caption})
	var body postRealJSON
	body.Data.Media, body.Extensions.IsFinal, body.Status = d, true, "ok"
	return realReply{body: body, charge: charge}, nil
}

// handleRe reports whether s can be an account segment of a post URL.
func handleRe(s string) bool {
	if s == "" || len(s) > 64 || s == "p" || s == "reel" || s == "reels" || s == "tv" {
		return false
	}
	return strings.Trim(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz0123456789._") == ""
}

type psRepliesRealJSON struct {
	Comments []psReplyJSON `json:"comments"`
	Cursor   *string       `json:"cursor"`
	HasMore  bool          `json:"has_more"`
}

var _ = realRoute("/v1/instagram/post/comment/replies", envSuccess|envRemaining, (*realWorld).postCommentRepliesReal)

// postCommentRepliesReal pages the replies to a comment of a post (its id
// and the post's URL) by an opaque cursor: all of its child_comment_count,
// the first of them those the comments list shows with include_replies.
func (w *realWorld) postCommentRepliesReal(q query) (realReply, error) {
	code, err := realPost(q)
	if err != nil {
		return realReply{}, err
	}
	cid, err := q.required("comment_id")
	if err != nil {
		return realReply{}, err
	}
	if !isDigitsOnly(cid) {
		return realReply{}, badRequest("parameter %q must be a comment's id", "comment_id")
	}
	off, err := cursorOffset(q)
	if err != nil {
		return realReply{}, err
	}
	win := paginate(off, pick("comment", cid, "childCommentCount", 20), w.pageSize)
	body := psRepliesRealJSON{Comments: make([]psReplyJSON, 0, win.end-win.start), HasMore: win.more}
	for j := win.start; j < win.end; j++ {
		body.Comments = append(body.Comments, w.psReply(code, cid, j))
	}
	if win.more {
		c := opaqueCursor(win.next)
		body.Cursor = &c
	}
	return realReply{body: body}, nil
}

type highlightEntryJSON struct {
	Typename string `json:"__typename"`
	ID       string `json:"id"`
	Title    string `json:"title"`
	Cover    struct {
		ThumbnailSrc string `json:"thumbnail_src"`
	} `json:"cover_media"`
	Owner struct {
		Typename string `json:"__typename"`
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"owner"`
}

type highlightsRealJSON struct {
	Highlights []highlightEntryJSON `json:"highlights"`
}

var _ = realRoute("/v1/instagram/user/highlights", envSuccess, (*realWorld).userHighlightsReal)

// userHighlightsReal lists a profile's highlights (one answer, no paging);
// each id's detail is the highlight detail endpoint's.
func (w *realWorld) userHighlightsReal(q query) (realReply, error) {
	h, a, err := w.psCreator(q)
	if err != nil {
		return realReply{}, err
	}
	n := highlightCount(h)
	if a.private {
		n = 0
	}
	out := make([]highlightEntryJSON, 0, n)
	for i := range n {
		id := highlightIDAt(h, i)
		e := highlightEntryJSON{Typename: "GraphHighlightReel", ID: id, Title: sentence(hashOf("highlight", id, "title"), 1, 3)}
		e.Cover.ThumbnailSrc = psCDN + "/highlight/" + id + ".jpg"
		e.Owner.Typename, e.Owner.ID, e.Owner.Username = "GraphUser", psAccountID(h), h
		out = append(out, e)
	}
	return realReply{body: highlightsRealJSON{Highlights: out}}, nil
}
