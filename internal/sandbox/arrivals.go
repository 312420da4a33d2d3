package sandbox

import (
	"sync"
	"time"
)

// ArrivalsMax is how many arrivals Server.Arrivals keeps per key: the most
// recent ones.
const ArrivalsMax = 100_000

// StatusClientClosed is the Arrival.Status of a request whose client gave up
// (its context was done) before any answer was written; nothing was sent.
const StatusClientClosed = 499

// Arrival is one request that reached the /api chain, recorded when its
// status was decided.
type Arrival struct {
	// Time is when the request arrived, before any fault or latency.
	Time time.Time
	// Answered is when its status line was written (or the client gave up).
	Answered time.Time
	// Endpoint is the Usage.ByEndpoint key: the path after /api, or
	// OtherEndpoint.
	Endpoint string
	// Query is the raw query string as sent.
	Query string
	// Status is the HTTP status answered, StatusClientClosed if none.
	Status int
	// RetryAfter is, for a 429, the delay until the key's bucket has a token
	// (whatever the Retry-After header says, or whether it is sent); else 0.
	// A client honouring it sends its next request at or after
	// Answered + RetryAfter.
	RetryAfter time.Duration
	// Credits is what the answer was charged when it was billable (a 200
	// not free: 1, its endpoint's price, 15 for comments with replies),
	// else 0: a check of what was bought reads it request by request.
	Credits int64
	// Truncated marks a 200 sent cut (billable all the same).
	Truncated bool
	// Abandoned marks an answer made after its client gave up
	// (Faults.BillAbandoned): billed, never read.
	Abandoned bool
}

// arrivalBook keeps the last ArrivalsMax arrivals of each key in a ring.
type arrivalBook struct {
	mu    sync.Mutex
	byKey map[string]*arrivalRing
}

type arrivalRing struct {
	items []Arrival
	next  int // index of the oldest item once the ring is full
}

func newArrivalBook() *arrivalBook { return &arrivalBook{byKey: map[string]*arrivalRing{}} }

func (b *arrivalBook) add(key string, a Arrival) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.byKey[key]
	if r == nil {
		r = &arrivalRing{}
		b.byKey[key] = r
	}
	if len(r.items) < ArrivalsMax {
		r.items = append(r.items, a)
		return
	}
	r.items[r.next] = a
	r.next = (r.next + 1) % ArrivalsMax
}

// get returns key's arrivals, oldest first, in a new slice.
func (b *arrivalBook) get(key string) []Arrival {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.byKey[key]
	if r == nil {
		return nil
	}
	out := make([]Arrival, 0, len(r.items))
	out = append(out, r.items[r.next:]...)
	return append(out, r.items[:r.next]...)
}
