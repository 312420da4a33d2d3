package real

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/contract"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// Short-video shapes of the real dialect: the platform's snake_case (videos
// are "awemes"), except the profile and the live user, which are camelCase.
// Field names are copied from the vendor's sample responses.

type awemeJSON struct {
	AwemeID    string          `json:"aweme_id"`
	Desc       string          `json:"desc"`
	CreateTime int64           `json:"create_time"`
	Statistics awemeStatsJSON  `json:"statistics"`
	Author     awemeAuthorJSON `json:"author"`
	Music      awemeMusicJSON  `json:"music"`
	ChaList    []chaJSON       `json:"cha_list"` // null when the video carries none, as in the samples
	ShareURL   string          `json:"share_url"`
}

// chaJSON is a hashtag a video carries (cha_list): the samples' members
// that name it, its counters 0 as they show them.
type chaJSON struct {
	ChaName   string `json:"cha_name"`
	CID       string `json:"cid"`
	Type      int    `json:"type"`
	UserCount int64  `json:"user_count"`
	ViewCount int64  `json:"view_count"`
}

type awemeStatsJSON struct {
	AwemeID      string `json:"aweme_id"`
	PlayCount    int64  `json:"play_count"`
	DiggCount    int64  `json:"digg_count"`
	CommentCount int64  `json:"comment_count"`
	ShareCount   int64  `json:"share_count"`
}

// awemeAuthorJSON is a video's author. Verified accounts have custom_verify
// "Verified account" (the samples' verification_type does not tell).
type awemeAuthorJSON struct {
	UID          string `json:"uid"`
	UniqueID     string `json:"unique_id,omitempty"` // left out by the trending feed
	SecUID       string `json:"sec_uid"`
	Nickname     string `json:"nickname"`
	CustomVerify string `json:"custom_verify"`
}

// awemeMusicJSON is a video's sound. id is a JSON number wider than a
// float64's 53 bits, so a client must decode it exactly (or read id_str).
type awemeMusicJSON struct {
	ID    json.Number `json:"id,omitempty"` // left out when the id is not digits
	IDStr string      `json:"id_str"`
	Title string      `json:"title"`
}

// awemePageJSON is the hashtag search and the song's videos.
type awemePageJSON struct {
	AwemeList  []awemeJSON `json:"aweme_list"`
	Cursor     int64       `json:"cursor"`
	HasMore    int         `json:"has_more"` // 0 or 1
	StatusCode int         `json:"status_code"`
	StatusMsg  string      `json:"status_msg"`
}

// keywordPageJSON is the keyword search: no has_more; the last page has no
// cursor.
type keywordPageJSON struct {
	Cursor         *int64 `json:"cursor,omitempty"`
	SearchItemList any    `json:"search_item_list"`
}

type searchItemJSON struct {
	AwemeInfo awemeJSON `json:"aweme_info"`
}

// trimmedSearchItemJSON is a keyword search item with trim=true: flat.
type trimmedSearchItemJSON struct {
	AwemeID       string          `json:"aweme_id"`
	Desc          string          `json:"desc"`
	Statistics    awemeStatsJSON  `json:"statistics"`
	Author        awemeAuthorJSON `json:"author"`
	URL           string          `json:"url"`
	CreateTimeUTC string          `json:"create_time_utc"`
}

type topItemJSON struct {
	ID          string          `json:"id"`
	Desc        string          `json:"desc"`
	ContentType string          `json:"content_type"`
	CreateTime  string          `json:"create_time"` // ISO 8601
	Statistics  awemeStatsJSON  `json:"statistics"`
	Author      awemeAuthorJSON `json:"author"`
	Music       awemeMusicJSON  `json:"music"`
}

// topPageJSON is the top search: no has_more; the last page has no
// cursor.
type topPageJSON struct {
	Items  []topItemJSON `json:"items"`
	Cursor *int64        `json:"cursor,omitempty"`
}

// followUserJSON is an entry of the follow lists.
type followUserJSON struct {
	UID              string `json:"uid"`
	UniqueID         string `json:"unique_id"`
	SecUID           string `json:"sec_uid"`
	Nickname         string `json:"nickname"`
	FollowerCount    int64  `json:"follower_count"`
	FollowingCount   int64  `json:"following_count"`
	VerificationType int    `json:"verification_type"`
	CustomVerify     string `json:"custom_verify"`
}

// followPageJSON is the part of a follow list page besides its list.
type followPageJSON struct {
	HasMore    bool  `json:"has_more"`
	MinTime    int64 `json:"min_time"`
	MaxTime    int64 `json:"max_time"`
	Total      int64 `json:"total"`
	StatusCode int   `json:"status_code"`
}

type followersJSON struct {
	Followers []followUserJSON `json:"followers"`
	followPageJSON
}

type followingsJSON struct {
	Followings []followUserJSON `json:"followings"`
	followPageJSON
}

type urlListJSON struct {
	URI     string   `json:"uri"`
	URLList []string `json:"url_list"`
}

type musicInfoJSON struct {
	ID         json.Number `json:"id,omitempty"` // left out when the clipId is not digits
	IDStr      string      `json:"id_str"`
	Mid        string      `json:"mid"`
	Title      string      `json:"title"`
	Author     string      `json:"author"`
	Duration   int64       `json:"duration"`
	UserCount  int64       `json:"user_count"`
	CoverLarge urlListJSON `json:"cover_large"`
	PlayURL    urlListJSON `json:"play_url"`
}

type songJSON struct {
	MusicInfo  musicInfoJSON `json:"music_info"`
	StatusCode int           `json:"status_code"`
	StatusMsg  string        `json:"status_msg"`
}

type trendingJSON struct {
	AwemeList []awemeJSON `json:"aweme_list"`
}

type creatorJSON struct {
	TcmID       string `json:"tcm_id"`
	UserID      string `json:"user_id"`
	NickName    string `json:"nick_name"`
	AvatarURL   string `json:"avatar_url"`
	CountryCode string `json:"country_code"`
	FollowerCnt int64  `json:"follower_cnt"`
	LikedCnt    int64  `json:"liked_cnt"`
	TTLink      string `json:"tt_link"`
	TcmLink     string `json:"tcm_link"`
	Items       []any  `json:"items"`
}

type paginationJSON struct {
	Page    int64 `json:"page"`
	Size    int64 `json:"size"`
	Total   int64 `json:"total"`
	HasMore bool  `json:"has_more"`
}

type creatorsJSON struct {
	Creators   []creatorJSON  `json:"creators"`
	Pagination paginationJSON `json:"pagination"`
}

type profileStatsJSON struct {
	contract.Stats
	Heart       int64 `json:"heart"`
	FriendCount int64 `json:"friendCount"`
}

// profileJSON is the profile: metadata only, itemList is always empty.
type profileJSON struct {
	User     contract.User    `json:"user"`
	Stats    profileStatsJSON `json:"stats"`
	ItemList []any            `json:"itemList"`
}

type liveUserJSON struct {
	ID             string `json:"id"`
	UniqueID       string `json:"uniqueId"`
	SecUID         string `json:"secUid"`
	Nickname       string `json:"nickname"`
	Verified       bool   `json:"verified"`
	RoomID         string `json:"roomId"`
	Status         int    `json:"status"` // 2 live, 4 not
	FollowerCount  int64  `json:"followerCount"`
	FollowingCount int64  `json:"followingCount"`
}

type liveRoomJSON struct {
	Title         string        `json:"title"`
	StartTime     int64         `json:"startTime"`
	Status        int           `json:"status"`
	LiveRoomStats liveStatsJSON `json:"liveRoomStats"`
}

type liveStatsJSON struct {
	EnterCount int64 `json:"enterCount"`
	UserCount  int64 `json:"userCount"`
}

// liveJSON: liveRoom is left out when the account is not live.
type liveJSON struct {
	IsLive           bool          `json:"is_live"`
	LiveRoomUserInfo liveUserJSON  `json:"liveRoomUserInfo"`
	LiveRoom         *liveRoomJSON `json:"liveRoom,omitempty"`
}

// verifiedLabel is custom_verify: what marks a verified account in the
// snake_case shapes.
func verifiedLabel(handle string) string {
	if world.Verified(handle) {
		return "Verified account"
	}
	return ""
}

// musicNumber is id as a JSON number, or "" when it is not one.
func musicNumber(id string) json.Number {
	if id == "" || strings.Trim(id, "0123456789") != "" || (len(id) > 1 && id[0] == '0') {
		return ""
	}
	return json.Number(id)
}

func musicOf(songID string) awemeMusicJSON {
	return awemeMusicJSON{ID: musicNumber(songID), IDStr: songID, Title: world.SongTitle(songID)}
}

// author is a video author as the lists show it; its id is remembered for
// user_id parameters.
func (s *service) author(handle string) awemeAuthorJSON {
	id := world.AccountID(handle)
	s.ids.add(id, handle)
	return awemeAuthorJSON{UID: id, UniqueID: handle, SecUID: world.SecUID(handle), Nickname: world.Nickname(handle),
		CustomVerify: verifiedLabel(handle)}
}

// aweme is video v with the sound music.
func (s *service) aweme(v world.Video, music string) awemeJSON {
	return awemeJSON{AwemeID: v.ID, Desc: v.Desc, CreateTime: v.CreateTime, Statistics: statsOf(v),
		Author: s.author(v.Author), Music: musicOf(music), ChaList: chaList(v.Desc),
		ShareURL: webURL(v.Author, v.ID) + "?_r=1&u_code=sbx"}
}

// awemes are videos with their own sounds.
func (s *service) awemes(videos []world.Video) []awemeJSON {
	return api.Each(videos, func(v world.Video) awemeJSON { return s.aweme(v, world.VideoSong(v.ID)) })
}

// chaList is the hashtags of a description (its #words), in order, each
// once; nil when it has none.
func chaList(desc string) []chaJSON {
	var out []chaJSON
	seen := map[string]bool{}
	for _, f := range strings.Fields(desc) {
		name, ok := strings.CutPrefix(f, "#")
		if !ok || name == "" || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, chaJSON{ChaName: name, CID: world.HashtagCID(name), Type: 1})
	}
	return out
}

func statsOf(v world.Video) awemeStatsJSON {
	return awemeStatsJSON{AwemeID: v.ID, PlayCount: v.Plays, DiggCount: v.Diggs, CommentCount: v.Comments, ShareCount: v.Shares}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nextCursor is the cursor of a page without has_more: nil on the last one.
func nextCursor(win world.Window) *int64 {
	if !win.More {
		return nil
	}
	return &win.Next
}

var _ = route("/v1/tiktok/search/keyword", 0, searchKeyword) // 1

// searchKeyword is the keyword search: the contract's form B results
// (query, date_posted, sort_by, region, numeric cursor), answered as
// search_item_list; the last page has no cursor.
func searchKeyword(s *service, p *api.Params) reply {
	refuse(p, "keyword", "query")
	raw := p.Required("query")
	p.Bool("trim")
	kq := world.ReadKeywordQuery(p, raw)
	if !p.OK() {
		return reply{}
	}
	videos, win := s.KeywordSearch(kq)
	awemes := s.awemes(videos)
	body := keywordPageJSON{Cursor: nextCursor(win)}
	if kq.Trim {
		items := make([]trimmedSearchItemJSON, len(awemes))
		for i, a := range awemes {
			items[i] = trimmedSearchItemJSON{AwemeID: a.AwemeID, Desc: a.Desc, Statistics: a.Statistics, Author: a.Author,
				URL: world.SVSite + "/@" + a.Author.UniqueID + "/video/" + a.AwemeID, CreateTimeUTC: isoTime(a.CreateTime)}
		}
		body.SearchItemList = items
	} else {
		items := make([]searchItemJSON, len(awemes))
		for i, a := range awemes {
			items[i].AwemeInfo = a
		}
		body.SearchItemList = items
	}
	return reply{body: body}
}

// The hashtag search lists the videos under a hashtag (the real endpoint
// answers videos, not hashtags).
var _ = route("/v1/tiktok/search/hashtag", 0, list(hashtagQuery, (*world.World).HashtagVideos, awemePage)) // 2

// hashtagQuery reads the hashtag search: the hashtag (a leading # dropped)
// and its cursor.
func hashtagQuery(_ *service, p *api.Params) (string, int64) {
	refuse(p, "keyword", "hashtag")
	tag := world.ReadKeyword(p, strings.TrimPrefix(p.Required("hashtag"), "#"), "hashtag")
	p.Bool("trim")
	return tag, p.Offset("cursor")
}

// awemePage is a page of videos with their own sounds, has_more 0 or 1.
func awemePage(s *service, _ string, videos []world.Video, win world.Window) any {
	return awemePageJSON{AwemeList: s.awemes(videos), Cursor: win.Next, HasMore: boolInt(win.More)}
}

// The top search is the video entries of the contract's top results at the
// same ranks (users, hashtags and sounds are left out, so a page may hold
// fewer than a page size of items, even none, and still not be the last);
// the last page has no cursor.
var _ = route("/v1/tiktok/search/top", envSuccess|envRemaining, list(topQuery, (*world.World).TopSearch, topPage)) // 3

// topQuery reads the top search: its query (the contract's keyword), the
// filters it accepts, its cursor.
func topQuery(_ *service, p *api.Params) (string, int64) {
	refuse(p, "keyword", "query")
	raw := p.Required("query")
	p.Enum("publish_time", world.DatePostedValues)
	p.Enum("sort_by", world.SortByValues)
	return world.ReadKeyword(p, raw, "keyword"), p.Offset("cursor")
}

// topPage keeps the video entries of a page of top results.
func topPage(s *service, _ string, results []world.TopResult, win world.Window) any {
	items := make([]topItemJSON, 0, len(results))
	for _, r := range results {
		if r.Type != "video" {
			continue
		}
		v := r.Video
		items = append(items, topItemJSON{ID: v.ID, Desc: v.Desc, ContentType: "video", CreateTime: isoTime(v.CreateTime),
			Statistics: statsOf(v), Author: s.author(v.Author), Music: musicOf(world.VideoSong(v.ID))})
	}
	return topPageJSON{Items: items, Cursor: nextCursor(win)}
}

var _ = route("/v1/tiktok/user/followers", 0, followers) // 4

// followers pages the followers of handle or user_id by min_time.
func followers(s *service, p *api.Params) reply {
	refuse(p, "secUid", "handle")
	entries, page := s.followPage(p, s.userOf(p), "followers")
	return reply{body: followersJSON{Followers: entries, followPageJSON: page}}
}

var _ = route("/v1/tiktok/user/following", 0, following) // 5

// following pages the accounts handle follows by min_time; it takes a
// handle only.
func following(s *service, p *api.Params) reply {
	refuse(p, "secUid", "handle")
	refuse(p, "user_id", "handle")
	entries, page := s.followPage(p, handle(p, "handle"), "following")
	return reply{body: followingsJSON{Followings: entries, followPageJSON: page}}
}

// followPage is one page of a follow list: the world's list at the offset
// min_time stands for (see minTimeOffset).
func (s *service) followPage(p *api.Params, h, kind string) ([]followUserJSON, followPageJSON) {
	refuse(p, "cursor", "min_time")
	off := s.minTimeOffset(p)
	p.Bool("trim")
	if !p.OK() {
		return nil, followPageJSON{}
	}
	a, page, err := s.Follows(h, kind, off)
	if !p.Keep(err) {
		return nil, followPageJSON{}
	}
	total := a.Followers
	if kind == "following" {
		total = a.Following
	}
	if a.Private {
		total = 0
	}
	entries := make([]followUserJSON, len(page.Handles))
	for i, e := range page.Handles {
		f, _ := s.Account(e) // list handles always exist
		entries[i] = followUserJSON{UID: world.AccountID(e), UniqueID: e, SecUID: world.SecUID(e), Nickname: world.Nickname(e),
			FollowerCount: f.Followers, FollowingCount: f.Following, VerificationType: 1, CustomVerify: verifiedLabel(e)}
	}
	return entries, followPageJSON{HasMore: page.More, MinTime: s.minTime(page.Next), MaxTime: s.minTime(off), Total: total}
}

// clipID reads the clipId of the song endpoints: a song that is not
// blocked, and exists.
func clipID(p *api.Params) string {
	refuse(p, "id", "clipId")
	id := p.Required("clipId")
	blocked(p, "song", id)
	if p.OK() {
		p.Keep(world.SongExists(id))
	}
	return id
}

// The song's videos are its list as aweme_list, every video's music being
// the song.
var _ = route("/v1/tiktok/song/videos", 0, list(songQuery, (*world.World).SongVideos, songPage)) // 6

// songQuery reads a song videos request: the clipId and the cursor.
func songQuery(_ *service, p *api.Params) (string, int64) { return clipID(p), p.Offset("cursor") }

// songPage is a page of a song's videos, every one's music the song id.
func songPage(s *service, id string, videos []world.Video, win world.Window) any {
	awemes := api.Each(videos, func(v world.Video) awemeJSON { return s.aweme(v, id) })
	return awemePageJSON{AwemeList: awemes, Cursor: win.Next, HasMore: boolInt(win.More)}
}

var _ = route("/v1/tiktok/song", 0, song) // 7

// song wraps the song in music_info. id is the clipId as a JSON number
// (exact digits, too wide for a float64); the sandbox's token ids
// (summer_hit_v80) are not digits, so id is then left out and id_str
// carries the clipId.
func song(s *service, p *api.Params) reply {
	id := clipID(p)
	sg := s.Song(id)
	return reply{body: songJSON{MusicInfo: musicInfoJSON{
		ID: musicNumber(id), IDStr: id, Mid: id, Title: sg.Title, Author: sg.Author, Duration: sg.Duration, UserCount: sg.Usage,
		CoverLarge: urlListJSON{URI: "music/" + url.PathEscape(id), URLList: []string{sg.CoverLarge}},
		PlayURL:    urlListJSON{URI: sg.Sound, URLList: []string{sg.Sound}},
	}}}
}

var _ = route("/v1/tiktok/get-trending-feed", 0, trending) // 8

// trending is the trending feed; region is required. The authors at even
// ranks (0, 2, ...) have no unique_id, as in the vendor's sample: a client
// must name them by uid or sec_uid.
func trending(s *service, p *api.Params) reply {
	p.Required("region")
	p.Country("region")
	p.Bool("trim")
	if !p.OK() {
		return reply{}
	}
	awemes := s.awemes(s.Feed("trending"))
	for i := range awemes {
		if i%2 == 0 {
			awemes[i].Author.UniqueID = ""
		}
	}
	return reply{body: trendingJSON{AwemeList: awemes}}
}

var _ = route("/v1/tiktok/videos/popular", 0, popularVideos) // 9

// popularVideos is retired upstream: 400, not billed.
func popularVideos(_ *service, p *api.Params) reply {
	p.Fail("This endpoint has been retired: TikTok removed the popular videos page")
	return reply{}
}

var _ = route("/v1/tiktok/creators/popular", envSuccess|envRemaining, popularCreators) // 10

// popularCreators is the world's FeedSize creators on page 1 (the only
// page); later pages are empty.
func popularCreators(s *service, p *api.Params) reply {
	page := p.Page("page")
	out := []creatorJSON{}
	if page == 1 {
		for _, a := range s.PopularCreators() {
			h, id := a.Handle, world.AccountID(a.Handle)
			s.ids.add(id, h)
			out = append(out, creatorJSON{TcmID: world.TcmID(h), UserID: id, NickName: world.Nickname(h),
				AvatarURL: world.Avatar(id), CountryCode: "US", FollowerCnt: a.Followers, LikedCnt: s.Hearts(a),
				TTLink: world.SVSite + "/@" + h, TcmLink: world.SVSite + "/creators/" + id, Items: []any{}})
		}
	}
	return reply{body: creatorsJSON{Creators: out,
		Pagination: paginationJSON{Page: page, Size: world.FeedSize, Total: world.FeedSize}}}
}

var _ = route("/v1/tiktok/profile", 0, profile) // 11

// profile is the profile (handle or user_id) without its videos: itemList
// is empty, as on the real service. Cacheable.
func profile(s *service, p *api.Params) reply {
	h := s.userOf(p)
	age := maxAge(p)
	a := s.account(p, h)
	if !p.OK() {
		return reply{}
	}
	pr := s.Profile(a)
	s.ids.add(pr.ID, h)
	stats := profileStatsJSON{Stats: contract.StatsOf(pr), Heart: pr.Hearts, FriendCount: pr.Friends}
	return reply{body: profileJSON{User: contract.UserOf(pr), Stats: stats, ItemList: []any{}}, cacheKey: h, maxAge: age}
}

// account is the account behind h, unless the request failed.
func (s *service) account(p *api.Params, h string) world.Account {
	if !p.OK() {
		return world.Account{}
	}
	a, err := s.Account(h)
	p.Keep(err)
	return a
}

var _ = route("/v1/tiktok/user/live", envSuccess, live) // 12

// live is the live state: is_live, the user, and the room while live.
func live(s *service, p *api.Params) reply {
	h := handle(p, "handle")
	a := s.account(p, h)
	if !p.OK() {
		return reply{}
	}
	l := s.Live(a)
	id := world.AccountID(h)
	s.ids.add(id, h)
	body := liveJSON{IsLive: l.IsLive, LiveRoomUserInfo: liveUserJSON{ID: id, UniqueID: h, SecUID: world.SecUID(h),
		Nickname: world.Nickname(h), Verified: world.Verified(h), Status: 4, FollowerCount: a.Followers, FollowingCount: a.Following}}
	if l.IsLive {
		body.LiveRoomUserInfo.Status, body.LiveRoomUserInfo.RoomID = 2, l.RoomID
		body.LiveRoom = &liveRoomJSON{Title: l.Title, StartTime: l.Start, Status: 2,
			LiveRoomStats: liveStatsJSON{EnterCount: 3 * l.Viewers, UserCount: l.Viewers}}
	}
	return reply{body: body}
}
