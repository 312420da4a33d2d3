package contract

import (
	"cmp"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// Response shapes of the short-video platform, field names copied from the
// contract (docs/upstream.md).

type videoJSON struct {
	ID         string         `json:"id"`
	Desc       string         `json:"desc"`
	CreateTime int64          `json:"createTime"`
	Stats      videoStatsJSON `json:"stats"`
	Author     authorJSON     `json:"author"`
}

type videoStatsJSON struct {
	PlayCount    int64 `json:"playCount"`
	DiggCount    int64 `json:"diggCount"`
	CommentCount int64 `json:"commentCount"`
	ShareCount   int64 `json:"shareCount"`
}

type authorJSON struct {
	UniqueID string `json:"uniqueId"`
	Nickname string `json:"nickname"`
}

func videoOf(v world.Video) videoJSON {
	return videoJSON{ID: v.ID, Desc: v.Desc, CreateTime: v.CreateTime,
		Stats:  videoStatsJSON{PlayCount: v.Plays, DiggCount: v.Diggs, CommentCount: v.Comments, ShareCount: v.Shares},
		Author: authorJSON{UniqueID: v.Author, Nickname: world.Nickname(v.Author)}}
}

func videosOf(vs []world.Video) []videoJSON { return api.Each(vs, videoOf) }

// videoPage is a page of videos (keyword search form A, a song's videos).
func videoPage(vs []world.Video, win world.Window) any {
	return videoPageJSON{Videos: videosOf(vs), cursorJSON: cursorOf(win)}
}

// trimmedVideoJSON is a keyword search (form B) video with trim=true.
type trimmedVideoJSON struct {
	ID    string `json:"id"`
	Desc  string `json:"desc"`
	Stats struct {
		PlayCount int64 `json:"playCount"`
	} `json:"stats"`
	Author struct {
		UniqueID string `json:"uniqueId"`
	} `json:"author"`
}

// cursorJSON ends a page of a cursor list: the cursor of the next page
// (a string) and hasMore. Embedded after the list, so it is encoded there.
type cursorJSON struct {
	Cursor  string `json:"cursor"`
	HasMore bool   `json:"hasMore"`
}

// cursorOf is the cursor of the page after win.
func cursorOf(win world.Window) cursorJSON {
	return cursorJSON{Cursor: api.Itoa(win.Next), HasMore: win.More}
}

type videoPageJSON struct {
	Videos []videoJSON `json:"videos"`
	cursorJSON
}

// videoPageFormBJSON is keyword search form B: the cursor is a number.
type videoPageFormBJSON struct {
	Videos  any   `json:"videos"`
	Cursor  int64 `json:"cursor"`
	HasMore bool  `json:"hasMore"`
}

type hashtagJSON struct {
	Name       string     `json:"name"`
	ViewCount  int64      `json:"viewCount"`
	VideoCount int64      `json:"videoCount"`
	Growth     growthJSON `json:"growth"`
}

// growthJSON is the hashtag growth signal: what the counters gained over
// the last 7 world days.
type growthJSON struct {
	Views7d  int64 `json:"views7d"`
	Videos7d int64 `json:"videos7d"`
}

type hashtagPageJSON struct {
	Hashtags []hashtagJSON `json:"hashtags"`
	cursorJSON
}

type topVideoJSON struct {
	Type string `json:"type"`
	videoJSON
}

type topUserJSON struct {
	Type     string `json:"type"`
	UniqueID string `json:"uniqueId"`
	Nickname string `json:"nickname"`
	Verified bool   `json:"verified"`
}

type topHashtagJSON struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	ViewCount int64  `json:"viewCount"`
}

type topSoundJSON struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Title string `json:"title"`
}

type topPageJSON struct {
	Results []any `json:"results"`
	cursorJSON
}

type followEntryJSON struct {
	UniqueID string `json:"uniqueId"`
	Nickname string `json:"nickname"`
	Verified bool   `json:"verified"`
	SecUID   string `json:"secUid"`
}

// followPageJSON is a page of a follow list: its entries under the list's
// name, followers or following (the other is nil, so left out), then the
// cursor.
type followPageJSON struct {
	Followers *[]followEntryJSON `json:"followers,omitempty"`
	Following *[]followEntryJSON `json:"following,omitempty"`
	cursorJSON
}

type songJSON struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	AuthorName  string `json:"authorName"`
	Duration    int64  `json:"duration"`
	UsageCount  int64  `json:"usageCount"`
	CoverLarge  string `json:"coverLarge"`
	CoverMedium string `json:"coverMedium"`
	CoverThumb  string `json:"coverThumb"`
	PlayURL     string `json:"playUrl"`
}

type feedJSON struct {
	Videos []videoJSON `json:"videos"`
}

type creatorJSON struct {
	UniqueID      string `json:"uniqueId"`
	Nickname      string `json:"nickname"`
	FollowerCount int64  `json:"followerCount"`
	Verified      bool   `json:"verified"`
}

type creatorsJSON struct {
	Creators []creatorJSON `json:"creators"`
}

type profileJSON struct {
	Success  bool        `json:"success"`
	User     User        `json:"user"`
	Stats    Stats       `json:"stats"`
	ItemList []videoJSON `json:"itemList"`
}

// User is a short-video profile's user; the real service's is the same.
type User struct {
	ID             string `json:"id"`
	UniqueID       string `json:"uniqueId"`
	SecUID         string `json:"secUid"`
	Nickname       string `json:"nickname"`
	AvatarLarger   string `json:"avatarLarger"`
	Signature      string `json:"signature"`
	Verified       bool   `json:"verified"`
	PrivateAccount bool   `json:"privateAccount"`
}

// Stats are a short-video profile's counters; the real service's start
// with the same.
type Stats struct {
	FollowerCount  int64 `json:"followerCount"`
	FollowingCount int64 `json:"followingCount"`
	HeartCount     int64 `json:"heartCount"`
	VideoCount     int64 `json:"videoCount"`
	DiggCount      int64 `json:"diggCount"`
}

// UserOf and StatsOf are profile p's user and stats.
func UserOf(p world.Profile) User {
	return User{ID: p.ID, UniqueID: p.Handle, SecUID: world.SecUID(p.Handle), Nickname: world.Nickname(p.Handle),
		AvatarLarger: world.Avatar(p.ID), Signature: p.Signature, Verified: world.Verified(p.Handle),
		PrivateAccount: p.Private}
}

func StatsOf(p world.Profile) Stats {
	return Stats{FollowerCount: p.Followers, FollowingCount: p.Following, HeartCount: p.Hearts,
		VideoCount: p.Videos, DiggCount: p.Diggs}
}

type liveJSON struct {
	IsLive      bool   `json:"isLive"`
	Title       string `json:"title"`
	ViewerCount int64  `json:"viewerCount"`
	StartTime   int64  `json:"startTime"`
}

var _ = route("/shortvideo/search/keyword", searchKeyword) // 1

// searchKeyword is endpoint 1. A non-empty keyword selects form A (and form
// B's parameters are then ignored); otherwise query selects form B, whose
// cursor is a number.
func searchKeyword(w *world.World, p *api.Params) reply {
	if raw := p.Get("keyword"); raw != "" {
		kq := world.KeywordQuery{Keyword: world.ReadKeyword(p, raw, "keyword"), Offset: p.Offset("cursor")}
		if !p.OK() {
			return reply{}
		}
		return billable(videoPage(w.KeywordSearch(kq)))
	}
	raw := p.Get("query")
	if raw == "" {
		p.Fail("missing required parameter %q (or %q)", "keyword", "query")
	}
	kq := world.ReadKeywordQuery(p, raw)
	if !p.OK() {
		return reply{}
	}
	videos, win := w.KeywordSearch(kq)
	body := videoPageFormBJSON{Videos: videosOf(videos), Cursor: win.Next, HasMore: win.More}
	if kq.Trim {
		t := make([]trimmedVideoJSON, len(videos))
		for i, v := range videos {
			t[i].ID, t[i].Desc = v.ID, v.Desc
			t[i].Stats.PlayCount = v.Plays
			t[i].Author.UniqueID = v.Author
		}
		body.Videos = t
	}
	return billable(body)
}

// searchedKeyword reads the keyword of the hashtag and top searches.
func searchedKeyword(p *api.Params) string {
	return world.ReadKeyword(p, p.Required("keyword"), "keyword")
}

// Endpoints 2 and 3 page the world's hashtag and top searches by keyword.
var _ = route("/shortvideo/search/hashtag", list(searchedKeyword, (*world.World).HashtagSearch, hashtagPage)) // 2
var _ = route("/shortvideo/search/top", list(searchedKeyword, (*world.World).TopSearch, topPage))             // 3

// hashtagOf is hashtag h as the hashtag search shows it.
func hashtagOf(h world.Hashtag) hashtagJSON {
	return hashtagJSON{Name: h.Name, ViewCount: h.Views, VideoCount: h.Videos,
		Growth: growthJSON{Views7d: h.Views7d, Videos7d: h.Videos7d}}
}

// hashtagPage is a page of the hashtag search, each with its growth.
func hashtagPage(tags []world.Hashtag, win world.Window) any {
	return hashtagPageJSON{Hashtags: api.Each(tags, hashtagOf), cursorJSON: cursorOf(win)}
}

// topResultOf is a top search result in the shape of its type.
func topResultOf(r world.TopResult) any {
	switch r.Type {
	case "video":
		return topVideoJSON{Type: r.Type, videoJSON: videoOf(r.Video)}
	case "user":
		return topUserJSON{Type: r.Type, UniqueID: r.User, Nickname: world.Nickname(r.User), Verified: world.Verified(r.User)}
	case "hashtag":
		return topHashtagJSON{Type: r.Type, Name: r.Hashtag.Name, ViewCount: r.Hashtag.Views}
	case "sound":
		return topSoundJSON{Type: r.Type, ID: r.Sound, Title: r.SoundTitle}
	}
	return nil
}

// topPage is a page of the top search, in the platform's rank.
func topPage(results []world.TopResult, win world.Window) any {
	return topPageJSON{Results: api.Each(results, topResultOf), cursorJSON: cursorOf(win)}
}

var _ = route("/shortvideo/user/followers", follows("followers")) // 4
var _ = route("/shortvideo/user/following", follows("following")) // 5

// follows is endpoints 4 and 5: they page the followers or the following
// (kind) of the account behind secUid; a looping list answers the cursor
// it was asked with.
func follows(kind string) handler {
	return func(w *world.World, p *api.Params) reply {
		secUID, off := p.Required("secUid"), p.Offset("cursor")
		handle, ok := world.HandleOfSecUID(secUID)
		if !ok {
			p.Keep(api.NotFound("no account with that secUid"))
		}
		if !p.OK() {
			return reply{}
		}
		_, page, err := w.Follows(handle, kind, off)
		p.Keep(err)
		body := followPageJSON{cursorJSON: cursorJSON{Cursor: api.Itoa(page.Next), HasMore: page.More}}
		if page.Loop {
			body.Cursor = cmp.Or(p.Get("cursor"), "0")
		}
		entries := api.Each(page.Handles, followEntryOf)
		if kind == "followers" {
			body.Followers = &entries
		} else {
			body.Following = &entries
		}
		return billable(body)
	}
}

// followEntryOf is account h as the follow lists show it.
func followEntryOf(h string) followEntryJSON {
	return followEntryJSON{UniqueID: h, Nickname: world.Nickname(h), Verified: world.Verified(h), SecUID: world.SecUID(h)}
}

// songID reads the id of the song endpoints: a song that exists.
func songID(p *api.Params) string {
	id := p.Required("id")
	p.Keep(world.SongExists(id))
	return id
}

// Endpoint 6 pages the world's videos of a song.
var _ = route("/shortvideo/song/videos", list(songID, (*world.World).SongVideos, videoPage)) // 6

var _ = route("/shortvideo/song", song) // 7

// song is endpoint 7.
func song(w *world.World, p *api.Params) reply {
	s := w.Song(songID(p))
	return billable(songJSON{ID: s.ID, Title: s.Title, AuthorName: s.Author, Duration: s.Duration, UsageCount: s.Usage,
		CoverLarge: s.CoverLarge, CoverMedium: s.CoverMedium, CoverThumb: s.CoverThumb, PlayURL: s.Sound})
}

var _ = route("/shortvideo/get-trending-feed", trendingFeed) // 8

// trendingFeed is endpoint 8.
func trendingFeed(w *world.World, _ *api.Params) reply {
	return billable(feedJSON{Videos: videosOf(w.Feed("trending"))})
}

var _ = route("/shortvideo/videos/popular", popularVideos) // 9

// popularVideos is endpoint 9.
func popularVideos(w *world.World, _ *api.Params) reply {
	return billable(feedJSON{Videos: videosOf(w.Feed("popular"))})
}

var _ = route("/shortvideo/creators/popular", popularCreators) // 10

// popularCreators is endpoint 10.
func popularCreators(w *world.World, _ *api.Params) reply {
	creators := w.PopularCreators()
	out := make([]creatorJSON, len(creators))
	for i, a := range creators {
		out[i] = creatorJSON{UniqueID: a.Handle, Nickname: world.Nickname(a.Handle), FollowerCount: a.Followers,
			Verified: world.Verified(a.Handle)}
	}
	return billable(creatorsJSON{Creators: out})
}

var _ = route("/shortvideo/profile", profile) // 11

// profile is endpoint 11.
func profile(w *world.World, p *api.Params) reply {
	pr := w.Profile(queriedAccount(w, p))
	return billable(profileJSON{Success: true, User: UserOf(pr), Stats: StatsOf(pr), ItemList: videosOf(pr.Recent)})
}

var _ = route("/shortvideo/user/live", live) // 12

// live is endpoint 12.
func live(w *world.World, p *api.Params) reply {
	l := w.Live(queriedAccount(w, p))
	return billable(liveJSON{IsLive: l.IsLive, Title: l.Title, ViewerCount: l.Viewers, StartTime: l.Start})
}
