package sinks

// PSPost is a post (photo, video, carousel or reel) from a profile's posts
// or the post endpoint, keyed by its shortcode. Nil fields never erase
// stored values.
type PSPost struct {
	Code          string  `db:"code"`
	PostID        *string `db:"post_id"`
	URL           *string `db:"url"`
	OwnerUsername *string `db:"owner_username"`
	MediaType     *int64  `db:"media_type"`
	ProductType   *string `db:"product_type"`
	Caption       *string `db:"caption"`
	TakenAt       *int64  `db:"taken_at"` // unix seconds
	Raw           []byte  `db:"raw"`
}

// PSPostSnapshot is a post's counters as one run saw them.
type PSPostSnapshot struct {
	Code         string `db:"code"`
	LikeCount    *int64 `db:"like_count"`
	CommentCount *int64 `db:"comment_count"`
	PlayCount    *int64 `db:"play_count"`
}

// PSProfilePost links a profile to a post of its posts list; the post must
// be in the batch or stored.
type PSProfilePost struct {
	Username string `db:"username"`
	Code     string `db:"code"`
}

// PSProfileReel links a profile to a reel of its reels list; the reel must
// be in the batch or stored.
type PSProfileReel struct {
	Username string `db:"username"`
	ReelID   string `db:"reel_id"`
}

// PSProfileHighlight is a highlight a profile lists, at its position.
type PSProfileHighlight struct {
	Username    string  `db:"username"`
	HighlightID string  `db:"highlight_id"` // bare digits
	Position    int     `db:"position"`     // 1-based
	Title       *string `db:"title"`
	CoverURL    *string `db:"cover_url"`
	Raw         []byte  `db:"raw"`
}

var _ = upsert("photosocial.posts", 204, "UpsertPSPosts", func(r PSPost) string { return r.Code }, nil)

var _ = upsert("photosocial.post_snapshots", 219, "UpsertPSPostSnapshots", func(r PSPostSnapshot) string { return r.Code }, fillNil)

var _ = upsert("photosocial.profile_posts", 220, "UpsertPSProfilePosts", func(r PSProfilePost) string { return r.Username + "\x00" + r.Code }, nil)

var _ = upsert("photosocial.profile_reels", 221, "UpsertPSProfileReels", func(r PSProfileReel) string { return r.Username + "\x00" + r.ReelID }, nil)

var _ = upsert("photosocial.profile_highlights", 222, "UpsertPSProfileHighlights", func(r PSProfileHighlight) string { return r.Username + "\x00" + r.HighlightID }, nil)
