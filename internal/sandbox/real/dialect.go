package real

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// envelope is which of the real service's envelope fields an endpoint's 200
// bodies start with, as its sample response shows them.
type envelope uint8

const (
	envSuccess   envelope = 1 << iota // "success": true
	envRemaining                      // "credits_remaining": the key's balance, when credits are limited
	envCharged                        // "credits_charged": the credits this answer cost
)

// reply is a 200 answer of the real dialect.
type reply struct {
	body     any
	free     bool          // costs nothing whatever else is set (the private photo profile)
	charge   int64         // credits when billed; 0 is 1
	cacheKey string        // non-empty: the answer is cacheable under this key (see Cache)
	maxAge   time.Duration // the cache_max_age sent; 0 when absent
}

// handler answers one GET: a 200 reply, unless a read of its parameters
// (or the world) failed, the error p keeps. It asks the world only once
// its parameters are read: answering records the ids it shows.
type handler func(s *service, p *api.Params) reply

// endpoint is a registered route: its handler and envelope.
type endpoint struct {
	h   handler
	env envelope
}

// routes maps the real paths (the whole URL path) to their handlers.
var routes = map[string]endpoint{}

// route registers h as the handler of path; a path registered twice panics
// when the package loads.
func route(path string, env envelope, h handler) struct{} {
	if _, dup := routes[path]; dup {
		panic("sandbox: real route " + path + " registered twice")
	}
	routes[path] = endpoint{h: h, env: env}
	return struct{}{}
}

// list is the handler of a paged list: read reads the list's key and the
// offset its cursor stands for, checking the endpoint's other parameters
// on the way (in its order: the first error is the answer); page is the
// world's list from that offset and answer the page's body. A list
// endpoint is then one declaration: route(path, env, list(read, page,
// answer)).
func list[K, T any](read func(*service, *api.Params) (K, int64), page func(*world.World, K, int64) ([]T, world.Window),
	answer func(*service, K, []T, world.Window) any) handler {
	return func(s *service, p *api.Params) reply {
		k, off := read(s, p)
		if !p.OK() {
			return reply{}
		}
		items, win := page(s.World, k, off)
		return reply{body: answer(s, k, items, win)}
	}
}

// Has reports whether path is one of the real dialect's endpoints.
func Has(path string) bool {
	_, ok := routes[path]
	return ok
}

// service is the world plus the one thing the real dialect needs to
// remember: which numeric user ids it has shown (user_id parameters).
type service struct {
	*world.World
	ids *idBook
}

// Dialect serves the real dialect over a world.
type Dialect struct {
	s       *service
	cache   *Cache
	credits api.Credits
	now     func() time.Time
}

// New is the real dialect over w, taking extra credits from credits and
// keeping cached answers in cache (nil: a cache of its own), aged on now.
func New(w *world.World, credits api.Credits, cache *Cache, now func() time.Time) *Dialect {
	if cache == nil {
		cache = NewCache()
	}
	return &Dialect{s: &service{World: w, ids: &idBook{m: map[string]string{}}},
		cache: cache, credits: credits, now: now}
}

func (d *Dialect) Has(path string) bool { return Has(path) }

// Answer is the 200 body of the endpoint ex names in the real dialect,
// its credits, cache and envelope, or its error.
func (d *Dialect) Answer(ex *api.Exchange, p *api.Params) ([]byte, error) {
	ep := routes[ex.Endpoint]
	rep := ep.h(d.s, p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	body, err := api.EncodeJSON(rep.body)
	if err != nil {
		return nil, err
	}
	charge, cachedAt := d.charge(ex, rep)
	if charge > 1 {
		ok, left := d.credits.HoldMore(ex.Key, charge-1)
		if !ok {
			ex.Fault = "out_of_credits"
			return nil, api.Errorf(http.StatusPaymentRequired, "%s", api.OutOfCreditsMessage)
		}
		ex.CreditsLeft = left
	}
	ex.Free, ex.Charge = charge == 0, charge
	left := ex.CreditsLeft
	if ex.Free {
		left++ // the held credit goes back
	}
	return withEnvelope(body, ep.env, charge, ex.CreditsLimited, left, cachedAt), nil
}

// charge is what rep costs: 0 when free or served from the key's cache
// (cachedAt is then when it was cached), else its charge (comments with
// replies), else its endpoint's price (Exchange.Price), else 1. A fresh
// answer of a cacheable endpoint is cached.
func (d *Dialect) charge(ex *api.Exchange, rep reply) (charge int64, cachedAt time.Time) {
	if rep.free {
		return 0, time.Time{}
	}
	if rep.cacheKey != "" {
		key := ex.Endpoint + "\x00" + rep.cacheKey
		if at, hit := d.cache.lookup(ex.Key, key, d.now(), rep.maxAge); hit {
			return 0, at
		}
		d.cache.store(ex.Key, key, d.now())
	}
	return cmp.Or(rep.charge, ex.Price, 1), time.Time{}
}

// withEnvelope writes the envelope fields env names at the start of the JSON
// object body, and a cached answer's credits_charged (0), cached and
// cached_at at its end, where the real service puts them.
func withEnvelope(body []byte, env envelope, charge int64, limited bool, left int64, cachedAt time.Time) []byte {
	cached := !cachedAt.IsZero()
	var head []byte
	if env&envSuccess != 0 {
		head = append(head, `"success":true,`...)
	}
	if env&envRemaining != 0 && limited {
		head = strconv.AppendInt(append(head, `"credits_remaining":`...), left, 10)
		head = append(head, ',')
	}
	if env&envCharged != 0 && !cached {
		head = strconv.AppendInt(append(head, `"credits_charged":`...), charge, 10)
		head = append(head, ',')
	}
	var tail []byte
	if cached {
		tail = fmt.Appendf(nil, `,"credits_charged":0,"cached":true,"cached_at":%q`, isoTime(cachedAt.Unix()))
	}
	open, end := bytes.IndexByte(body, '{'), bytes.LastIndexByte(body, '}')
	if open < 0 || end < open || len(head)+len(tail) == 0 {
		return body
	}
	inner := bytes.TrimSpace(body[open+1 : end])
	if len(inner) == 0 { // {}: no comma between head and tail
		head = bytes.TrimSuffix(head, []byte(","))
		tail = bytes.TrimPrefix(tail, []byte(","))
		if len(head) > 0 && len(tail) > 0 {
			head = append(head, ',')
		}
	}
	out := make([]byte, 0, len(body)+len(head)+len(tail))
	out = append(out, body[:open+1]...)
	out = append(out, head...)
	out = append(out, inner...)
	out = append(out, tail...)
	return append(out, body[end:]...)
}

// isoTime is a Unix time as the real service writes dates:
// "2025-09-16T17:03:04.000Z".
func isoTime(unix int64) string {
	return time.Unix(unix, 0).UTC().Format("2006-01-02T15:04:05.000Z")
}

// errorBody is the real service's error: 400 and the rest carry success
// and message only; 403 and 404 add the credit fields, error and
// errorStatus.
type errorBody struct {
	Success          bool   `json:"success"`
	CreditsRemaining *int64 `json:"credits_remaining,omitempty"`
	CreditsCharged   *int64 `json:"credits_charged,omitempty"`
	Error            string `json:"error,omitempty"`
	ErrorStatus      int    `json:"errorStatus,omitempty"`
	Message          string `json:"message"`
}

// WriteError answers a handler's error in the real dialect.
func (d *Dialect) WriteError(rw http.ResponseWriter, ex *api.Exchange, err error) {
	ae := api.AsError(err)
	b := errorBody{Message: ae.Message}
	if ae.Status == http.StatusForbidden || ae.Status == http.StatusNotFound {
		var zero int64
		left := ex.CreditsLeft + 1 // the held credit goes back
		if ex.CreditsLimited {
			b.CreditsRemaining = &left
		}
		b.CreditsCharged, b.Error, b.ErrorStatus = &zero, ae.Code, ae.Status
	}
	api.WriteJSON(rw, ae.Status, b)
}

// Cache remembers, per API key, when each cacheable answer was last
// served fresh, so a request with cache_max_age gets it back free. The
// answers themselves are not stored: the world regenerates them. Safe for
// concurrent use; several dialects may share one.
type Cache struct {
	mu sync.Mutex
	m  map[string]time.Time // apiKey NUL endpoint NUL identity -> fresh at
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{m: map[string]time.Time{}} }

// Clone returns a copy that changes independently.
func (c *Cache) Clone() *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &Cache{m: maps.Clone(c.m)}
}

// lookup reports when key's answer was cached if that is at most age ago.
func (c *Cache) lookup(apiKey, key string, now time.Time, age time.Duration) (time.Time, bool) {
	if age <= 0 {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.m[apiKey+"\x00"+key]
	return at, ok && now.Sub(at) <= age
}

func (c *Cache) store(apiKey, key string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[apiKey+"\x00"+key] = now
}

// idBookMax bounds the ids an idBook remembers, so a long crawl cannot grow
// the sandbox without bound; later ids answer 404 when sent as user_id.
const idBookMax = 1 << 20

// idBook maps the numeric user ids the real dialect has shown (profiles,
// live, creators, video authors) back to handles. The world's ids are
// hashes of the handle, so a user_id parameter can only name an account
// whose id an answer has shown, as on the real service.
type idBook struct {
	mu sync.Mutex
	m  map[string]string
}

func (b *idBook) add(id, handle string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) < idBookMax {
		b.m[id] = handle
	}
}

func (b *idBook) handle(id string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.m[id]
	return h, ok
}
