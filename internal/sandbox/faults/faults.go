package faults

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// HangMaxDefault is how long a hang holds a request when Faults.HangMax is
// 0: the public client's timeout, so a client with a shorter one gives up
// first.
const HangMaxDefault = 60 * time.Second

// Pseudo-statuses of Faults.Script besides real HTTP statuses.
const (
	// ScriptNormal (0) scripts nothing: the random faults, if any, decide.
	ScriptNormal = 0
	// ScriptTruncate answers the endpoint's 200 cut in the middle.
	ScriptTruncate = -1
	// ScriptHang holds the request like a HangRate hang.
	ScriptHang = -2
)

// Faults are the failures a Server injects into requests that passed the
// rate limit and the credit check. The zero value injects nothing. Every
// decision is a function of Seed and the request sequence (see draw), never
// of the clock or a shared random source.
type Faults struct {
	// ErrorRate is the fraction of requests answered 500, 502 or 503 with a
	// JSON error body. Not billable.
	ErrorRate float64
	// HangRate is the fraction of requests held until the client gives up
	// (the request context is done) or HangMax elapses; then 504. Not
	// billable.
	HangRate float64
	// TruncateRate is the fraction of requests whose 200 answer is cut in the
	// middle: the full Content-Length is announced, half the bytes are sent,
	// and the connection is closed, so the client reads an unexpected EOF.
	// Billable, since the upstream did the work. A non-200 answer (a 404, a
	// 400) is sent whole.
	TruncateRate float64
	// HangMax bounds a hang. Default HangMaxDefault.
	HangMax time.Duration
	// Latency delays every request that passed the rate limit and the credit
	// check, whatever its answer; LatencyJitter adds a seeded uniform
	// [0, LatencyJitter). A client that gives up while waiting gets nothing
	// and is not charged (but under BillAbandoned).
	Latency       time.Duration
	LatencyJitter time.Duration
	// BillAbandoned makes the upstream finish, and bill, a request its
	// client gave up on while it waited out its latency or a hang: the
	// endpoint answers into the closed connection (an error status drawn
	// is still answered free), as a service that does the work whether
	// anyone reads it would. Whether the real service does is unknown
	// (docs/budget.md); its Arrival says Abandoned.
	BillAbandoned bool
	// Seed selects the fault sequence; the same seed and the same requests
	// give the same faults.
	Seed int64
	// Script fixes the answers of an endpoint (key: the path after /api, e.g.
	// "/shortvideo/profile"; in the real preset the whole path, e.g.
	// "/v1/tiktok/profile"): the i-th request to that endpoint that reaches
	// the draw (all keys together, counted from New or SetFaults) answers
	// the i-th entry in place of the seeded outcome (the latency still
	// applies). Entries: ScriptNormal (0), ScriptTruncate, ScriptHang, or a
	// status 400-599 answered with a JSON error body (429 with Retry-After
	// per Config.RetryAfterMode for max(1 s, the bucket's delay); 402 with
	// OutOfCreditsMessage). Past the end of its list an endpoint is not
	// scripted. Scripted error statuses are not billable.
	Script map[string][]int
}

// WithDefaults is f with its defaults (HangMax).
func (f Faults) WithDefaults() Faults {
	if f.HangMax == 0 {
		f.HangMax = HangMaxDefault
	}
	return f
}

// Validate checks f; name prefixes the field names in the messages, and
// known says which paths are endpoints (of either dialect) a script may
// name.
func (f Faults) Validate(name string, known func(path string) bool) error {
	for _, r := range []struct {
		field string
		v     float64
	}{{"ErrorRate", f.ErrorRate}, {"HangRate", f.HangRate}, {"TruncateRate", f.TruncateRate}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fmt.Errorf("sandbox: %s.%s must be in [0, 1], got %v", name, r.field, r.v)
		}
	}
	if sum := f.ErrorRate + f.HangRate + f.TruncateRate; sum > 1 {
		return fmt.Errorf("sandbox: %s: ErrorRate + HangRate + TruncateRate must not exceed 1, got %v", name, sum)
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"HangMax", f.HangMax}, {"Latency", f.Latency}, {"LatencyJitter", f.LatencyJitter}} {
		if d.v < 0 {
			return fmt.Errorf("sandbox: %s.%s must not be negative, got %v", name, d.field, d.v)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(f.Script)) {
		if !known(path) {
			return fmt.Errorf("sandbox: %s.Script: %q is not an endpoint path (the path after /api, e.g. \"/shortvideo/profile\", or a real preset path, e.g. \"/v1/tiktok/profile\")", name, path)
		}
		for i, st := range f.Script[path] {
			if st != ScriptNormal && st != ScriptTruncate && st != ScriptHang && (st < 400 || st > 599) {
				return fmt.Errorf("sandbox: %s.Script[%q][%d] = %d: want 0, ScriptTruncate (-1), ScriptHang (-2) or a status 400-599", name, path, i, st)
			}
		}
	}
	return nil
}

// clone copies the script so the caller may change its map afterwards.
func (f Faults) clone() Faults {
	if f.Script != nil {
		s := make(map[string][]int, len(f.Script))
		for k, v := range f.Script {
			s[k] = slices.Clone(v)
		}
		f.Script = s
	}
	return f
}

// random reports whether decisions need the attempt number n.
func (f Faults) random() bool {
	return f.ErrorRate > 0 || f.HangRate > 0 || f.TruncateRate > 0 || f.LatencyJitter > 0
}

// action is what the fault layer does with a request after the latency.
type action int

const (
	actNone     action = iota // the endpoint answers
	actStatus                 // an error status, right away
	actHang                   // hold until the client gives up or HangMax
	actTruncate               // the endpoint answers, its 200 body cut
)

// decision is the draw for one request.
type decision struct {
	action   action
	status   int           // actStatus
	delay    time.Duration // Latency + jitter
	hangMax  time.Duration
	scripted bool
	// billAbandoned: Faults.BillAbandoned when drawn.
	billAbandoned bool
}

// faultBox holds the current Faults and the sequence counters the draw
// depends on. SetFaults replaces all of it at once.
type faultBox struct {
	mu       sync.Mutex
	f        Faults
	attempts map[uint64]int64 // H("attempt", key, path, rawQuery) -> requests drawn
	pos      map[string]int   // script path -> entries used
}

func newFaultBox(f Faults) *faultBox {
	b := &faultBox{}
	b.set(f)
	return b
}

func (b *faultBox) set(f Faults) {
	f = f.clone()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.f, b.attempts, b.pos = f, map[uint64]int64{}, map[string]int{}
}

// draw decides the fate of one request of key to path (the URL path after
// /api) with the raw query as sent:
//
//	n = the number of requests with this key, path and raw query drawn since
//	    New or SetFaults, this one included (1-based; counted only while
//	    ErrorRate, HangRate, TruncateRate or LatencyJitter is set)
//	u = (H("fault", seed, key, path, rawQuery, n) >> 11) / 2^53, in [0, 1)
//	u < E             -> 5xx: [500, 502, 503][H("fault.status", ...same) % 3]
//	u < E + Hg        -> hang
//	u < E + Hg + T    -> truncated 200
//	delay = Latency + H("fault.latency", ...same) % LatencyJitter (ns)
//
// with seed and n in decimal. A script entry for path replaces the u rule
// (not the delay).
func (b *faultBox) draw(key, path, rawQuery string) decision {
	b.mu.Lock()
	f := b.f
	entry := ScriptNormal
	if list, ok := f.Script[path]; ok {
		if i := b.pos[path]; i < len(list) {
			entry = list[i]
			b.pos[path] = i + 1
		}
	}
	var n int64
	if f.random() {
		h := world.Hash("attempt", key, path, rawQuery)
		b.attempts[h]++
		n = b.attempts[h]
	}
	b.mu.Unlock()

	d := decision{delay: f.Latency, hangMax: f.HangMax, billAbandoned: f.BillAbandoned}
	seed, ns := strconv.FormatInt(f.Seed, 10), strconv.FormatInt(n, 10)
	if f.LatencyJitter > 0 {
		d.delay += time.Duration(world.Hash("fault.latency", seed, key, path, rawQuery, ns) % uint64(f.LatencyJitter))
	}
	switch {
	case entry == ScriptTruncate:
		d.action, d.scripted = actTruncate, true
	case entry == ScriptHang:
		d.action, d.scripted = actHang, true
	case entry != ScriptNormal:
		d.action, d.status, d.scripted = actStatus, entry, true
	case f.ErrorRate+f.HangRate+f.TruncateRate > 0:
		u := unit(world.Hash("fault", seed, key, path, rawQuery, ns))
		switch {
		case u < f.ErrorRate:
			d.action = actStatus
			d.status = errorStatuses[world.Hash("fault.status", seed, key, path, rawQuery, ns)%uint64(len(errorStatuses))]
		case u < f.ErrorRate+f.HangRate:
			d.action = actHang
		case u < f.ErrorRate+f.HangRate+f.TruncateRate:
			d.action = actTruncate
		}
	}
	return d
}

// errorStatuses are the statuses of ErrorRate faults.
var errorStatuses = [...]int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}

// unit maps a hash to [0, 1) using its top 53 bits.
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }
