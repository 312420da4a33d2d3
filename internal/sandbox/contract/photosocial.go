package contract

import (
	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// Response shapes of the photo-sharing platform (snake_case as in the spec).

// Count is a {"count": n} object.
type Count struct {
	Count int64 `json:"count"`
}

// PSUser is a photo-sharing profile's user; the real service's is the
// same.
type PSUser struct {
	ID                       string  `json:"id"`
	Username                 string  `json:"username"`
	FullName                 string  `json:"full_name"`
	Biography                string  `json:"biography"`
	ProfilePicURL            string  `json:"profile_pic_url"`
	EdgeFollowedBy           Count   `json:"edge_followed_by"`
	EdgeFollow               Count   `json:"edge_follow"`
	EdgeOwnerToTimelineMedia Count   `json:"edge_owner_to_timeline_media"`
	IsVerified               bool    `json:"is_verified"`
	IsPrivate                bool    `json:"is_private"`
	IsBusinessAccount        bool    `json:"is_business_account"`
	CategoryName             *string `json:"category_name"`
	BusinessEmail            *string `json:"business_email"`
	BusinessPhoneNumber      *string `json:"business_phone_number"`
	PublicEmail              *string `json:"public_email"`
	PublicPhoneNumber        *string `json:"public_phone_number"`
}

// PSUserOf is profile p's user: contact fields and category_name null
// unless a business.
func PSUserOf(p world.PSProfile) PSUser {
	u := PSUser{ID: p.ID, Username: p.Handle, FullName: p.FullName, Biography: p.Biography, ProfilePicURL: p.Picture,
		EdgeFollowedBy: Count{p.Followers}, EdgeFollow: Count{p.Following}, EdgeOwnerToTimelineMedia: Count{p.Posts},
		IsVerified: world.Verified(p.Handle), IsBusinessAccount: p.Business}
	if c := p.Contact; c != nil {
		u.CategoryName, u.BusinessEmail, u.BusinessPhoneNumber = &c.Category, &c.Email, &c.Phone
		u.PublicEmail, u.PublicPhoneNumber = &c.PublicEmail, &c.Phone
	}
	return u
}

type psProfileJSON struct {
	Success bool `json:"success"`
	Data    struct {
		User PSUser `json:"user"`
	} `json:"data"`
}

type commentJSON struct {
	ID                string          `json:"id"`
	Text              string          `json:"text"`
	User              commentUserJSON `json:"user"`
	CreatedAt         int64           `json:"created_at"`
	LikeCount         int64           `json:"like_count"`
	ChildCommentCount int64           `json:"child_comment_count"`
}

type commentUserJSON struct {
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

type commentsPageJSON struct {
	Success  bool          `json:"success"`
	Comments []commentJSON `json:"comments"`
	Cursor   string        `json:"cursor"`
}

type reelJSON struct {
	ID        string        `json:"id"`
	Code      string        `json:"code"`
	Caption   string        `json:"caption"`
	Owner     reelOwnerJSON `json:"owner"`
	PlayCount int64         `json:"play_count"`
	LikeCount int64         `json:"like_count"`
	TakenAt   int64         `json:"taken_at"`
}

type reelOwnerJSON struct {
	Username string `json:"username"`
}

type reelsPageJSON struct {
	Success bool       `json:"success"`
	Reels   []reelJSON `json:"reels"`
}

// Transcript is a post's transcript entry; the real service's is the same.
type Transcript struct {
	ID        string `json:"id"`
	Shortcode string `json:"shortcode"`
	Text      string `json:"text"`
}

// TranscriptsOf are the transcripts of the post code.
func TranscriptsOf(code string) []Transcript {
	ts := world.Transcripts(code)
	out := make([]Transcript, len(ts))
	for i, t := range ts {
		out[i] = Transcript{ID: t.ID, Shortcode: t.Code, Text: t.Text}
	}
	return out
}

type transcriptsJSON struct {
	Success     bool         `json:"success"`
	Transcripts []Transcript `json:"transcripts"`
}

type embedJSON struct {
	Success bool   `json:"success"`
	HTML    string `json:"html"`
}

// Highlight is a highlight's detail; the real service's is the same
// without success.
type Highlight struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	MediaCount int64           `json:"media_count"`
	User       highlightUser   `json:"user"`
	Items      []highlightItem `json:"items"`
}

type highlightJSON struct {
	Success bool `json:"success"`
	Highlight
}

type highlightUser struct {
	Username   string `json:"username"`
	IsVerified bool   `json:"is_verified"`
}

type highlightItem struct {
	ID            string         `json:"id"`
	MediaType     int64          `json:"media_type"`
	TakenAt       int64          `json:"taken_at"`
	ThumbnailURL  string         `json:"thumbnail_url"`
	VideoVersions []videoVersion `json:"video_versions"`
}

type videoVersion struct {
	URL    string `json:"url"`
	Width  int64  `json:"width"`
	Height int64  `json:"height"`
}

// HighlightOf is highlight h's detail: its id with the highlight: prefix,
// its videos in two sizes.
func HighlightOf(h world.Highlight) Highlight {
	out := Highlight{ID: "highlight:" + h.ID, Title: h.Title, MediaCount: int64(len(h.Items)),
		User: highlightUser{Username: h.Owner, IsVerified: world.Verified(h.Owner)}, Items: make([]highlightItem, len(h.Items))}
	for i, it := range h.Items {
		media := world.PSCDN + "/media/" + it.ID
		out.Items[i] = highlightItem{ID: it.ID, MediaType: it.MediaType, TakenAt: it.TakenAt,
			ThumbnailURL: media + ".jpg", VideoVersions: []videoVersion{}}
		if it.MediaType == 2 {
			out.Items[i].VideoVersions = []videoVersion{{URL: media + "-720.mp4", Width: 720, Height: 1280},
				{URL: media + "-480.mp4", Width: 480, Height: 854}}
		}
	}
	return out
}

var _ = route("/photosocial/profile", psProfile) // 13

// psProfile is endpoint 13. A private account answers 200 with {} and costs
// no credit.
func psProfile(w *world.World, p *api.Params) reply {
	a := queriedAccount(w, p)
	if a.Private {
		return reply{body: struct{}{}, free: true}
	}
	var body psProfileJSON
	body.Success, body.Data.User = true, PSUserOf(w.PSProfile(a))
	return billable(body)
}

// queriedPost is the code of the post or reel named by the "url"
// parameter.
func queriedPost(p *api.Params) string {
	code := world.PostCode(p)
	p.Keep(world.PostExists(code))
	return code
}

// Endpoint 14 pages the world's comments of a post (see commentsPage).
var _ = route("/photosocial/post/comments", list(queriedPost, (*world.World).PostComments, commentsPage)) // 14

// commentOf is comment c as a post's comments list shows it.
func commentOf(c world.Comment) commentJSON {
	return commentJSON{ID: c.ID, Text: c.Text, User: commentUserJSON{Username: c.User, IsVerified: world.Verified(c.User)},
		CreatedAt: c.CreatedAt, LikeCount: c.Likes, ChildCommentCount: c.Children}
}

// commentsPage is a page of a post's comments: cursor in, cursor out, no
// hasMore; the last page answers cursor "".
func commentsPage(comments []world.Comment, win world.Window) any {
	cursor := ""
	if win.More {
		cursor = api.Itoa(win.Next)
	}
	return commentsPageJSON{Success: true, Comments: api.Each(comments, commentOf), Cursor: cursor}
}

var _ = route("/photosocial/reels/search", psReelsSearch) // 15

// psReelsSearch is endpoint 15: page numbers from 1, world.ReelsPageSize
// reels a page; a page past the end is an empty list (200, billable).
func psReelsSearch(w *world.World, p *api.Params) reply {
	kw, page := world.ReadKeyword(p, p.Required("query"), "query"), p.Page("page")
	if !p.OK() {
		return reply{}
	}
	reels := w.ReelsSearch(kw, page)
	out := make([]reelJSON, len(reels))
	for i, r := range reels {
		out[i] = reelJSON{ID: r.ID, Code: r.Code, Caption: r.Caption, Owner: reelOwnerJSON{Username: r.Owner},
			PlayCount: r.Plays, LikeCount: r.Likes, TakenAt: r.TakenAt}
	}
	return billable(reelsPageJSON{Success: true, Reels: out})
}

var _ = route("/photosocial/media/transcript", psTranscript) // 16

// psTranscript is endpoint 16: no entries is still a billable 200.
func psTranscript(_ *world.World, p *api.Params) reply {
	return billable(transcriptsJSON{Success: true, Transcripts: TranscriptsOf(queriedPost(p))})
}

var _ = route("/photosocial/user/embed", psEmbed) // 17

// psEmbed is endpoint 17.
func psEmbed(w *world.World, p *api.Params) reply {
	return billable(embedJSON{Success: true, HTML: world.Embed(queriedAccount(w, p).Handle)})
}

var _ = route("/photosocial/user/highlight/detail", psHighlight) // 18

// psHighlight is endpoint 18.
func psHighlight(w *world.World, p *api.Params) reply {
	id := world.ReadHighlightID(p)
	if !p.OK() {
		return reply{}
	}
	return billable(highlightJSON{Success: true, Highlight: HighlightOf(w.Highlight(id))})
}
