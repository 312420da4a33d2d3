package real

import (
	"cmp"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/contract"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// The real service's own endpoints, beyond the contract's 18 (issue 27):
// a creator's videos, one video, a video's comments and their replies, its
// transcript; a profile's posts, reels and highlights, one post, a
// comment's replies. The contract dialect has no such paths (404). Shapes
// and parameters are the vendor's samples' (api-config/tiktok-apis.js and
// instagram-apis.js of ScrapeCreators/scrapecreators-cli, as
// docs/upstream.md cites them); the world behind them is world/content.go.

type profileVideosJSON struct {
	AwemeList  []awemeJSON `json:"aweme_list"`
	HasMore    int         `json:"has_more"`
	MaxCursor  int64       `json:"max_cursor"`
	MinCursor  int64       `json:"min_cursor"`
	StatusCode int         `json:"status_code"`
	StatusMsg  string      `json:"status_msg"`
}

// A creator's videos, newest first, paged by max_cursor (handle or
// user_id; sort_by latest or popular, both the same order here).
var _ = route("/v3/tiktok/profile/videos", 0, list(creatorQuery, (*world.World).CreatorVideos, profileVideosPage))

// creatorQuery reads a creator videos request: its account (handle or
// user_id), the filters it accepts, the offset max_cursor stands for.
func creatorQuery(s *service, p *api.Params) (world.Account, int64) {
	refuse(p, "cursor", "max_cursor")
	h := s.userOf(p)
	p.Enum("sort_by", []string{"latest", "popular"})
	p.Country("region")
	p.Bool("trim")
	off := s.msOffset(p, "max_cursor")
	return s.account(p, h), off
}

// profileVideosPage is a page of a creator's videos; its cursors are
// milliseconds (msCursor).
func profileVideosPage(s *service, _ world.Account, videos []world.Video, win world.Window) any {
	return profileVideosJSON{AwemeList: s.awemes(videos), HasMore: boolInt(win.More),
		MaxCursor: s.msCursor(win.Next), MinCursor: s.msCursor(win.Start)}
}

type videoJSON struct {
	AwemeDetail awemeJSON `json:"aweme_detail"`
	StatusCode  int       `json:"status_code"`
	StatusMsg   string    `json:"status_msg"`
	Transcript  *string   `json:"transcript,omitempty"`
}

var _ = route("/v2/tiktok/video", 0, video)

// video is one video by URL; get_transcript adds its transcript,
// download_media costs downloadCredits.
func video(s *service, p *api.Params) reply {
	id, author := videoURL(p)
	withTranscript, charge := p.Bool("get_transcript"), creditsFor(p, "download_media")
	p.Bool("trim")
	if !p.OK() {
		return reply{}
	}
	body := videoJSON{AwemeDetail: s.aweme(s.Video(id, author), world.VideoSong(id))}
	if withTranscript {
		body.Transcript = world.VideoTranscript(id, author)
	}
	return reply{body: body, charge: charge}
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

type svCommentsJSON struct {
	Comments   []svCommentJSON `json:"comments"`
	Cursor     int64           `json:"cursor"`
	HasMore    int             `json:"has_more"`
	Total      int64           `json:"total"`
	StatusCode int             `json:"status_code"`
	StatusMsg  string          `json:"status_msg"`
}

// svComments is a page of the comments (or the replies) under video id.
func svComments(id string, cs []world.Comment, win world.Window, total int64) svCommentsJSON {
	out := make([]svCommentJSON, len(cs))
	for i, c := range cs {
		out[i] = svCommentJSON{CID: c.ID, AwemeID: id, Text: c.Text, CreateTime: c.CreatedAt, DiggCount: c.Likes,
			ReplyCommentTotal: c.Children, ReplyID: cmp.Or(c.Parent, "0"),
			User: svCommentUserJSON{UID: world.AccountID(c.User), UniqueID: c.User, SecUID: world.SecUID(c.User), Nickname: world.Nickname(c.User)}}
	}
	return svCommentsJSON{Comments: out, Cursor: win.Next, HasMore: boolInt(win.More), Total: total}
}

var _ = route("/v1/tiktok/video/comments", 0, videoComments)

// videoComments pages a video's comments by a numeric cursor; each says
// how many replies it has.
func videoComments(s *service, p *api.Params) reply {
	id, author := videoURL(p)
	off := p.Offset("cursor")
	p.Bool("trim")
	if !p.OK() {
		return reply{}
	}
	cs, win, total := s.VideoComments(id, author, off)
	return reply{body: svComments(id, cs, win, total)}
}

// commentID reads the comment_id of the replies endpoints.
func commentID(p *api.Params, what string) string {
	cid := p.Required("comment_id")
	if p.OK() && !api.IsDigits(cid) {
		p.Fail("parameter %q must be a comment's %s", "comment_id", what)
	}
	return cid
}

var _ = route("/v1/tiktok/video/comment/replies", envSuccess|envRemaining, videoCommentReplies)

// videoCommentReplies pages the replies to a video's comment (cid and the
// video's URL) by a numeric cursor.
func videoCommentReplies(s *service, p *api.Params) reply {
	id, author := videoURL(p)
	cid, off := commentID(p, "cid"), p.Offset("cursor")
	if !p.OK() {
		return reply{}
	}
	cs, win, total := s.VideoCommentReplies(id, author, cid, off)
	return reply{body: svComments(id, cs, win, total)}
}

type svTranscriptJSON struct {
	ID         string  `json:"id"`
	URL        string  `json:"url"`
	Transcript *string `json:"transcript"`
}

var _ = route("/v1/tiktok/video/transcript", 0, videoTranscript)

// videoTranscript is a video's transcript (null when nobody speaks);
// use_ai_as_fallback costs downloadCredits.
func videoTranscript(_ *service, p *api.Params) reply {
	id, author := videoURL(p)
	if l := p.Get("language"); l != "" && (len(l) != 2 || strings.Trim(strings.ToLower(l), "abcdefghijklmnopqrstuvwxyz") != "") {
		p.Fail("parameter %q must be a two-letter language code", "language")
	}
	charge := creditsFor(p, "use_ai_as_fallback")
	return reply{body: svTranscriptJSON{ID: id, URL: webURL(author, id), Transcript: world.VideoTranscript(id, author)}, charge: charge}
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

func psPostOwner(handle string) psPostOwnerJSON {
	id := world.PSAccountID(handle)
	return psPostOwnerJSON{ID: id, PK: id, Username: handle, IsVerified: world.Verified(handle)}
}

// psPost is post p as the lists show it at url.
func psPost(p world.Post, url string) psPostJSON {
	j := psPostJSON{PK: p.PK, ID: p.PK + "_" + world.PSAccountID(p.Owner), Code: p.Code, TakenAt: p.TakenAt,
		MediaType: p.MediaType, ProductType: p.ProductType, Caption: &psCaptionJSON{Text: p.Caption},
		Owner: psPostOwner(p.Owner), CommentCount: p.Comments, LikeCount: p.Likes, URL: url}
	if p.MediaType == 2 {
		plays := p.Plays
		j.PlayCount, j.IGPlayCount = &plays, &plays
	}
	return j
}

type userPostsJSON struct {
	Items         []psPostJSON    `json:"items"`
	NumResults    int             `json:"num_results"`
	MoreAvailable bool            `json:"more_available"`
	NextMaxID     string          `json:"next_max_id,omitempty"`
	User          psPostOwnerJSON `json:"user"`
	Status        string          `json:"status"`
}

// psCreator reads the handle of the photo-sharing lists (the sandbox
// knows accounts by handle only: a user_id is refused) and its account.
func (s *service) psCreator(p *api.Params) world.Account {
	if p.Get("user_id") != "" {
		p.Fail("parameter %q: this stand-in knows accounts by handle only", "user_id")
	}
	return s.account(p, handle(p, "handle"))
}

// psListQuery reads a profile list's request: its account (psCreator),
// trim, and the offset of the opaque cursor it takes as cursor (the
// contract's name refused).
func psListQuery(cursor string) func(*service, *api.Params) (world.Account, int64) {
	return func(s *service, p *api.Params) (world.Account, int64) {
		refuse(p, "cursor", cursor)
		a := s.psCreator(p)
		p.Bool("trim")
		return a, opaqueOffset(p, cursor)
	}
}

// nextOpaque is the opaque cursor of the page after win; "" on the last.
func nextOpaque(win world.Window) string {
	if !win.More {
		return ""
	}
	return opaqueCursor(win.Next)
}

// A profile's posts (reels included), newest first, paged by an opaque
// next_max_id.
var _ = route("/v2/instagram/user/posts", 0, list(psListQuery("next_max_id"), (*world.World).CreatorPosts, userPostsPage))

// userPostsPage is a page of a profile's posts, each at its URL under the
// profile.
func userPostsPage(_ *service, a world.Account, posts []world.Post, win world.Window) any {
	items := api.Each(posts, func(p world.Post) psPostJSON { return psPost(p, psSite+"/"+a.Handle+"/p/"+p.Code+"/") })
	return userPostsJSON{Items: items, NumResults: len(posts), MoreAvailable: win.More,
		NextMaxID: nextOpaque(win), User: psPostOwner(a.Handle), Status: "ok"}
}

type reelItemJSON struct {
	Media psPostJSON `json:"media"`
}

type pagingInfoJSON struct {
	MaxID         string `json:"max_id,omitempty"`
	MoreAvailable bool   `json:"more_available"`
}

type userReelsJSON struct {
	Items      []reelItemJSON `json:"items"`
	PagingInfo pagingInfoJSON `json:"paging_info"`
	Status     string         `json:"status"`
}

// A profile's reels (its posts that are reels, in their order), paged by
// an opaque max_id; entries are under items[].media.
var _ = route("/v1/instagram/user/reels", 0, list(psListQuery("max_id"), (*world.World).CreatorReels, userReelsPage))

// userReelsPage is a page of a profile's reels, each under media.
func userReelsPage(_ *service, _ world.Account, reels []world.Post, win world.Window) any {
	items := api.Each(reels, func(p world.Post) reelItemJSON { return reelItemJSON{Media: psPost(p, psSite+"/reel/"+p.Code)} })
	return userReelsJSON{Items: items, PagingInfo: pagingInfoJSON{MaxID: nextOpaque(win), MoreAvailable: win.More}, Status: "ok"}
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
	ParentComments    contract.Count  `json:"edge_media_to_parent_comment"`
	PreviewLikes      contract.Count  `json:"edge_media_preview_like"`
	TakenAtTimestamp  int64           `json:"taken_at_timestamp"`
	CommentsDisabled  bool            `json:"comments_disabled"`
	LikeAndViewHidden bool            `json:"like_and_view_counts_disabled"`
}

type edgesJSON struct {
	Edges []edgeJSON `json:"edges"`
}

type edgeJSON struct {
	Node psCaptionJSON `json:"node"`
}

type postJSON struct {
	Data struct {
		Media postDetailJSON `json:"xdt_shortcode_media"`
	} `json:"data"`
	Extensions struct {
		IsFinal bool `json:"is_final"`
	} `json:"extensions"`
	Status string `json:"status"`
}

var _ = route("/v1/instagram/post", 0, postDetail)

// postDetail is one post or reel by URL: its owner is the URL's account
// segment (/<handle>/p/<code>/), else a hashed one; download_media costs
// downloadCredits.
func postDetail(s *service, p *api.Params) reply {
	code := post(p)
	if p.OK() {
		p.Keep(world.PostExists(code))
	}
	charge := creditsFor(p, "download_media")
	p.Bool("trim")
	if !p.OK() {
		return reply{}
	}
	owner := world.PostOwner(code)
	if u, _ := url.Parse(p.Get("url")); u != nil {
		if segs := strings.Split(strings.Trim(u.Path, "/"), "/"); len(segs) >= 3 && isHandleSegment(segs[0]) {
			owner = segs[0]
		}
	}
	j := psPost(s.Post(code, owner), "")
	d := postDetailJSON{Typename: "XDTGraphImage", ID: j.PK, Shortcode: code, IsVideo: j.MediaType == 2, ProductType: j.ProductType,
		VideoPlayCount: j.PlayCount, Owner: j.Owner, Caption: edgesJSON{Edges: []edgeJSON{{Node: *j.Caption}}},
		ParentComments: contract.Count{Count: j.CommentCount}, PreviewLikes: contract.Count{Count: j.LikeCount}, TakenAtTimestamp: j.TakenAt}
	if d.IsVideo {
		d.Typename = "XDTGraphVideo"
	}
	var body postJSON
	body.Data.Media, body.Extensions.IsFinal, body.Status = d, true, "ok"
	return reply{body: body, charge: charge}
}

// isHandleSegment reports whether s can be an account segment of a post
// URL.
func isHandleSegment(s string) bool {
	if s == "" || len(s) > 64 || s == "p" || s == "reel" || s == "reels" || s == "tv" {
		return false
	}
	return strings.Trim(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz0123456789._") == ""
}

type psRepliesJSON struct {
	Comments []replyJSON `json:"comments"`
	Cursor   *string     `json:"cursor"`
	HasMore  bool        `json:"has_more"`
}

var _ = route("/v1/instagram/post/comment/replies", envSuccess|envRemaining, postCommentReplies)

// postCommentReplies pages the replies to a comment of a post (its id and
// the post's URL) by an opaque cursor: all of its child_comment_count, the
// first of them those the comments list shows with include_replies.
func postCommentReplies(s *service, p *api.Params) reply {
	code, cid, off := post(p), commentID(p, "id"), opaqueOffset(p, "cursor")
	if !p.OK() {
		return reply{}
	}
	replies, win := s.PostCommentReplies(code, cid, off)
	body := psRepliesJSON{Comments: make([]replyJSON, len(replies)), HasMore: win.More}
	for i, r := range replies {
		body.Comments[i] = replyJSON{commentJSON: commentOf(r), ParentCommentID: r.Parent}
	}
	if c := nextOpaque(win); c != "" {
		body.Cursor = &c
	}
	return reply{body: body}
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

type highlightsJSON struct {
	Highlights []highlightEntryJSON `json:"highlights"`
}

var _ = route("/v1/instagram/user/highlights", envSuccess, userHighlights)

// userHighlights lists a profile's highlights (one answer, no paging);
// each id's detail is the highlight detail endpoint's.
func userHighlights(s *service, p *api.Params) reply {
	a := s.psCreator(p)
	ids := world.Highlights(a)
	out := make([]highlightEntryJSON, len(ids))
	for i, id := range ids {
		e := &out[i]
		e.Typename, e.ID, e.Title = "GraphHighlightReel", id, world.HighlightTitle(id)
		e.Cover.ThumbnailSrc = world.PSCDN + "/highlight/" + id + ".jpg"
		e.Owner.Typename, e.Owner.ID, e.Owner.Username = "GraphUser", world.PSAccountID(a.Handle), a.Handle
	}
	return reply{body: highlightsJSON{Highlights: out}}
}
