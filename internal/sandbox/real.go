package sandbox

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The real preset (Config.Preset = PresetScrapeCreators) serves the world of
// the contract in the real service's dialect: the routes of realRoutes at
// the root, snake_case shapes, min_time cursors, costs above one credit, a
// per-key answer cache and the real error bodies. Its handlers derive every
// entity from the contract's generators (often by calling the contract
// handler with translated parameters), so one job stores the same entities
// in both dialects.

// envelope is which of the real service's envelope fields an endpoint's 200
// bodies start with, as its sample response shows them.
type envelope uint8

const (
	envSuccess   envelope = 1 << iota // "success": true
	envRemaining                      // "credits_remaining": the key's balance, when credits are limited
	envCharged                        // "credits_charged": the credits this answer cost
)

// realReply is a 200 answer of the real preset.
type realReply struct {
	body     any
	free     bool          // costs nothing whatever else is set (the private photo profile)
	charge   int64         // credits when billed; 0 is 1
	cacheKey string        // non-empty: the answer is cacheable under this key (see answerCache)
	maxAge   time.Duration // the cache_max_age sent; 0 when absent
}

// realEndpoint is a registered real route: its handler and envelope.
type realEndpoint struct {
	h   func(*realWorld, query) (realReply, error)
	env envelope
}

// realRoutes maps the real paths (the whole URL path) to their handlers.
var realRoutes = map[string]realEndpoint{}

// realRoute registers h as the real preset's handler of path; a path
// registered twice panics when the package loads.
func realRoute(path string, env envelope, h func(*realWorld, query) (realReply, error)) struct{} {
	if _, dup := realRoutes[path]; dup {
		panic("sandbox: real route " + path + " registered twice")
	}
	realRoutes[path] = realEndpoint{h: h, env: env}
	return struct{}{}
}

// realWorld is the world plus the one thing the real dialect needs to
// remember: which numeric user ids it has shown (user_id parameters).
type realWorld struct {
	*world
	ids *idBook
}

// realState is the real preset's part of a Server.
type realState struct {
	w     *realWorld
	cache *answerCache
	now   func() time.Time // the cache's clock
}

func newRealState(w *world, cfg Config) *realState {
	cache, now := cacheOf(cfg, cfg.now)
	return &realState{w: &realWorld{world: w, ids: &idBook{m: map[string]string{}}}, cache: cache, now: now}
}

// realRoute is route for the real preset: unknown path 404, non-GET 405,
// then the handler's answer in the real dialect, its credits, cache and
// envelope.
func (s *Server) realRoute(rw http.ResponseWriter, r *http.Request) {
	ex := exchangeFrom(r.Context())
	ep, ok := realRoutes[ex.endpoint]
	if !ok {
		writeError(rw, &apiError{status: http.StatusNotFound, code: "not_found",
			message: fmt.Sprintf("no endpoint at %q", r.URL.Path)})
		return
	}
	if !onlyGET(rw, r) {
		return
	}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeRealError(rw, ex, badRequest("malformed query string"))
		return
	}
	rep, err := ep.h(s.real.w, query{vals})
	if err != nil {
		s.writeRealError(rw, ex, err)
		return
	}
	body, err := encodeJSON(rep.body)
	if err != nil {
		writeError(rw, err)
		return
	}
	charge, cachedAt := s.realCharge(ex, rep)
	if charge > 1 {
		ok, left := s.credits.holdMore(ex.key, charge-1)
		if !ok {
			ex.fault = "out_of_credits"
			writeOutOfCredits(rw)
			return
		}
		ex.creditsLeft = left
	}
	ex.free, ex.charge = charge == 0, charge
	left := ex.creditsLeft
	if ex.free {
		left++ // the held credit goes back
	}
	body = withEnvelope(body, ep.env, charge, ex.creditsLimited, left, cachedAt)
	if ex.truncate {
		ex.truncated = true
		writeCut(rw, body)
		return
	}
	writeBody(rw, http.StatusOK, body)
}

// realCharge is what rep costs: 0 when free or served from the key's cache
// (cachedAt is then when it was cached), else its charge (comments with
// replies), else its endpoint's price (Config.Prices), else 1. A fresh
// answer of a cacheable endpoint is cached.
func (s *Server) realCharge(ex *exchange, rep realReply) (charge int64, cachedAt time.Time) {
	if rep.free {
		return 0, time.Time{}
	}
	if rep.cacheKey != "" {
		key := ex.endpoint + "\x00" + rep.cacheKey
		if at, hit := s.real.cache.lookup(ex.key, key, s.real.now(), rep.maxAge); hit {
			return 0, at
		}
		s.real.cache.store(ex.key, key, s.real.now())
	}
	return cmp.Or(rep.charge, s.price(ex.endpoint), 1), time.Time{}
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

// realErrorBody is the real service's error: 400 and the rest carry success
// and message only; 403 and 404 add the credit fields, error and
// errorStatus.
type realErrorBody struct {
	Success          bool   `json:"success"`
	CreditsRemaining *int64 `json:"credits_remaining,omitempty"`
	CreditsCharged   *int64 `json:"credits_charged,omitempty"`
	Error            string `json:"error,omitempty"`
	ErrorStatus      int    `json:"errorStatus,omitempty"`
	Message          string `json:"message"`
}

// writeRealError answers a handler's error in the real dialect.
func (s *Server) writeRealError(rw http.ResponseWriter, ex *exchange, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{status: http.StatusInternalServerError, code: "internal", message: "internal error"}
	}
	b := realErrorBody{Message: ae.message}
	if ae.status == http.StatusForbidden || ae.status == http.StatusNotFound {
		var zero int64
		left := ex.creditsLeft + 1 // the held credit goes back
		if ex.creditsLimited {
			b.CreditsRemaining = &left
		}
		b.CreditsCharged, b.Error, b.ErrorStatus = &zero, ae.code, ae.status
	}
	writeJSON(rw, ae.status, b)
}

func forbidden(format string, args ...any) *apiError {
	return &apiError{status: http.StatusForbidden, code: "forbidden", message: fmt.Sprintf(format, args...)}
}

// blockedPrefix starts the names of items the platform blocks: a handle,
// post code or song clipId starting with it answers 403 in the real preset
// (highlight ids, being digits, use the prefix 403).
const blockedPrefix = "blocked"

func blocked(kind, name string) error {
	if strings.HasPrefix(name, blockedPrefix) {
		return forbidden("This %s is not available: the platform blocked it", kind)
	}
	return nil
}

// refuse answers 400 when q carries a contract parameter the real endpoint
// does not take, naming the one it does, as the real service refuses a
// request it cannot serve.
func refuse(q query, contractName, realName string) error {
	if q.v.Has(contractName) {
		return badRequest("%q is not a parameter of this endpoint; use %q", contractName, realName)
	}
	return nil
}

// translated is a query for a contract handler: pairs of name, value; empty
// values are left out.
func translated(pairs ...string) query {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	return query{v}
}

// realHandle reads a handle parameter and refuses blocked accounts.
func realHandle(q query, name string) (string, error) {
	h, err := q.handle(name)
	if err != nil {
		return "", err
	}
	return h, blocked("account", h)
}

// boolParam reads an optional true/false parameter.
func boolParam(q query, name string) (bool, error) {
	switch q.get(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, badRequest("parameter %q must be true or false", name)
}

// cacheAges are the values of cache_max_age.
var cacheAges = map[string]time.Duration{"1d": 24 * time.Hour, "3d": 72 * time.Hour,
	"7d": 168 * time.Hour, "14d": 336 * time.Hour, "30d": 720 * time.Hour}

// maxAge reads cache_max_age: 0 when absent.
func maxAge(q query) (time.Duration, error) {
	v := q.get("cache_max_age")
	if v == "" {
		return 0, nil
	}
	d, ok := cacheAges[v]
	if !ok {
		return 0, badRequest("parameter %q must be one of 1d, 3d, 7d, 14d, 30d", "cache_max_age")
	}
	return d, nil
}

// answerCache remembers, per API key, when each cacheable answer was last
// served fresh, so a request with cache_max_age gets it back free. The
// answers themselves are not stored: the world regenerates them.
type answerCache struct {
	mu sync.Mutex
	m  map[string]time.Time // apiKey NUL endpoint NUL identity -> fresh at
}

// lookup reports when key's answer was cached if that is at most age ago.
func (c *answerCache) lookup(apiKey, key string, now time.Time, age time.Duration) (time.Time, bool) {
	if age <= 0 {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.m[apiKey+"\x00"+key]
	return at, ok && now.Sub(at) <= age
}

func (c *answerCache) store(apiKey, key string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[apiKey+"\x00"+key] = now
}

// idBookMax bounds the ids an idBook remembers, so a long crawl cannot grow
// the sandbox without bound; later ids answer 404 when sent as user_id.
const idBookMax = 1 << 20

// idBook maps the numeric user ids the real preset has shown (profiles,
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

// userOf reads the account of an endpoint that takes handle or user_id.
func (w *realWorld) userOf(q query) (string, error) {
	id := q.get("user_id")
	if id == "" {
		return realHandle(q, "handle")
	}
	if len(id) > 19 || strings.Trim(id, "0123456789") != "" {
		return "", badRequest("parameter %q must be a numeric user id", "user_id")
	}
	h, ok := w.ids.handle(id)
	if !ok {
		return "", notFound("no user with that user_id")
	}
	return h, blocked("account", h)
}

// accountID is the numeric id of an account on the short-video platform,
// the profile's user.id.
func accountID(handle string) string { return digitsAt('6', hashOf("account", handle, "id"), 0) }

// psAccountID is the id of an account on the photo-sharing platform.
func psAccountID(handle string) string { return digitsAt('5', hashOf("account", handle, "psId"), 0) }

// opaqueCursor is the comments' string cursor: an offset, encoded so that
// a client cannot mistake it for a number.
func opaqueCursor(off int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("sbx:" + itoa(off)))
}

// cursorOffset reads a string cursor made by opaqueCursor; "" is 0.
func cursorOffset(q query) (int64, error) {
	c := q.get("cursor")
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	rest, ok := strings.CutPrefix(string(b), "sbx:")
	n, digits := parseDigits(rest)
	if err != nil || !ok || !digits {
		return 0, badRequest("parameter %q is not a cursor this endpoint returned", "cursor")
	}
	return n, nil
}
