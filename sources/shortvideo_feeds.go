package sources

import (
	"encoding/json"
)

// The feeds (trending feed, popular videos, popular creators) take no
// parameters and are not paginated: their pages always have Cursor "" and
// HasMoreKnown false, whatever the body carries, so NextStep ends after one.

// SVCreator is an entry of the popular creators.
type SVCreator struct {
	UniqueID      Text
	Nickname      Text
	FollowerCount Int64
	Verified      Flag
}

func (cr *SVCreator) UnmarshalJSON(b []byte) error {
	var w struct {
		UniqueID       Text  `json:"uniqueId"`
		UniqueIDS      Text  `json:"unique_id"`
		Nickname       Text  `json:"nickname"`
		FollowerCount  Int64 `json:"followerCount"`
		FollowerCountS Int64 `json:"follower_count"`
		Verified       Flag  `json:"verified"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*cr = SVCreator{
		UniqueID:      firstText(w.UniqueID, w.UniqueIDS),
		Nickname:      w.Nickname,
		FollowerCount: firstInt(w.FollowerCount, w.FollowerCountS),
		Verified:      w.Verified,
	}
	return nil
}

// SVTrendingFeedCall calls /shortvideo/get-trending-feed.
func SVTrendingFeedCall() Call[*Page[SVVideo]] {
	return feedCall[SVVideo]("/get-trending-feed", svVideoListKeys...)
}

// SVPopularVideosCall calls /shortvideo/videos/popular.
func SVPopularVideosCall() Call[*Page[SVVideo]] {
	return feedCall[SVVideo]("/videos/popular", svVideoListKeys...)
}

// SVPopularCreatorsCall calls /shortvideo/creators/popular.
func SVPopularCreatorsCall() Call[*Page[SVCreator]] {
	return feedCall[SVCreator]("/creators/popular", "creators", "users")
}

func feedCall[T any](path string, listKeys ...string) Call[*Page[T]] {
	call := pageCall[T](ShortVideo, path, nil, listKeys...)
	decode := call.decode
	call.decode = func(a *answer) (*Page[T], error) {
		p, err := decode(a)
		if err == nil {
			p.Cursor, p.HasMore, p.HasMoreKnown = "", false, false
		}
		return p, err
	}
	return call
}
