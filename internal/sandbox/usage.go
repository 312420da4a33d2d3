package sandbox

import (
	"maps"
	"net/http"
	"sync"
)

// Usage is what one API key consumed. Requests counts every request that
// reached the /api chain with that key (errors included); Billable counts
// the ones that cost a credit, and Credits the credits they cost (1 each in
// the contract preset; in the real preset 15 for comments with replies, 0
// for cached answers, which are not billable). The fault counters split Requests by what the
// fault layer did: RateLimited counts 429 answers, OutOfCredits 402 answers,
// Errors 5xx answers (injected or not, hangs excepted), Truncated the 200s
// sent cut (also Billable), Hung the requests held by a hang (whether they
// ended with a 504 or with the client giving up).
type Usage struct {
	Requests     int64 `json:"requests"`
	Billable     int64 `json:"billable"`
	Credits      int64 `json:"credits"`
	RateLimited  int64 `json:"rate_limited"`
	OutOfCredits int64 `json:"out_of_credits"`
	Errors       int64 `json:"errors"`
	Truncated    int64 `json:"truncated"`
	Hung         int64 `json:"hung"`
	// CreditsRemaining is the key's balance when credits are limited
	// (Config.Credits or CreditLimit), else nil.
	CreditsRemaining *int64                   `json:"credits_remaining,omitempty"`
	ByEndpoint       map[string]EndpointUsage `json:"by_endpoint"`
}

// EndpointUsage is the share of one endpoint, keyed in Usage.ByEndpoint by
// the path after /api (e.g. "/shortvideo/user/followers"; in the real preset
// the whole path, e.g. "/v1/tiktok/user/followers") or OtherEndpoint.
type EndpointUsage struct {
	Requests int64 `json:"requests"`
	Billable int64 `json:"billable"`
	Credits  int64 `json:"credits"`
}

// outcome is what count learned about one answer.
type outcome struct {
	status    int
	billable  bool
	credits   int64 // charged when billable
	truncated bool
	hung      bool
}

// usageBook holds the counters of every key.
type usageBook struct {
	mu    sync.Mutex
	byKey map[string]*Usage
}

func newUsageBook() *usageBook { return &usageBook{byKey: map[string]*Usage{}} }

func (b *usageBook) record(key, endpoint string, o outcome) {
	var bill, credits int64
	if o.billable {
		bill, credits = 1, o.credits
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.byKey[key]
	if u == nil {
		u = &Usage{ByEndpoint: map[string]EndpointUsage{}}
		b.byKey[key] = u
	}
	u.Requests++
	u.Billable += bill
	u.Credits += credits
	switch {
	case o.hung:
		u.Hung++
	case o.status == http.StatusTooManyRequests:
		u.RateLimited++
	case o.status == http.StatusPaymentRequired:
		u.OutOfCredits++
	case o.status >= 500 && o.status <= 599:
		u.Errors++
	case o.truncated:
		u.Truncated++
	}
	e := u.ByEndpoint[endpoint]
	e.Requests++
	e.Billable += bill
	e.Credits += credits
	u.ByEndpoint[endpoint] = e
}

// get returns a copy the caller may keep; ByEndpoint is never nil.
func (b *usageBook) get(key string) Usage {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.byKey[key]
	if u == nil {
		return Usage{ByEndpoint: map[string]EndpointUsage{}}
	}
	c := *u
	c.ByEndpoint = maps.Clone(u.ByEndpoint)
	return c
}
