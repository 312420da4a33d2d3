package endpoints

import (
	"encoding/json"
	"net/url"
	"slices"

	"github.com/socialcrawl/crawler/sources"
)

// SVUser is the user object of the short-video profile.
type SVUser struct {
	ID             Text `json:"id"`
	UniqueID       Text `json:"uniqueId"`
	SecUID         Text `json:"secUid"`
	Nickname       Text `json:"nickname"`
	AvatarLarger   Text `json:"avatarLarger"`
	Signature      Text `json:"signature"`
	Verified       Flag `json:"verified"`
	PrivateAccount Flag `json:"privateAccount"`
}

// SVStats are the counters of the short-video profile.
type SVStats struct {
	FollowerCount  Int64 `json:"followerCount"`
	FollowingCount Int64 `json:"followingCount"`
	HeartCount     Int64 `json:"heartCount"`
	VideoCount     Int64 `json:"videoCount"`
	DiggCount      Int64 `json:"diggCount"`
}

// SVProfile is the response of /shortvideo/profile.
type SVProfile struct {
	Success Flag            `json:"success"`
	User    SVUser          `json:"user"`
	Stats   SVStats         `json:"stats"`
	Credits Credits         `json:"-"`
	Raw     json.RawMessage `json:"-"`
	// Videos are the recent videos the body carries (itemList), each with
	// its raw JSON (a slice of Raw); entries that are not video objects
	// are counted in VideosDropped, the last one's reason in VideosDropReason.
	Videos           []sources.Item[SVVideo] `json:"-"`
	VideosDropped    int                     `json:"-"`
	VideosDropReason string                  `json:"-"`
}

// SVFollowEntry is an entry of the followers and following lists. It accepts
// the platform's snake_case spelling too. Verified is not Valid when the
// entry does not say: it must not overwrite what a profile said.
type SVFollowEntry struct {
	UniqueID      string
	Nickname      string
	SecUID        string
	UID           string // the numeric user id (uid), when sent
	Verified      Flag
	FollowerCount Int64
}

func (e *SVFollowEntry) UnmarshalJSON(b []byte) error {
	var w struct {
		UniqueID       Text  `json:"uniqueId"`
		UniqueIDSnake  Text  `json:"unique_id"`
		Nickname       Text  `json:"nickname"`
		SecUID         Text  `json:"secUid"`
		SecUIDSnake    Text  `json:"sec_uid"`
		UID            Text  `json:"uid"`
		Verified       Flag  `json:"verified"`
		FollowerCount  Int64 `json:"followerCount"`
		FollowerCountS Int64 `json:"follower_count"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = SVFollowEntry{
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

// SVProfileCall calls /shortvideo/profile.
func SVProfileCall(handle string) sources.Call[*SVProfile] {
	return profileCall(url.Values{"handle": {sources.NormalizeHandle(handle)}})
}

// SVProfileByIDCall calls /shortvideo/profile for the account whose numeric
// user id is userID: the real service's user_id parameter (Route.Accepts),
// for an author its answer named by ids only.
func SVProfileByIDCall(userID string) sources.Call[*SVProfile] {
	if !sources.IsDigits(userID) {
		return sources.Refused[*SVProfile](sources.ParamError("/shortvideo/profile", "user_id", "must be a numeric user id"))
	}
	return profileCall(url.Values{"user_id": {userID}})
}

// profileCall is /shortvideo/profile asked with q.
func profileCall(q url.Values) sources.Call[*SVProfile] {
	return sources.ObjectCall(sources.ShortVideo, "/profile", q, sources.DecodeInto(func(a *sources.Answer, p *SVProfile) error {
		if err := sources.DecodeObject(a, p, &p.Raw, &p.Credits); err != nil {
			return err
		}
		p.Videos, p.VideosDropped, p.VideosDropReason = recentVideos(a)
		return nil
	}))
}

// SVFollowersCall calls one page of /shortvideo/user/followers.
func SVFollowersCall(secUID, cursor string) sources.Call[*sources.Page[SVFollowEntry]] {
	return followCall("/user/followers", secUID, cursor, "followers", "users", "user_list")
}

// SVFollowingCall calls one page of /shortvideo/user/following. The real
// service names its list "followings".
func SVFollowingCall(secUID, cursor string) sources.Call[*sources.Page[SVFollowEntry]] {
	return followCall("/user/following", secUID, cursor, "following", "followings", "users", "user_list")
}

// followCall is a page of a follow list, whose next cursor may be the real
// service's min_time.
func followCall(path, secUID, cursor string, listKeys ...string) sources.Call[*sources.Page[SVFollowEntry]] {
	return sources.ShapedPageCall[SVFollowEntry](sources.ShortVideo, path, sources.WithCursor(url.Values{"secUid": {secUID}}, cursor),
		sources.PageShape{Lists: listKeys, Cursors: followCursorKeys})
}

// followCursorKeys add "min_time": the real follow lists carry their next
// cursor there (and no cursor), so without it a walk would stop after one
// page.
var followCursorKeys = append(slices.Clip(sources.CursorKeys), "min_time")

// recentVideos reads the videos of a profile body's itemList, leniently: a
// malformed entry is counted as dropped, not a reason to lose the profile.
func recentVideos(a *sources.Answer) (out []sources.Item[SVVideo], dropped int, reason string) {
	var raws []RawRef
	if raw, ok := a.Member("itemList"); !ok || json.Unmarshal(raw, &raws) != nil {
		return nil, 0, ""
	}
	return sources.DecodeItems[SVVideo](raws, "itemList")
}
