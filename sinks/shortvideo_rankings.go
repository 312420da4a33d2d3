package sinks

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Search kinds of SVSearchResult.Kind.
const (
	SearchKeyword = "keyword" // /shortvideo/search/keyword: videos
	SearchHashtag = "hashtag" // /shortvideo/search/hashtag: hashtags
	SearchTop     = "top"     // /shortvideo/search/top: mixed results
)

// Result types of SVSearchResult.Type, as the top search names them.
const (
	ResultVideo   = "video"
	ResultUser    = "user"
	ResultHashtag = "hashtag"
	ResultSound   = "sound"
)

// Feeds of SVFeedEntry.Feed.
const (
	FeedTrending      = "trending"       // /shortvideo/get-trending-feed
	FeedPopularVideos = "popular_videos" // /shortvideo/videos/popular
)

// QueryKey is the canonical key of a search: query lower-cased, runs of white
// space collapsed to one space, trimmed. Filters that change the result order
// (keyword search form B: date_posted, sort_by, region) follow after "?",
// sorted by name, empty values left out, so each filtered variant ranks
// separately: QueryKey("Funny  Cats", url.Values{"sort_by": {"most-liked"}})
// is "funny cats?sort_by=most-liked".
func QueryKey(query string, filters url.Values) string {
	key := strings.ToLower(strings.Join(strings.Fields(query), " "))
	var kept url.Values
	for name, vs := range filters {
		vs = slices.DeleteFunc(slices.Clone(vs), func(v string) bool { return v == "" })
		if len(vs) > 0 {
			if kept == nil {
				kept = url.Values{}
			}
			kept[name] = vs
		}
	}
	if len(kept) > 0 {
		key += "?" + kept.Encode()
	}
	return key
}

// SVSearchResult is one result of a keyword, hashtag or top search at its
// rank. The entity it names (video, user, hashtag or song) must be in the
// batch or already stored; set the one id field matching Type, none for a
// result type this package does not know.
type SVSearchResult struct {
	Kind        string  `db:"search_kind"` // SearchKeyword, SearchHashtag or SearchTop
	QueryKey    string  `db:"query_key"`   // QueryKey(keyword, filters)
	Rank        int     `db:"rank"`        // the platform's rank: 1-based across pages, as returned
	Type        string  `db:"result_type"` // ResultVideo, ResultUser, ResultHashtag, ResultSound...
	VideoID     *string `db:"video_id"`
	UniqueID    *string `db:"unique_id"`
	HashtagName *string `db:"hashtag_name"`
	SongID      *string `db:"song_id"`
	Raw         []byte  `db:"raw"`
}

var _ = upsert("shortvideo.search_results", 117, "UpsertSVSearchResults", func(r SVSearchResult) string {
	return r.Kind + "\x00" + r.QueryKey + "\x00" + strconv.Itoa(r.Rank)
}, nil)

// SVFeedEntry is a video of the trending feed or of the popular videos at its
// rank (1-based, as returned). The video must be in the batch or stored.
type SVFeedEntry struct {
	Feed    string `db:"feed"` // FeedTrending or FeedPopularVideos
	Rank    int    `db:"rank"`
	VideoID string `db:"video_id"`
	Raw     []byte `db:"raw"`
}

var _ = upsert("shortvideo.feed_entries", 118, "UpsertSVFeedEntries", func(r SVFeedEntry) string { return r.Feed + "\x00" + strconv.Itoa(r.Rank) }, nil)

// SVPopularCreator is an entry of the popular creators list at its rank
// (1-based, as returned). The user must be in the batch (an SVUser from the
// same entry) or stored.
type SVPopularCreator struct {
	Rank          int    `db:"rank"`
	UniqueID      string `db:"unique_id"`
	FollowerCount *int64 `db:"follower_count"`
	Verified      *bool  `db:"verified"`
	Raw           []byte `db:"raw"`
}

var _ = upsert("shortvideo.popular_creators", 119, "UpsertSVPopularCreators", func(r SVPopularCreator) string { return strconv.Itoa(r.Rank) }, nil)
