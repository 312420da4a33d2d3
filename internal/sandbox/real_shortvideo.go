package sandbox

import (
	"encoding/json"
	"net/url"
	"strings"
)

// Short-video shapes of the real preset: the platform's snake_case (videos
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

// topPageRealJSON is the top search: no has_more; the last page has no
// cursor.
type topPageRealJSON struct {
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

type followersRealJSON struct {
	Followers []followUserJSON `json:"followers"`
	followPageJSON
}

type followingsRealJSON struct {
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

type songRealJSON struct {
	MusicInfo  musicInfoJSON `json:"music_info"`
	StatusCode int           `json:"status_code"`
	StatusMsg  string        `json:"status_msg"`
}

type trendingRealJSON struct {
	AwemeList []awemeJSON `json:"aweme_list"`
}

type creatorRealJSON struct {
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

type creatorsRealJSON struct {
	Creators   []creatorRealJSON `json:"creators"`
	Pagination paginationJSON    `json:"pagination"`
}

type profileStatsRealJSON struct {
	profileStatsJSON
	Heart       int64 `json:"heart"`
	FriendCount int64 `json:"friendCount"`
}

// profileRealJSON is the profile: metadata only, itemList is always empty.
type profileRealJSON struct {
	User     profileUserJSON      `json:"user"`
	Stats    profileStatsRealJSON `json:"stats"`
	ItemList []any                `json:"itemList"`
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

// liveRealJSON: liveRoom is left out when the account is not live.
type liveRealJSON struct {
	IsLive           bool          `json:"is_live"`
	LiveRoomUserInfo liveUserJSON  `json:"liveRoomUserInfo"`
	LiveRoom         *liveRoomJSON `json:"liveRoom,omitempty"`
}

const svSite = "https://www.shortvideo.example"

// verifiedLabel is custom_verify: what marks a verified account in the
// snake_case shapes.
func verifiedLabel(handle string) string {
	if verified(handle) {
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
	return awemeMusicJSON{ID: musicNumber(songID), IDStr: songID, Title: songTitle(songID)}
}

// videoSong is the sound of a video found outside a song's list.
func videoSong(videoID string) string { return digitsAt('6', hashOf("video", videoID, "music"), 0) }

// author is a video author as the lists show it; its id is remembered for
// user_id parameters.
func (w *realWorld) author(handle string) awemeAuthorJSON {
	id := accountID(handle)
	w.ids.add(id, handle)
	return awemeAuthorJSON{UID: id, UniqueID: handle, SecUID: secUIDOf(handle), Nickname: nickname(handle),
		CustomVerify: verifiedLabel(handle)}
}

func (w *realWorld) aweme(v videoJSON, music awemeMusicJSON) awemeJSON {
	return awemeJSON{
		AwemeID:    v.ID,
		Desc:       v.Desc,
		CreateTime: v.CreateTime,
		Statistics: statsOf(v),
		Author:     w.author(v.Author.UniqueID),
		Music:      music,
		ChaList:    chaList(v.Desc),
		ShareURL:   videoURL(v.Author.UniqueID, v.ID) + "?_r=1&u_code=sbx",
	}
}

// videoURL is a video's web address on the real platform.
func videoURL(handle, id string) string { return realSVSite + "/@" + handle + "/video/" + id }

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
		out = append(out, chaJSON{ChaName: name, CID: digitsAt('1', hashOf("hashtag", name, "cid"), 0)[:7], Type: 1})
	}
	return out
}

func statsOf(v videoJSON) awemeStatsJSON {
	return awemeStatsJSON{AwemeID: v.ID, PlayCount: v.Stats.PlayCount, DiggCount: v.Stats.DiggCount,
		CommentCount: v.Stats.CommentCount, ShareCount: v.Stats.ShareCount}
}

func (w *realWorld) awemes(videos []videoJSON) []awemeJSON {
	out := make([]awemeJSON, len(videos))
	for i, v := range videos {
		out[i] = w.aweme(v, musicOf(videoSong(v.ID)))
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nextCursor is the cursor of a page without has_more: nil on the last one.
func nextCursor(next int64, more bool) *int64 {
	if !more {
		return nil
	}
	return &next
}

var _ = realRoute("/v1/tiktok/search/keyword", 0, (*realWorld).searchKeywordReal) // 1

// searchKeywordReal is the keyword search: the contract's form B results
// (query, date_posted, sort_by, region, numeric cursor), answered as
// search_item_list; the last page has no cursor.
func (w *realWorld) searchKeywordReal(q query) (realReply, error) {
	if err := refuse(q, "keyword", "query"); err != nil {
		return realReply{}, err
	}
	raw, err := q.required("query")
	if err != nil {
		return realReply{}, err
	}
	trim, err := boolParam(q, "trim")
	if err != nil {
		return realReply{}, err
	}
	cq := query{url.Values{}}
	for _, k := range []string{"date_posted", "sort_by", "region", "cursor"} {
		cq.v[k] = q.v[k]
	}
	rep, err := w.searchKeywordB(cq, raw)
	if err != nil {
		return realReply{}, err
	}
	page := rep.body.(videoPageFormBJSON)
	awemes := w.awemes(page.Videos.([]videoJSON))
	body := keywordPageJSON{Cursor: nextCursor(page.Cursor, page.HasMore)}
	if trim {
		items := make([]trimmedSearchItemJSON, len(awemes))
		for i, a := range awemes {
			items[i] = trimmedSearchItemJSON{AwemeID: a.AwemeID, Desc: a.Desc, Statistics: a.Statistics, Author: a.Author,
				URL: svSite + "/@" + a.Author.UniqueID + "/video/" + a.AwemeID, CreateTimeUTC: isoTime(a.CreateTime)}
		}
		body.SearchItemList = items
	} else {
		items := make([]searchItemJSON, len(awemes))
		for i, a := range awemes {
			items[i].AwemeInfo = a
		}
		body.SearchItemList = items
	}
	return realReply{body: body}, nil
}

var _ = realRoute("/v1/tiktok/search/hashtag", 0, (*realWorld).searchHashtagReal) // 2

// searchHashtagReal lists the videos under a hashtag (the real endpoint
// answers videos, not hashtags): searchTotal("hashtag", ...) of them, so
// n<N> still sets the count.
func (w *realWorld) searchHashtagReal(q query) (realReply, error) {
	if err := refuse(q, "keyword", "hashtag"); err != nil {
		return realReply{}, err
	}
	raw, err := q.required("hashtag")
	if err != nil {
		return realReply{}, err
	}
	tag := keywordOf(strings.TrimPrefix(raw, "#"))
	if tag == "" {
		return realReply{}, badRequest("parameter %q must not be blank", "hashtag")
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return realReply{}, err
	}
	off, err := q.offset("cursor")
	if err != nil {
		return realReply{}, err
	}
	win := paginate(off, searchTotal("hashtag", tag, 120), w.pageSize)
	videos := w.videosAt(hashOf("search", "hashtag.videos", tag), win, permutation{})
	return realReply{body: awemePageJSON{AwemeList: w.awemes(videos), Cursor: win.next, HasMore: boolInt(win.more)}}, nil
}

var _ = realRoute("/v1/tiktok/search/top", envSuccess|envRemaining, (*realWorld).searchTopReal) // 3

// searchTopReal is the top search: the video entries of the contract's top
// results at the same ranks (users, hashtags and sounds are left out, so a
// page may hold fewer than PageSize items, even none, and still not be the
// last); the last page has no cursor.
func (w *realWorld) searchTopReal(q query) (realReply, error) {
	if err := refuse(q, "keyword", "query"); err != nil {
		return realReply{}, err
	}
	raw, err := q.required("query")
	if err != nil {
		return realReply{}, err
	}
	if err := enumParam(q, "publish_time", datePostedValues); err != nil {
		return realReply{}, err
	}
	if err := enumParam(q, "sort_by", sortByValues); err != nil {
		return realReply{}, err
	}
	rep, err := w.searchTop(translated("keyword", raw, "cursor", q.get("cursor")))
	if err != nil {
		return realReply{}, err
	}
	page := rep.body.(topPageJSON)
	items := make([]topItemJSON, 0, len(page.Results))
	for _, r := range page.Results {
		v, ok := r.(topVideoJSON)
		if !ok {
			continue
		}
		items = append(items, topItemJSON{ID: v.ID, Desc: v.Desc, ContentType: "video", CreateTime: isoTime(v.CreateTime),
			Statistics: statsOf(v.videoJSON), Author: w.author(v.Author.UniqueID), Music: musicOf(videoSong(v.ID))})
	}
	next, _ := parseDigits(page.Cursor)
	return realReply{body: topPageRealJSON{Items: items, Cursor: nextCursor(next, page.HasMore)}}, nil
}

// enumParam checks an optional parameter against its values.
func enumParam(q query, name string, values []string) error {
	if v := q.get(name); v != "" && !oneOf(v, values) {
		return badRequest("parameter %q must be one of %s", name, strings.Join(values, ", "))
	}
	return nil
}

var _ = realRoute("/v1/tiktok/user/followers", 0, (*realWorld).followersReal) // 4

// followersReal pages the followers of handle or user_id by min_time.
func (w *realWorld) followersReal(q query) (realReply, error) {
	if err := refuse(q, "secUid", "handle"); err != nil {
		return realReply{}, err
	}
	h, err := w.userOf(q)
	if err != nil {
		return realReply{}, err
	}
	entries, page, err := w.followPage(q, h, "followers")
	if err != nil {
		return realReply{}, err
	}
	return realReply{body: followersRealJSON{Followers: entries, followPageJSON: page}}, nil
}

var _ = realRoute("/v1/tiktok/user/following", 0, (*realWorld).followingReal) // 5

// followingReal pages the accounts handle follows by min_time; it takes a
// handle only.
func (w *realWorld) followingReal(q query) (realReply, error) {
	for _, name := range []string{"secUid", "user_id"} {
		if err := refuse(q, name, "handle"); err != nil {
			return realReply{}, err
		}
	}
	h, err := realHandle(q, "handle")
	if err != nil {
		return realReply{}, err
	}
	entries, page, err := w.followPage(q, h, "following")
	if err != nil {
		return realReply{}, err
	}
	return realReply{body: followingsRealJSON{Followings: entries, followPageJSON: page}}, nil
}

// followPage is one page of a follow list: the contract's list at the
// offset min_time stands for (see minTimeOffset), so the entries, their
// order and the list's end are the contract's.
func (w *realWorld) followPage(q query, h, kind string) ([]followUserJSON, followPageJSON, error) {
	if err := refuse(q, "cursor", "min_time"); err != nil {
		return nil, followPageJSON{}, err
	}
	off, err := w.minTimeOffset(q)
	if err != nil {
		return nil, followPageJSON{}, err
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return nil, followPageJSON{}, err
	}
	a, err := w.lookupAccount(h)
	if err != nil {
		return nil, followPageJSON{}, err
	}
	list, cursor, more, err := w.followList(translated("secUid", secUIDOf(h), "cursor", itoa(off)), kind)
	if err != nil {
		return nil, followPageJSON{}, err
	}
	next, _ := parseDigits(cursor)
	total := a.followers
	if kind == "following" {
		total = a.following
	}
	if a.private {
		total = 0
	}
	entries := make([]followUserJSON, len(list))
	for i, e := range list {
		f, _ := w.lookupAccount(e.UniqueID) // list handles always exist
		entries[i] = followUserJSON{UID: accountID(e.UniqueID), UniqueID: e.UniqueID, SecUID: e.SecUID, Nickname: e.Nickname,
			FollowerCount: f.followers, FollowingCount: f.following, VerificationType: 1, CustomVerify: verifiedLabel(e.UniqueID)}
	}
	page := followPageJSON{HasMore: more, MinTime: w.followTime(next), MaxTime: w.followTime(off), Total: total}
	return entries, page, nil
}

// followTime is the min_time standing for offset off of a follow list: the
// world's now minus off, so it decreases page after page like the real
// epoch-second cursor (and goes below 0 past 1.7e9 entries).
func (w *world) followTime(off int64) int64 { return w.now() - off }

// minTimeOffset reads min_time (absent: the first page) as a list offset.
func (w *world) minTimeOffset(q query) (int64, error) {
	v := q.get("min_time")
	if v == "" {
		return 0, nil
	}
	digits, neg := strings.CutPrefix(v, "-")
	n, ok := parseDigits(digits)
	if neg {
		n = -n
	}
	off := w.now() - n
	if !ok || off < 0 || off >= e18 {
		return 0, badRequest("parameter %q must be a min_time this endpoint returned", "min_time")
	}
	return off, nil
}

// clipID reads the clipId of the song endpoints.
func clipID(q query) (string, error) {
	if err := refuse(q, "id", "clipId"); err != nil {
		return "", err
	}
	id, err := q.required("clipId")
	if err != nil {
		return "", err
	}
	return id, blocked("song", id)
}

var _ = realRoute("/v1/tiktok/song/videos", 0, (*realWorld).songVideosReal) // 6

// songVideosReal is the contract's song list as aweme_list, every video's
// music being the song.
func (w *realWorld) songVideosReal(q query) (realReply, error) {
	id, err := clipID(q)
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.songVideos(translated("id", id, "cursor", q.get("cursor")))
	if err != nil {
		return realReply{}, err
	}
	page := rep.body.(videoPageJSON)
	awemes := make([]awemeJSON, len(page.Videos))
	for i, v := range page.Videos {
		awemes[i] = w.aweme(v, musicOf(id))
	}
	next, _ := parseDigits(page.Cursor)
	return realReply{body: awemePageJSON{AwemeList: awemes, Cursor: next, HasMore: boolInt(page.HasMore)}}, nil
}

var _ = realRoute("/v1/tiktok/song", 0, (*realWorld).songReal) // 7

// songReal wraps the contract's song in music_info. id is the clipId as a
// JSON number (exact digits, too wide for a float64); the sandbox's token
// ids (summer_hit_v80) are not digits, so id is then left out and id_str
// carries the clipId.
func (w *realWorld) songReal(q query) (realReply, error) {
	id, err := clipID(q)
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.song(translated("id", id))
	if err != nil {
		return realReply{}, err
	}
	s := rep.body.(songJSON)
	return realReply{body: songRealJSON{MusicInfo: musicInfoJSON{
		ID: musicNumber(id), IDStr: id, Mid: id, Title: s.Title, Author: s.AuthorName,
		Duration: s.Duration, UserCount: s.UsageCount,
		CoverLarge: urlListJSON{URI: "music/" + url.PathEscape(id), URLList: []string{s.CoverLarge}},
		PlayURL:    urlListJSON{URI: s.PlayURL, URLList: []string{s.PlayURL}},
	}}}, nil
}

var _ = realRoute("/v1/tiktok/get-trending-feed", 0, (*realWorld).trendingReal) // 8

// trendingReal is the contract's trending feed; region is required. The
// authors at even ranks (0, 2, ...) have no unique_id, as in the vendor's
// sample: a client must name them by uid or sec_uid.
func (w *realWorld) trendingReal(q query) (realReply, error) {
	region, err := q.required("region")
	if err != nil {
		return realReply{}, err
	}
	if !isCountryCode(region) {
		return realReply{}, badRequest("parameter %q must be a two-letter country code", "region")
	}
	if _, err := boolParam(q, "trim"); err != nil {
		return realReply{}, err
	}
	awemes := w.awemes(w.feed("trending"))
	for i := range awemes {
		if i%2 == 0 {
			awemes[i].Author.UniqueID = ""
		}
	}
	return realReply{body: trendingRealJSON{AwemeList: awemes}}, nil
}

var _ = realRoute("/v1/tiktok/videos/popular", 0, (*realWorld).popularVideosReal) // 9

// popularVideosReal is retired upstream: 400, not billed.
func (w *realWorld) popularVideosReal(query) (realReply, error) {
	return realReply{}, badRequest("This endpoint has been retired: TikTok removed the popular videos page")
}

var _ = realRoute("/v1/tiktok/creators/popular", envSuccess|envRemaining, (*realWorld).popularCreatorsReal) // 10

// popularCreatorsReal is the contract's FeedSize creators on page 1 (the
// only page); later pages are empty.
func (w *realWorld) popularCreatorsReal(q query) (realReply, error) {
	page := int64(1)
	if v := q.get("page"); v != "" {
		n, ok := parseDigits(v)
		if !ok || n < 1 {
			return realReply{}, badRequest("parameter %q must be an integer >= 1", "page")
		}
		page = n
	}
	out := []creatorRealJSON{}
	if page == 1 {
		rep, _ := w.popularCreators(query{})
		for _, c := range rep.body.(creatorsJSON).Creators {
			a, _ := w.lookupAccount(c.UniqueID) // a "u..." handle always exists
			id := accountID(c.UniqueID)
			w.ids.add(id, c.UniqueID)
			out = append(out, creatorRealJSON{TcmID: digitsAt('7', hashOf("account", c.UniqueID, "tcm"), 0), UserID: id,
				NickName: c.Nickname, AvatarURL: cdn + "/avatar/" + id + ".jpeg", CountryCode: "US",
				FollowerCnt: c.FollowerCount, LikedCnt: w.counter(a, heartCounter),
				TTLink: svSite + "/@" + c.UniqueID, TcmLink: svSite + "/creators/" + id, Items: []any{}})
		}
	}
	return realReply{body: creatorsRealJSON{Creators: out,
		Pagination: paginationJSON{Page: page, Size: FeedSize, Total: FeedSize}}}, nil
}

var _ = realRoute("/v1/tiktok/profile", 0, (*realWorld).profileReal) // 11

// profileReal is the contract's profile (handle or user_id) without its
// videos: itemList is empty, as on the real service. Cacheable.
func (w *realWorld) profileReal(q query) (realReply, error) {
	h, err := w.userOf(q)
	if err != nil {
		return realReply{}, err
	}
	age, err := maxAge(q)
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.profile(translated("handle", h))
	if err != nil {
		return realReply{}, err
	}
	p := rep.body.(profileJSON)
	w.ids.add(p.User.ID, h)
	stats := profileStatsRealJSON{profileStatsJSON: p.Stats, Heart: p.Stats.HeartCount,
		FriendCount: pick("account", h, "friendCount", 100)}
	return realReply{body: profileRealJSON{User: p.User, Stats: stats, ItemList: []any{}}, cacheKey: h, maxAge: age}, nil
}

var _ = realRoute("/v1/tiktok/user/live", envSuccess, (*realWorld).liveReal) // 12

// liveReal is the contract's live state: is_live, the user, and the room
// while live.
func (w *realWorld) liveReal(q query) (realReply, error) {
	h, err := realHandle(q, "handle")
	if err != nil {
		return realReply{}, err
	}
	a, err := w.lookupAccount(h)
	if err != nil {
		return realReply{}, err
	}
	rep, err := w.live(translated("handle", h))
	if err != nil {
		return realReply{}, err
	}
	l := rep.body.(liveJSON)
	id := accountID(h)
	w.ids.add(id, h)
	body := liveRealJSON{IsLive: l.IsLive, LiveRoomUserInfo: liveUserJSON{ID: id, UniqueID: h, SecUID: secUIDOf(h),
		Nickname: nickname(h), Verified: verified(h), Status: 4, FollowerCount: a.followers, FollowingCount: a.following}}
	if l.IsLive {
		body.LiveRoomUserInfo.Status = 2
		body.LiveRoomUserInfo.RoomID = digitsAt('7', hashOf("account", h, "room"), w.day)
		body.LiveRoom = &liveRoomJSON{Title: l.Title, StartTime: l.StartTime, Status: 2,
			LiveRoomStats: liveStatsJSON{EnterCount: 3 * l.ViewerCount, UserCount: l.ViewerCount}}
	}
	return realReply{body: body}, nil
}
