package sinks

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
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
	Kind        string // SearchKeyword, SearchHashtag or SearchTop
	QueryKey    string // QueryKey(keyword, filters)
	Rank        int    // the platform's rank: 1-based across pages, as returned
	Type        string // ResultVideo, ResultUser, ResultHashtag, ResultSound...
	VideoID     *string
	UniqueID    *string
	HashtagName *string
	SongID      *string
	Raw         []byte
}

const upsertSVSearchResults = `
INSERT INTO shortvideo.search_results AS s (run_id, search_kind, query_key, rank, result_type,
    video_id, unique_id, hashtag_name, song_id, raw)
SELECT $1, r.search_kind, r.query_key, r.rank, r.result_type, r.video_id, r.unique_id, r.hashtag_name,
    r.song_id, r.raw::jsonb
FROM unnest($2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
    $10::text[])
    AS r(search_kind, query_key, rank, result_type, video_id, unique_id, hashtag_name, song_id, raw)
ON CONFLICT (run_id, search_kind, query_key, rank) DO UPDATE SET
    result_type  = EXCLUDED.result_type,
    video_id     = EXCLUDED.video_id,
    unique_id    = EXCLUDED.unique_id,
    hashtag_name = EXCLUDED.hashtag_name,
    song_id      = EXCLUDED.song_id,
    raw          = EXCLUDED.raw
WHERE (s.result_type, s.video_id, s.unique_id, s.hashtag_name, s.song_id, s.raw)
  IS DISTINCT FROM
      (EXCLUDED.result_type, EXCLUDED.video_id, EXCLUDED.unique_id, EXCLUDED.hashtag_name, EXCLUDED.song_id,
       EXCLUDED.raw)`

func writeSVSearchResults(batch *pgx.Batch, runID int64, rows []SVSearchResult) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVSearchResult) string {
		return r.Kind + "\x00" + r.QueryKey + "\x00" + strconv.Itoa(r.Rank)
	}, nil)
	n := len(rows)
	kinds, queries, ranks, types := make([]string, n), make([]string, n), make([]int, n), make([]string, n)
	videos, users, hashtags, songs := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	raws := make([]string, n)
	for i, r := range rows {
		kinds[i], queries[i], ranks[i], types[i] = r.Kind, r.QueryKey, r.Rank, r.Type
		videos[i], users[i], hashtags[i], songs[i] = r.VideoID, r.UniqueID, r.HashtagName, r.SongID
		raws[i] = string(r.Raw)
	}
	batch.Queue(upsertSVSearchResults, runID, kinds, queries, ranks, types, videos, users, hashtags, songs, raws)
}

// SVFeedEntry is a video of the trending feed or of the popular videos at its
// rank (1-based, as returned). The video must be in the batch or stored.
type SVFeedEntry struct {
	Feed    string // FeedTrending or FeedPopularVideos
	Rank    int
	VideoID string
	Raw     []byte
}

const upsertSVFeedEntries = `
INSERT INTO shortvideo.feed_entries AS f (run_id, feed, rank, video_id, raw)
SELECT $1, r.feed, r.rank, r.video_id, r.raw::jsonb
FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[]) AS r(feed, rank, video_id, raw)
ON CONFLICT (run_id, feed, rank) DO UPDATE SET
    video_id = EXCLUDED.video_id,
    raw      = EXCLUDED.raw
WHERE (f.video_id, f.raw) IS DISTINCT FROM (EXCLUDED.video_id, EXCLUDED.raw)`

func writeSVFeedEntries(batch *pgx.Batch, runID int64, rows []SVFeedEntry) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVFeedEntry) string { return r.Feed + "\x00" + strconv.Itoa(r.Rank) }, nil)
	n := len(rows)
	feeds, ranks, videos, raws := make([]string, n), make([]int, n), make([]string, n), make([]string, n)
	for i, r := range rows {
		feeds[i], ranks[i], videos[i], raws[i] = r.Feed, r.Rank, r.VideoID, string(r.Raw)
	}
	batch.Queue(upsertSVFeedEntries, runID, feeds, ranks, videos, raws)
}

// SVPopularCreator is an entry of the popular creators list at its rank
// (1-based, as returned). The user must be in the batch (an SVUser from the
// same entry) or stored.
type SVPopularCreator struct {
	Rank          int
	UniqueID      string
	FollowerCount *int64
	Verified      *bool
	Raw           []byte
}

const upsertSVPopularCreators = `
INSERT INTO shortvideo.popular_creators AS c (run_id, rank, unique_id, follower_count, verified, raw)
SELECT $1, r.rank, r.unique_id, r.follower_count, r.verified, r.raw::jsonb
FROM unnest($2::integer[], $3::text[], $4::bigint[], $5::boolean[], $6::text[])
    AS r(rank, unique_id, follower_count, verified, raw)
ON CONFLICT (run_id, rank) DO UPDATE SET
    unique_id      = EXCLUDED.unique_id,
    follower_count = EXCLUDED.follower_count,
    verified       = EXCLUDED.verified,
    raw            = EXCLUDED.raw
WHERE (c.unique_id, c.follower_count, c.verified, c.raw)
  IS DISTINCT FROM (EXCLUDED.unique_id, EXCLUDED.follower_count, EXCLUDED.verified, EXCLUDED.raw)`

func writeSVPopularCreators(batch *pgx.Batch, runID int64, rows []SVPopularCreator) {
	if len(rows) == 0 {
		return
	}
	rows = dedupe(rows, func(r SVPopularCreator) string { return strconv.Itoa(r.Rank) }, nil)
	n := len(rows)
	ranks, users, followers, verified, raws := make([]int, n), make([]string, n), make([]*int64, n), make([]*bool, n), make([]string, n)
	for i, r := range rows {
		ranks[i], users[i], followers[i], verified[i], raws[i] = r.Rank, r.UniqueID, r.FollowerCount, r.Verified, string(r.Raw)
	}
	batch.Queue(upsertSVPopularCreators, runID, ranks, users, followers, verified, raws)
}
