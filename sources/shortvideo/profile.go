package shortvideo

import (
	"encoding/json"
	"net/url"
	"slices"

	"github.com/socialcrawl/crawler/sources"
)

// User is the user object of the short-video profile.
type User struct {
	ID             sources.Text `json:"id"`
	UniqueID       sources.Text `json:"uniqueId"`
	SecUID         sources.Text `json:"secUid"`
	Nickname       sources.Text `json:"nickname"`
	AvatarLarger   sources.Text `json:"avatarLarger"`
	Signature      sources.Text `json:"signature"`
	Verified       sources.Flag `json:"verified"`
	PrivateAccount sources.Flag `json:"privateAccount"`
}

// Stats are the counters of the short-video profile.
type Stats struct {
	FollowerCount  sources.Int64 `json:"followerCount"`
	FollowingCount sources.Int64 `json:"followingCount"`
	HeartCount     sources.Int64 `json:"heartCount"`
	VideoCount     sources.Int64 `json:"videoCount"`
	DiggCount      sources.Int64 `json:"diggCount"`
}

// Profile is the response of /shortvideo/profile.
type Profile struct {
	Success sources.Flag    `json:"success"`
	User    User            `json:"user"`
	Stats   Stats           `json:"stats"`
	Credits sources.Credits `json:"-"`
	Raw     json.RawMessage `json:"-"`
	// Videos are the recent videos the body carries (itemList), each with
	// its raw JSON (a slice of Raw); entries that are not video objects
	// are counted in VideosDropped, the last one's reason in VideosDropReason.
	Videos           []sources.Item[Video] `json:"-"`
	VideosDropped    int                   `json:"-"`
	VideosDropReason string                `json:"-"`
}

// FollowEntry is an entry of the followers and following lists. It accepts
// the platform's snake_case spelling too. Verified is not Valid when the
// entry does not say: it must not overwrite what a profile said.
type FollowEntry struct {
	UniqueID      string
	Nickname      string
	SecUID        string
	UID           string // the numeric user id (uid), when sent
	Verified      sources.Flag
	FollowerCount sources.Int64
}

func (e *FollowEntry) UnmarshalJSON(b []byte) error {
	var w struct {
		UniqueID       sources.Text  `json:"uniqueId"`
		UniqueIDSnake  sources.Text  `json:"unique_id"`
		Nickname       sources.Text  `json:"nickname"`
		SecUID         sources.Text  `json:"secUid"`
		SecUIDSnake    sources.Text  `json:"sec_uid"`
		UID            sources.Text  `json:"uid"`
		Verified       sources.Flag  `json:"verified"`
		FollowerCount  sources.Int64 `json:"followerCount"`
		FollowerCountS sources.Int64 `json:"follower_count"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = FollowEntry{
		UniqueID:      string(sources.FirstText(w.UniqueID, w.UniqueIDSnake)),
		Nickname:      string(w.Nickname),
		SecUID:        string(sources.FirstText(w.SecUID, w.SecUIDSnake)),
		UID:           string(w.UID),
		Verified:      w.Verified,
		FollowerCount: w.FollowerCount,
	}
	if !e.FollowerCount.Valid {
		e.FollowerCount = w.FollowerCountS
	}
	return nil
}

// ProfileCall calls /shortvideo/profile.
func ProfileCall(handle string) sources.Call[*Profile] {
	return profileCall(url.Values{"handle": {sources.NormalizeHandle(handle)}})
}

// ProfileByIDCall calls /shortvideo/profile for the account whose numeric
// user id is userID: the real service's user_id parameter (Route.Accepts),
// for an author its answer named by ids only.
func ProfileByIDCall(userID string) sources.Call[*Profile] {
	if !sources.IsDigits(userID) {
		return sources.Refused[*Profile](sources.ParamError("/shortvideo/profile", "user_id", "must be a numeric user id"))
	}
	return profileCall(url.Values{"user_id": {userID}})
}

// profileCall is /shortvideo/profile asked with q.
func profileCall(q url.Values) sources.Call[*Profile] {
	return sources.ObjectCall(sources.ShortVideo, "/profile", q, sources.DecodeInto(func(a *sources.Answer, p *Profile) error {
		if err := sources.DecodeObject(a, p, &p.Raw, &p.Credits); err != nil {
			return err
		}
		p.Videos, p.VideosDropped, p.VideosDropReason = recentVideos(a)
		return nil
	}))
}

// FollowersCall calls one page of /shortvideo/user/followers.
func FollowersCall(secUID, cursor string) sources.Call[*sources.Page[FollowEntry]] {
	return followCall("/user/followers", secUID, cursor, "followers", "users", "user_list")
}

// FollowingCall calls one page of /shortvideo/user/following. The real
// service names its list "followings".
func FollowingCall(secUID, cursor string) sources.Call[*sources.Page[FollowEntry]] {
	return followCall("/user/following", secUID, cursor, "following", "followings", "users", "user_list")
}

// followCall is a page of a follow list, whose next cursor may be the real
// service's min_time.
func followCall(path, secUID, cursor string, listKeys ...string) sources.Call[*sources.Page[FollowEntry]] {
	return sources.ShapedPageCall[FollowEntry](sources.ShortVideo, path, sources.WithCursor(url.Values{"secUid": {secUID}}, cursor),
		sources.PageShape{Lists: listKeys, Cursors: followCursorKeys})
}

// followCursorKeys add "min_time": the real follow lists carry their next
// cursor there (and no cursor), so without it a walk would stop after one
// page.
var followCursorKeys = append(slices.Clip(sources.CursorKeys), "min_time")

// recentVideos reads the videos of a profile body's itemList, leniently: a
// malformed entry is counted as dropped, not a reason to lose the profile.
func recentVideos(a *sources.Answer) (out []sources.Item[Video], dropped int, reason string) {
	var raws []sources.RawRef
	if raw, ok := a.Member("itemList"); !ok || json.Unmarshal(raw, &raws) != nil {
		return nil, 0, ""
	}
	return sources.DecodeItems[Video](raws, "itemList")
}
