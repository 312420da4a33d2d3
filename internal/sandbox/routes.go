package sandbox

// endpoint answers one GET: a 200 reply, or an *apiError.
type endpoint func(q query) (reply, error)

// reply is a 200 answer; free marks the one 200 that costs no credit (the
// photo-sharing profile of a private account).
type reply struct {
	body any
	free bool
}

func billable(body any) (reply, error) { return reply{body: body}, nil }

// endpoints maps the path after /api to its handler: the 18 endpoints of
// upstream-api.md, numbered as there.
func (w *world) endpoints() map[string]endpoint {
	return map[string]endpoint{
		"/shortvideo/search/keyword":         w.searchKeyword,   // 1
		"/shortvideo/search/hashtag":         w.searchHashtag,   // 2
		"/shortvideo/search/top":             w.searchTop,       // 3
		"/shortvideo/user/followers":         w.followers,       // 4
		"/shortvideo/user/following":         w.following,       // 5
		"/shortvideo/song/videos":            w.songVideos,      // 6
		"/shortvideo/song":                   w.song,            // 7
		"/shortvideo/get-trending-feed":      w.trendingFeed,    // 8
		"/shortvideo/videos/popular":         w.popularVideos,   // 9
		"/shortvideo/creators/popular":       w.popularCreators, // 10
		"/shortvideo/profile":                w.profile,         // 11
		"/shortvideo/user/live":              w.live,            // 12
		"/photosocial/profile":               w.psProfile,       // 13
		"/photosocial/post/comments":         w.psComments,      // 14
		"/photosocial/reels/search":          w.psReelsSearch,   // 15
		"/photosocial/media/transcript":      w.psTranscript,    // 16
		"/photosocial/user/embed":            w.psEmbed,         // 17
		"/photosocial/user/highlight/detail": w.psHighlight,     // 18
	}
}
