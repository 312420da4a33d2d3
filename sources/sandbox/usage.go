package sandbox

import (
	"maps"
	"sync"
)

// Usage is what one API key consumed. Requests counts every request that
// reached the /api chain with that key (errors included); Billable counts
// the ones that cost a credit.
type Usage struct {
	Requests   int64                    `json:"requests"`
	Billable   int64                    `json:"billable"`
	ByEndpoint map[string]EndpointUsage `json:"by_endpoint"`
}

// EndpointUsage is the share of one endpoint, keyed in Usage.ByEndpoint by
// the path after /api (e.g. "/shortvideo/user/followers") or OtherEndpoint.
type EndpointUsage struct {
	Requests int64 `json:"requests"`
	Billable int64 `json:"billable"`
}

// usageBook is the only mutable state of the server.
type usageBook struct {
	mu    sync.Mutex
	byKey map[string]*Usage
}

func newUsageBook() *usageBook { return &usageBook{byKey: map[string]*Usage{}} }

func (b *usageBook) record(key, endpoint string, billable bool) {
	var bill int64
	if billable {
		bill = 1
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
	e := u.ByEndpoint[endpoint]
	e.Requests++
	e.Billable += bill
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
	return Usage{Requests: u.Requests, Billable: u.Billable, ByEndpoint: maps.Clone(u.ByEndpoint)}
}
