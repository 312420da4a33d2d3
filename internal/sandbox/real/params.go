package real

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// The real platforms' web addresses: the media URLs the real service's
// answers carry, and the hosts whose URLs its url parameters take (a URL
// on another host is 400: the service cannot fetch it).
const (
	svSite = "https://www.tiktok.com"
	psSite = "https://www.instagram.com"
)

var (
	svHosts = []string{"www.tiktok.com", "tiktok.com", "m.tiktok.com"}
	psHosts = []string{"www.instagram.com", "instagram.com"}
)

// onHost refuses the URL parameter name unless its host is one of hosts;
// like is an example of a URL the parameter takes.
func onHost(p *api.Params, name string, hosts []string, like string) {
	if !p.OK() {
		return
	}
	u, err := url.Parse(p.Get(name))
	if err != nil || !slices.Contains(hosts, strings.ToLower(u.Hostname())) {
		p.Fail("parameter %q must be a URL on %s, like %s", name, hosts[0], like)
	}
}

// blockedPrefix starts the names of items the platform blocks: a handle,
// post code or song clipId starting with it answers 403 (highlight ids,
// being digits, use the prefix 403).
const blockedPrefix = "blocked"

// blocked refuses name, a kind of item, when the platform blocks it.
func blocked(p *api.Params, kind, name string) {
	if strings.HasPrefix(name, blockedPrefix) {
		p.Keep(api.Forbidden("This %s is not available: the platform blocked it", kind))
	}
}

// refuse answers 400 when the request carries a contract parameter the
// real endpoint does not take, naming the one it does, as the real service
// refuses a request it cannot serve.
func refuse(p *api.Params, contractName, realName string) {
	if p.Has(contractName) {
		p.Fail("%q is not a parameter of this endpoint; use %q", contractName, realName)
	}
}

// handle reads a handle parameter and refuses blocked accounts.
func handle(p *api.Params, name string) string {
	h := p.Handle(name)
	blocked(p, "account", h)
	return h
}

// userOf reads the account of an endpoint that takes handle or user_id.
func (s *service) userOf(p *api.Params) string {
	id := p.Get("user_id")
	switch {
	case id == "":
		return handle(p, "handle")
	case !p.OK():
		return ""
	case len(id) > 19 || strings.Trim(id, "0123456789") != "":
		p.Fail("parameter %q must be a numeric user id", "user_id")
		return ""
	}
	h, ok := s.ids.handle(id)
	if !ok {
		p.Keep(api.NotFound("no user with that user_id"))
	}
	blocked(p, "account", h)
	return h
}

// cacheAges are the values of cache_max_age.
var cacheAges = map[string]time.Duration{"1d": 24 * time.Hour, "3d": 72 * time.Hour,
	"7d": 168 * time.Hour, "14d": 336 * time.Hour, "30d": 720 * time.Hour}

// maxAge reads cache_max_age: 0 when absent.
func maxAge(p *api.Params) time.Duration {
	v := p.Get("cache_max_age")
	if v == "" {
		return 0
	}
	d, ok := cacheAges[v]
	if !ok {
		p.Fail("parameter %q must be one of 1d, 3d, 7d, 14d, 30d", "cache_max_age")
	}
	return d
}

// opaqueCursor is a string cursor: an offset, encoded so that a client
// cannot mistake it for a number.
func opaqueCursor(off int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("sbx:" + api.Itoa(off)))
}

// opaqueOffset reads a string cursor made by opaqueCursor from parameter
// name; absent is 0.
func opaqueOffset(p *api.Params, name string) int64 {
	c := p.Get(name)
	if c == "" {
		return 0
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	rest, ok := strings.CutPrefix(string(b), "sbx:")
	n, digits := api.ParseDigits(rest)
	if err != nil || !ok || !digits {
		p.Fail("parameter %q is not a cursor this endpoint returned", name)
	}
	return n
}

// minTime is the min_time standing for offset off of a follow list: the
// world's now minus off, so it decreases page after page like the real
// epoch-second cursor (and goes below 0 past 1.7e9 entries).
func (s *service) minTime(off int64) int64 { return s.Now() - off }

// minTimeOffset reads min_time (absent: the first page) as a list offset.
func (s *service) minTimeOffset(p *api.Params) int64 {
	v := p.Get("min_time")
	if v == "" {
		return 0
	}
	digits, neg := strings.CutPrefix(v, "-")
	n, ok := api.ParseDigits(digits)
	if neg {
		n = -n
	}
	off := s.Now() - n
	if !ok || off < 0 || off >= 1e18 {
		p.Fail("parameter %q must be a min_time this endpoint returned", "min_time")
	}
	return off
}

// msCursor is an offset of a list written as the real service's
// millisecond cursors are: the world's now less the offset, in ms,
// decreasing page after page; msOffset reads it back (absent: 0).
func (s *service) msCursor(off int64) int64 { return (s.Now() - off) * 1000 }

func (s *service) msOffset(p *api.Params, name string) int64 {
	v := p.Get(name)
	if v == "" {
		return 0
	}
	n, ok := api.ParseDigits(v)
	off := s.Now() - n/1000
	if !ok || n%1000 != 0 || off < 0 || off >= 1e18 {
		p.Fail("parameter %q must be a %s this endpoint returned", name, name)
	}
	return off
}

// downloadCredits is what download_media (post, video) and
// use_ai_as_fallback (video transcript) cost when asked for, as the
// vendor's catalogue says.
const downloadCredits = 10

// creditsFor is what an answer costs: downloadCredits when the paid
// option param is true, else 1 (0).
func creditsFor(p *api.Params, param string) int64 {
	if p.Bool(param) {
		return downloadCredits
	}
	return 0
}

// post reads the url parameter, a post or reel URL on the real
// platform's host, and refuses blocked posts.
func post(p *api.Params) string {
	code := world.PostCode(p)
	onHost(p, "url", psHosts, psSite+"/p/<code>/")
	blocked(p, "post", code)
	return code
}

// videoURL reads the url parameter of the short-video endpoints: a video
// on the real platform's host, .../@<handle>/video/<digits>. The author's
// handle follows the account grammar (missing: 404, blocked: 403).
func videoURL(p *api.Params) (id, author string) {
	raw := p.Required("url")
	onHost(p, "url", svHosts, svSite+"/@<handle>/video/<id>")
	if !p.OK() {
		return "", ""
	}
	u, _ := url.Parse(raw)
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) != 3 || !strings.HasPrefix(segs[0], "@") || segs[0] == "@" || segs[1] != "video" || !api.IsDigits(segs[2]) {
		p.Fail("parameter %q must be a video URL like %s/@<handle>/video/<id>", "url", svSite)
		return "", ""
	}
	id, author = segs[2], segs[0][1:]
	if strings.HasPrefix(author, "missing") {
		p.Keep(api.NotFound("video not found"))
	}
	blocked(p, "video", author)
	return id, author
}

// webURL is a video's web address on the real platform.
func webURL(handle, id string) string { return svSite + "/@" + handle + "/video/" + id }
