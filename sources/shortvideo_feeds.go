package sources

import (
	"context"
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

// SVTrendingFeed fetches /shortvideo/get-trending-feed.
func (c *Client) SVTrendingFeed(ctx context.Context) (*Page[SVVideo], error) {
	return fetchFeed[SVVideo](ctx, c, "/get-trending-feed", svVideoListKeys...)
}

// SVPopularVideos fetches /shortvideo/videos/popular.
func (c *Client) SVPopularVideos(ctx context.Context) (*Page[SVVideo], error) {
	return fetchFeed[SVVideo](ctx, c, "/videos/popular", svVideoListKeys...)
}

// SVPopularCreators fetches /shortvideo/creators/popular.
func (c *Client) SVPopularCreators(ctx context.Context) (*Page[SVCreator], error) {
	return fetchFeed[SVCreator](ctx, c, "/creators/popular", "creators", "users")
}

func fetchFeed[T any](ctx context.Context, c *Client, path string, listKeys ...string) (*Page[T], error) {
	p, err := fetchPage[T](ctx, c, ShortVideo, path, nil, listKeys...)
	if err != nil {
		return nil, err
	}
	p.Cursor, p.HasMore, p.HasMoreKnown = "", false, false
	return p, nil
}
