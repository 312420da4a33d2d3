package sources

import (
	"context"
	"sync"
)

// The typed calls as Client methods with no lease, for the tests.

func (c *Client) SVProfile(ctx context.Context, handle string) (*SVProfile, error) {
	return Do(ctx, c, nil, SVProfileCall(handle))
}
func (c *Client) SVFollowers(ctx context.Context, secUID, cursor string) (*Page[SVFollowEntry], error) {
	return Do(ctx, c, nil, SVFollowersCall(secUID, cursor))
}
func (c *Client) SVFollowing(ctx context.Context, secUID, cursor string) (*Page[SVFollowEntry], error) {
	return Do(ctx, c, nil, SVFollowingCall(secUID, cursor))
}
func (c *Client) SVKeywordSearch(ctx context.Context, q KeywordQuery, cursor string) (*Page[SVVideo], error) {
	return Do(ctx, c, nil, SVKeywordSearchCall(q, cursor))
}
func (c *Client) SVHashtagSearch(ctx context.Context, keyword, cursor string) (*Page[SVHashtag], error) {
	return Do(ctx, c, nil, SVHashtagSearchCall(keyword, cursor))
}
func (c *Client) SVTopSearch(ctx context.Context, keyword, cursor string) (*Page[SVTopResult], error) {
	return Do(ctx, c, nil, SVTopSearchCall(keyword, cursor))
}
func (c *Client) SVSong(ctx context.Context, songID string) (*SVSong, error) {
	return Do(ctx, c, nil, SVSongCall(songID))
}
func (c *Client) SVSongVideos(ctx context.Context, songID, cursor string) (*Page[SVVideo], error) {
	return Do(ctx, c, nil, SVSongVideosCall(songID, cursor))
}
func (c *Client) SVLive(ctx context.Context, handle string) (*SVLive, error) {
	return Do(ctx, c, nil, SVLiveCall(handle))
}
func (c *Client) SVTrendingFeed(ctx context.Context) (*Page[SVVideo], error) {
	return Do(ctx, c, nil, SVTrendingFeedCall())
}
func (c *Client) SVPopularVideos(ctx context.Context) (*Page[SVVideo], error) {
	return Do(ctx, c, nil, SVPopularVideosCall())
}
func (c *Client) SVPopularCreators(ctx context.Context) (*Page[SVCreator], error) {
	return Do(ctx, c, nil, SVPopularCreatorsCall())
}
func (c *Client) PSProfile(ctx context.Context, handle string) (*PSProfile, error) {
	return Do(ctx, c, nil, PSProfileCall(handle))
}
func (c *Client) PSEmbed(ctx context.Context, handle string) (*PSEmbed, error) {
	return Do(ctx, c, nil, PSEmbedCall(handle))
}
func (c *Client) PSHighlight(ctx context.Context, id string) (*PSHighlight, error) {
	return Do(ctx, c, nil, PSHighlightCall(id))
}
func (c *Client) PSComments(ctx context.Context, postURL, cursor string) (*Page[PSComment], error) {
	return Do(ctx, c, nil, PSCommentsCall(postURL, cursor))
}
func (c *Client) PSTranscript(ctx context.Context, mediaURL string) (*PSTranscript, error) {
	return Do(ctx, c, nil, PSTranscriptCall(mediaURL))
}
func (c *Client) PSReelsSearch(ctx context.Context, query string, page int) (*Page[PSReel], error) {
	return Do(ctx, c, nil, PSReelsSearchCall(query, page))
}

// testLease is a Lease for the tests: reserve, when set, is its Reserve;
// held bodies stay counted until release.
type testLease struct {
	reserve func() error
	mu      sync.Mutex
	held    []func()
}

func (l *testLease) Reserve(context.Context, string, int) error {
	if l.reserve != nil {
		return l.reserve()
	}
	return nil
}
func (l *testLease) Settle(context.Context, Outcome) {}
func (l *testLease) Hold(release func()) {
	l.mu.Lock()
	l.held = append(l.held, release)
	l.mu.Unlock()
}
func (l *testLease) BeforeBudgetWait()           {}
func (l *testLease) Body(string, string, []byte) {}

func (l *testLease) release() {
	l.mu.Lock()
	held := l.held
	l.held = nil
	l.mu.Unlock()
	for _, f := range held {
		f()
	}
}

// slotsWaited reports whether the client's slots are all held with n more
// calls waiting for one.
func (c *Client) slotsWaited(n int) bool {
	return c.slots.InFlight() == c.slots.Limit() && c.slots.Waiting() >= n
}
