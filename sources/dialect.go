package sources

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// A dialect is how one upstream spells the contract's 18 endpoints: each
// endpoint's path below the base URL, the names its parameters go out
// under, the parameters it always needs, and whether it still answers.
// The contract (what the sandbox serves by default) and the real service
// (ScrapeCreators) differ in all four; docs/upstream.md has the tables.
//
// The calls (SVProfileCall, ...) always speak the contract: the client
// translates each request through the dialect's Route just before sending
// it, so a kind's code and its errors are the same in every dialect.

// Presets of Options.Preset.
const (
	PresetContract       = "contract"
	PresetScrapeCreators = "scrapecreators"
	// ScrapeCreatorsBaseURL is the real service's address: no /api segment.
	ScrapeCreatorsBaseURL = "https://api.scrapecreators.com"
	// MaxRequestCredits caps what one request may be declared to cost.
	MaxRequestCredits = 1000
	// RepliesCredits is what the real service charges for a page of
	// comments with replies, whether or not it has any.
	RepliesCredits = 15
	// TrendingRegionDefault is the region the real service's trending feed
	// requires; override it with
	// api.endpoints.shortvideo.trending_feed.fixed.region.
	TrendingRegionDefault = "US"
)

// Endpoint is an endpoint of the upstream: Name is its task kind's
// ("shortvideo.followers"), Path its path in the contract's terms, Params
// every parameter a call may send. RealOnly marks an endpoint the contract
// does not have (the real service's content endpoints, issue 27): its Path
// is the crawler's own name for it, in the contract's style, and only the
// real service's dialect serves it.
type Endpoint struct {
	Name     string
	Platform Platform
	Path     string // below the platform's prefix, e.g. "/user/followers"
	Params   []string
	RealOnly bool
}

// Spec is the endpoint's path in the contract's terms ("/shortvideo/...").
func (e Endpoint) Spec() string { return specPrefix(e.Platform) + e.Path }

// Endpoints are the contract's endpoints, in its order, then the real
// service's beyond them.
var Endpoints = []Endpoint{
	{"shortvideo.keyword_search", ShortVideo, "/search/keyword", []string{"keyword", "query", "date_posted", "sort_by", "region", "trim", "cursor"}, false},
	{"shortvideo.hashtag_search", ShortVideo, "/search/hashtag", []string{"keyword", "cursor"}, false},
	{"shortvideo.top_search", ShortVideo, "/search/top", []string{"keyword", "cursor"}, false},
	{"shortvideo.followers", ShortVideo, "/user/followers", []string{"secUid", "cursor"}, false},
	{"shortvideo.following", ShortVideo, "/user/following", []string{"secUid", "cursor"}, false},
	{"shortvideo.song_videos", ShortVideo, "/song/videos", []string{"id", "cursor"}, false},
	{"shortvideo.song", ShortVideo, "/song", []string{"id"}, false},
	{"shortvideo.trending_feed", ShortVideo, "/get-trending-feed", nil, false},
	{"shortvideo.popular_videos", ShortVideo, "/videos/popular", nil, false},
	{"shortvideo.popular_creators", ShortVideo, "/creators/popular", nil, false},
	{"shortvideo.profile", ShortVideo, "/profile", []string{"handle", "user_id", "cache_max_age"}, false},
	{"shortvideo.live", ShortVideo, "/user/live", []string{"handle"}, false},
	{"photosocial.profile", PhotoSocial, "/profile", []string{"handle", "cache_max_age"}, false},
	{"photosocial.comments", PhotoSocial, "/post/comments", []string{"url", "cursor", "include_replies"}, false},
	{"photosocial.reels_search", PhotoSocial, "/reels/search", []string{"query", "page"}, false},
	{"photosocial.transcript", PhotoSocial, "/media/transcript", []string{"url", "cache_max_age"}, false},
	{"photosocial.embed", PhotoSocial, "/user/embed", []string{"handle"}, false},
	{"photosocial.highlight", PhotoSocial, "/user/highlight/detail", []string{"id"}, false},
	// The real service's endpoints beyond the contract's: a creator's
	// videos and posts, what is said under them, their highlights.
	{"shortvideo.profile_videos", ShortVideo, "/profile/videos", []string{"handle", "cursor"}, true},
	{"shortvideo.video", ShortVideo, "/video", []string{"url"}, true},
	{"shortvideo.video_comments", ShortVideo, "/video/comments", []string{"url", "cursor"}, true},
	{"shortvideo.comment_replies", ShortVideo, "/video/comment/replies", []string{"url", "comment_id", "cursor"}, true},
	{"shortvideo.transcript", ShortVideo, "/video/transcript", []string{"url"}, true},
	{"photosocial.user_posts", PhotoSocial, "/user/posts", []string{"handle", "cursor"}, true},
	{"photosocial.user_reels", PhotoSocial, "/user/reels", []string{"handle", "cursor"}, true},
	{"photosocial.post", PhotoSocial, "/post", []string{"url"}, true},
	{"photosocial.comment_replies", PhotoSocial, "/post/comment/replies", []string{"url", "comment_id", "cursor"}, true},
	{"photosocial.highlights", PhotoSocial, "/user/highlights", []string{"handle"}, true},
}

// endpointBySpec finds an endpoint by its contract path.
var endpointBySpec = func() map[string]*Endpoint {
	m := make(map[string]*Endpoint, len(Endpoints))
	for i := range Endpoints {
		m[Endpoints[i].Spec()] = &Endpoints[i]
	}
	return m
}()

// EndpointNamed is the endpoint whose Name is name, or nil.
func EndpointNamed(name string) *Endpoint {
	for i := range Endpoints {
		if Endpoints[i].Name == name {
			return &Endpoints[i]
		}
	}
	return nil
}

// Override changes how a dialect reaches one endpoint: the job file's
// api.endpoints.<platform>.<endpoint>. Empty fields keep the preset's.
type Override struct {
	// Path is the endpoint's whole path below base_url, e.g.
	// "/v2/instagram/post/comments".
	Path string `yaml:"path" json:"path,omitempty"`
	// Params renames the contract's parameters: contract name -> name sent.
	Params map[string]string `yaml:"params" json:"params,omitempty"`
	// Fixed are parameters sent on every request as they are (the trending
	// feed's region); an empty value stops the preset's from being sent.
	Fixed map[string]string `yaml:"fixed" json:"fixed,omitempty"`
	// Credits is what one request costs when the upstream charges more
	// than 1 (comments with replies: 15): reserved before it is sent, so a
	// budget holds. Zero: the preset's (1). What an answer says it charged
	// (credits_charged) is what is billed.
	Credits int `yaml:"credits" json:"credits,omitempty"`
}

// Route is how requests of one endpoint go out in the chosen dialect.
type Route struct {
	Path   string
	Params map[string]string // contract name -> name sent (absent: same)
	Fixed  map[string]string
	// Retired, when set, is why the upstream no longer serves the endpoint:
	// its calls are not sent, they fail with ClassRetired.
	Retired string
	// Absent, when set, is why the dialect has no such endpoint at all (a
	// real-only endpoint under the contract): a job that would call it is
	// refused, and a call is not sent (Retired says the same).
	Absent string
	// Credits is what one request is expected to cost (0: 1).
	Credits int
	// Cached marks an endpoint whose answers the upstream may serve from
	// its cache when asked to (cache_max_age, reuse.upstream_cache).
	Cached bool
	// WebBase is the platform's web address in the dialect: the post,
	// reel and video URLs its endpoints take are on it. The crawler uses
	// the URL an answer carries; it builds one on WebBase only for an
	// answer that carries none (the contract's reels have only a code).
	WebBase string
	// Accepts are the parameters the dialect's endpoint takes beyond the
	// contract's (the real profile's user_id): a kind sends one only when
	// its route accepts it.
	Accepts []string
}

// The platforms' web addresses, per dialect: the contract's (what the
// sandbox accepts) and the real service's (the only hosts it answers for).
var webBases = map[string][2]string{
	PresetContract:       {"https://www.shortvideo.example", "https://www.photosocial.example"},
	PresetScrapeCreators: {"https://www.tiktok.com", "https://www.instagram.com"},
}

// ReelURL is the web URL of the reel whose shortcode is code.
func (r Route) ReelURL(code string) string {
	return r.WebBase + "/reel/" + url.PathEscape(code) + "/"
}

// PostURL is the web URL of the post whose shortcode is code.
func (r Route) PostURL(code string) string {
	return r.WebBase + "/p/" + url.PathEscape(code) + "/"
}

// VideoURL is the web URL of the short video id by the account handle.
func (r Route) VideoURL(handle, id string) string {
	return r.WebBase + "/@" + url.PathEscape(handle) + "/video/" + url.PathEscape(id)
}

// SentAs is the name the route sends the contract's parameter param under.
func (r Route) SentAs(param string) string {
	if n, ok := r.Params[param]; ok {
		return n
	}
	return param
}

// translate is q, in contract names, as the route sends it.
func (r Route) translate(q url.Values) url.Values {
	out := make(url.Values, len(q)+len(r.Fixed))
	for name, v := range q {
		out[r.SentAs(name)] = v
	}
	for name, v := range r.Fixed {
		if v != "" {
			out.Set(name, v)
		}
	}
	return out
}

// scrapeCreatorsRoutes is the real service's dialect (docs/upstream.md),
// built once and only read: a Route changed by an override gets maps of
// its own (merged).
var scrapeCreatorsRoutes = scrapeCreators()

func scrapeCreators() map[string]Route {
	tt := func(path string, params ...string) Route { return route("/v1/tiktok"+path, params...) }
	return map[string]Route{
		"shortvideo.keyword_search":   tt("/search/keyword", "keyword", "query"),
		"shortvideo.hashtag_search":   tt("/search/hashtag", "keyword", "hashtag"),
		"shortvideo.top_search":       tt("/search/top", "keyword", "query"),
		"shortvideo.followers":        tt("/user/followers", "secUid", "handle", "cursor", "min_time"),
		"shortvideo.following":        tt("/user/following", "secUid", "handle", "cursor", "min_time"),
		"shortvideo.song_videos":      tt("/song/videos", "id", "clipId"),
		"shortvideo.song":             tt("/song", "id", "clipId"),
		"shortvideo.trending_feed":    {Path: "/v1/tiktok/get-trending-feed", Fixed: map[string]string{"region": TrendingRegionDefault}},
		"shortvideo.popular_videos":   {Path: "/v1/tiktok/videos/popular", Retired: "the real service retired its popular-videos feed (2026-04-24)"},
		"shortvideo.popular_creators": tt("/creators/popular"),
		"shortvideo.profile":          {Path: "/v1/tiktok/profile", Cached: true, Accepts: []string{"user_id"}},
		"shortvideo.live":             tt("/user/live"),
		"photosocial.profile":         {Path: "/v1/instagram/profile", Cached: true},
		"photosocial.comments":        route("/v2/instagram/post/comments"),
		"photosocial.reels_search":    route("/v2/instagram/reels/search"),
		"photosocial.transcript":      {Path: "/v2/instagram/media/transcript", Cached: true},
		"photosocial.embed":           route("/v1/instagram/user/embed"),
		"photosocial.highlight":       route("/v1/instagram/user/highlight/detail"),
		// Beyond the contract (docs/upstream.md, "The real service's own
		// endpoints"). The profile's videos are asked newest first, whatever
		// the service's default order.
		"shortvideo.profile_videos":   {Path: "/v3/tiktok/profile/videos", Params: map[string]string{"cursor": "max_cursor"}, Fixed: map[string]string{"sort_by": "latest"}},
		"shortvideo.video":            route("/v2/tiktok/video"),
		"shortvideo.video_comments":   route("/v1/tiktok/video/comments"),
		"shortvideo.comment_replies":  route("/v1/tiktok/video/comment/replies"),
		"shortvideo.transcript":       route("/v1/tiktok/video/transcript"),
		"photosocial.user_posts":      route("/v2/instagram/user/posts", "cursor", "next_max_id"),
		"photosocial.user_reels":      route("/v1/instagram/user/reels", "cursor", "max_id"),
		"photosocial.post":            route("/v1/instagram/post"),
		"photosocial.comment_replies": route("/v1/instagram/post/comment/replies"),
		"photosocial.highlights":      route("/v1/instagram/user/highlights"),
	}
}

// route is a Route with renames given as pairs: contract name, name sent.
func route(path string, renames ...string) Route {
	r := Route{Path: path}
	for i := 0; i+1 < len(renames); i += 2 {
		if r.Params == nil {
			r.Params = map[string]string{}
		}
		r.Params[renames[i]] = renames[i+1]
	}
	return r
}

// routes resolves every endpoint's Route from the preset, the contract's
// prefixes and the overrides. It assumes o passed check.
func (o Options) routes() map[string]Route {
	out := make(map[string]Route, len(Endpoints))
	for i := range Endpoints {
		out[Endpoints[i].Name] = o.route(&Endpoints[i])
	}
	return out
}

// route resolves e's Route: the preset's, else the contract's path under
// its platform's prefix, then e's override and the answer cache's age.
func (o Options) route(e *Endpoint) Route {
	r, ok := Route{}, false
	if o.Preset == PresetScrapeCreators {
		r, ok = scrapeCreatorsRoutes[e.Name]
	}
	if !ok {
		prefix := o.Prefixes.ShortVideo
		if e.Platform == PhotoSocial {
			prefix = o.Prefixes.PhotoSocial
		}
		r = Route{Path: prefix + e.Path}
		if e.RealOnly {
			r.Absent = fmt.Sprintf("the %s preset has no %s endpoint (%s): only the %s preset, the real service, serves it",
				cmp.Or(o.Preset, PresetContract), e.Name, e.Spec(), PresetScrapeCreators)
			r.Retired = r.Absent
		}
	}
	platform, name, _ := strings.Cut(e.Name, ".")
	if ov, ok := o.Endpoints[platform][name]; ok {
		r = r.with(ov)
	}
	if r.Cached && o.CacheMaxAge != "" {
		r.Fixed = merged(r.Fixed, map[string]string{"cache_max_age": o.CacheMaxAge})
	}
	preset := o.Preset
	if preset == "" {
		preset = PresetContract
	}
	r.WebBase = webBases[preset][e.Platform]
	return r
}

// with is r changed by ov: a path set by hand means the endpoint answers
// again, whatever the preset said.
func (r Route) with(ov Override) Route {
	if ov.Path != "" {
		r.Path = ov.Path
		if r.Absent == "" {
			r.Retired = ""
		}
	}
	if ov.Credits > 0 {
		r.Credits = ov.Credits
	}
	r.Params = merged(r.Params, ov.Params)
	r.Fixed = merged(r.Fixed, ov.Fixed)
	return r
}

func merged(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// HasCache reports whether any endpoint of o's dialect has an answer cache.
func (o Options) HasCache() bool {
	for i := range Endpoints {
		if o.route(&Endpoints[i]).Cached {
			return true
		}
	}
	return false
}

// Route is how requests of the endpoint named name go out under o, and
// false for an unknown name.
func (o Options) Route(name string) (Route, bool) {
	e := EndpointNamed(name)
	if e == nil {
		return Route{}, false
	}
	return o.route(e), true
}

// checkDialect adds the problems of the preset and the overrides.
func (o Options) checkDialect(add func(key, format string, args ...any)) {
	switch o.Preset {
	case "", PresetContract, PresetScrapeCreators:
	default:
		add("preset", "%s is not a preset: %s (what the sandbox serves) or %s (the real service)", quoteCut(o.Preset), PresetContract, PresetScrapeCreators)
	}
	for _, platform := range slices.Sorted(maps.Keys(o.Endpoints)) {
		for _, name := range slices.Sorted(maps.Keys(o.Endpoints[platform])) {
			key := "endpoints." + platform + "." + name
			e := EndpointNamed(platform + "." + name)
			if e == nil {
				add(key, "is not an endpoint; the endpoints are %s", endpointNames())
				continue
			}
			if r := o.route(e); r.Absent != "" {
				add(key, "%s", r.Absent)
				continue
			}
			o.Endpoints[platform][name].check(key, e, add)
		}
	}
}

func (ov Override) check(key string, e *Endpoint, add func(key, format string, args ...any)) {
	if ov.Path != "" && (!strings.HasPrefix(ov.Path, "/") || len(ov.Path) > MaxPrefixBytes || strings.ContainsAny(ov.Path, "?#")) {
		add(key+".path", "%s must start with / and hold a path only (at most %d bytes, no ? or #)", quoteCut(ov.Path), MaxPrefixBytes)
	}
	for _, p := range slices.Sorted(maps.Keys(ov.Params)) {
		if !slices.Contains(e.Params, p) {
			add(key+".params."+p, "is not a parameter of %s; it takes %s", e.Spec(), paramList(e.Params))
		} else if !paramNameOK(ov.Params[p]) {
			add(key+".params."+p, "%s is not a parameter name (1 to 100 letters, digits, _ - .)", quoteCut(ov.Params[p]))
		}
	}
	if ov.Credits < 0 || ov.Credits > MaxRequestCredits {
		add(key+".credits", "must be between 1 and %d, got %d (omit it for 1)", MaxRequestCredits, ov.Credits)
	}
	for _, p := range slices.Sorted(maps.Keys(ov.Fixed)) {
		if !paramNameOK(p) {
			add(key+".fixed", "%s is not a parameter name (1 to 100 letters, digits, _ - .)", quoteCut(p))
		} else if len(ov.Fixed[p]) > MaxPrefixBytes {
			add(key+".fixed."+p, "is %d bytes long; at most %d", len(ov.Fixed[p]), MaxPrefixBytes)
		}
	}
}

func paramNameOK(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func paramList(ps []string) string {
	if len(ps) == 0 {
		return "no parameters"
	}
	return strings.Join(ps, ", ")
}

func endpointNames() string {
	names := make([]string, len(Endpoints))
	for i, e := range Endpoints {
		names[i] = e.Name
	}
	return strings.Join(names, ", ")
}

// routeOf is the route of the endpoint at the contract path spec.
func (c *Client) routeOf(spec string) (Route, error) {
	e, ok := endpointBySpec[spec]
	if !ok {
		return Route{}, fmt.Errorf("sources: no endpoint %s", spec) // a call built wrong: a bug
	}
	return c.routes[e.Name], nil
}
