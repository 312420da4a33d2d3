package endpoints

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/socialcrawl/crawler/sources"
)

// The feeds (trending feed, popular videos, popular creators) take no
// parameters and are not paginated: their pages always have Cursor "" and
// HasMoreKnown false, whatever the body carries, so NextStep ends after one.

// SVCreator is an entry of the popular creators. The real service sends no
// uniqueId: its entries carry user_id, nick_name, follower_cnt and tt_link,
// the profile's web link, from which UniqueID is read ("…/@handle"); an
// entry with neither has UniqueID "".
type SVCreator struct {
	UniqueID      Text
	UserID        Text
	Nickname      Text
	FollowerCount Int64
	Verified      Flag
}

func (cr *SVCreator) UnmarshalJSON(b []byte) error {
	var w struct {
		UniqueID       Text  `json:"uniqueId"`
		UniqueIDS      Text  `json:"unique_id"`
		UserID         Text  `json:"user_id"`
		Nickname       Text  `json:"nickname"`
		NickNameS      Text  `json:"nick_name"`
		FollowerCount  Int64 `json:"followerCount"`
		FollowerCountS Int64 `json:"follower_count"`
		FollowerCnt    Int64 `json:"follower_cnt"`
		Verified       Flag  `json:"verified"`
		Link           Text  `json:"tt_link"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*cr = SVCreator{
		UniqueID:      sources.FirstText(w.UniqueID, w.UniqueIDS, handleFromLink(string(w.Link))),
		UserID:        w.UserID,
		Nickname:      sources.FirstText(w.Nickname, w.NickNameS),
		FollowerCount: sources.FirstInt(w.FollowerCount, w.FollowerCountS, w.FollowerCnt),
		Verified:      w.Verified,
	}
	return nil
}

// handleFromLink is the handle of a profile's web link
// ("https://host/@handle", query and trailing slash allowed), "" when the
// link is no such link.
func handleFromLink(link string) Text {
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil {
		return ""
	}
	h, ok := strings.CutPrefix(strings.Trim(u.Path, "/"), "@")
	if !ok || h == "" || strings.ContainsAny(h, "/@") {
		return ""
	}
	return Text(h)
}

// SVTrendingFeedCall calls /shortvideo/get-trending-feed.
func SVTrendingFeedCall() sources.Call[*sources.Page[SVVideo]] {
	return feedCall[SVVideo]("/get-trending-feed", svVideoListKeys...)
}

// SVPopularVideosCall calls /shortvideo/videos/popular.
func SVPopularVideosCall() sources.Call[*sources.Page[SVVideo]] {
	return feedCall[SVVideo]("/videos/popular", svVideoListKeys...)
}

// SVPopularCreatorsCall calls /shortvideo/creators/popular.
func SVPopularCreatorsCall() sources.Call[*sources.Page[SVCreator]] {
	return feedCall[SVCreator]("/creators/popular", "creators", "users")
}

func feedCall[T any](path string, listKeys ...string) sources.Call[*sources.Page[T]] {
	return sources.PageCall[T](sources.ShortVideo, path, nil, listKeys...).Then(func(p *sources.Page[T], err error) (*sources.Page[T], error) {
		if err == nil {
			p.Cursor, p.HasMore, p.HasMoreKnown = "", false, false
		}
		return p, err
	})
}
