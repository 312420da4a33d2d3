package sources

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
)

// The client's tests call two of the contract's endpoints through calls of
// their own: the platforms' calls are in packages that import this one.

// testProfile is what the client's tests read of /shortvideo/profile.
type testProfile struct {
	User struct {
		ID, UniqueID, Nickname, Signature Text
		Verified, PrivateAccount          Flag
	}
	Credits Credits         `json:"-"`
	Raw     json.RawMessage `json:"-"`
}

func testProfileCall(handle string) Call[*testProfile] {
	return ObjectCall(ShortVideo, "/profile", url.Values{"handle": {NormalizeHandle(handle)}}, DecodeInto(func(a *Answer, p *testProfile) error {
		return DecodeObject(a, p, &p.Raw, &p.Credits)
	}))
}

// SVProfile calls /shortvideo/profile with no lease.
func (c *Client) SVProfile(ctx context.Context, handle string) (*testProfile, error) {
	return Do(ctx, c, nil, testProfileCall(handle))
}

// testFollower is an entry of a follow list.
type testFollower struct {
	UniqueID Text
}

// SVFollowers calls a page of /shortvideo/user/followers with no lease.
func (c *Client) SVFollowers(ctx context.Context, secUID, cursor string) (*Page[testFollower], error) {
	return Do(ctx, c, nil, PageCall[testFollower](ShortVideo, "/user/followers", WithCursor(url.Values{"secUid": {secUID}}, cursor), "followers"))
}

// NewAnswer is newAnswer, for the external tests' benchmarks.
var NewAnswer = newAnswer

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
