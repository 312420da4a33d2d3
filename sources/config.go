package sources

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
	"github.com/socialcrawl/crawler/sources/concurrency"
)

// Defaults of Options (DefaultOptions) and Config.
const (
	ShortVideoPrefixDefault  = "/shortvideo"
	PhotoSocialPrefixDefault = "/photosocial"
	// TimeoutDefault matches the public client of the real service, whose
	// slowest endpoints answer in up to ~30 s.
	TimeoutDefault       = 60 * time.Second
	MaxRetriesDefault    = 5
	RetryInitialDefault  = 500 * time.Millisecond
	RetryMaxDefault      = 30 * time.Second
	RetryAfterCapDefault = 5 * time.Minute
	// MaxBodyBytesDefault bounds one response body (after decompression).
	// Real pages are tens to hundreds of KB.
	MaxBodyBytesDefault = 8 << 20
	// MaxInflightBytesDefault bounds the body bytes the process holds at
	// once, from reading to commit: one body at the cap, or many small.
	// Each byte costs up to ~9 in memory until its commit
	// (docs/how-a-run-works.md#memory).
	MaxInflightBytesDefault = 8 << 20
	// MaxRateLimitWaitsDefault: with pauses capped at RetryAfterCap, a call
	// waits out up to about an hour of throttling.
	MaxRateLimitWaitsDefault = 30
	// OutageWindowDefault matches the patience with an unreachable
	// database (pipeline.OutageTimeoutDefault).
	OutageWindowDefault = 10 * time.Minute
)

// Options are the client's settings a user writes: a job file's `api:`
// section decodes into them by their yaml tags (jobfile.API embeds them),
// and the run's spec stores them as JSON. Start from DefaultOptions: a zero
// value means what it says (MaxRetries 0: no retries) or is refused by
// Validate (a zero Timeout).
type Options struct {
	// Preset is the upstream's dialect (dialect.go): PresetContract (or
	// empty), what the sandbox serves, or PresetScrapeCreators, the real
	// service.
	Preset string `yaml:"preset" json:"preset,omitempty"`
	// BaseURL is the service address, e.g. "https://api.example.com/api"
	// for the contract. Required, but for the real service's preset, whose
	// address is its default.
	BaseURL string `yaml:"base_url" json:"base_url"`
	// Prefixes are the platforms' path prefixes under BaseURL in the
	// contract's dialect; a preset's paths are whole.
	Prefixes Prefixes `yaml:"prefixes" json:"prefixes"`
	// Endpoints override the preset per endpoint, by platform then
	// endpoint ("shortvideo" -> "followers"): its path, its parameters'
	// names, parameters always sent.
	Endpoints map[string]map[string]Override `yaml:"endpoints" json:"endpoints,omitempty"`
	// Timeout bounds one attempt.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// MaxRetries bounds the retries of a retryable failure (5xx, network,
	// truncated body); 0: none. 429 pauses are bounded by
	// Config.MaxRateLimitWaits instead.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// RetryInitial and RetryMax shape the exponential back-off (with
	// jitter); RetryAfterCap caps the pause a 429's Retry-After may impose.
	RetryInitial  Duration `yaml:"retry_initial" json:"retry_initial"`
	RetryMax      Duration `yaml:"retry_max" json:"retry_max"`
	RetryAfterCap Duration `yaml:"retry_after_cap" json:"retry_after_cap"`
	// OutageWindow is how long the Client waits out an upstream that gives
	// no HTTP answer at all (every worker paused, one probe on back-off)
	// before calls fail with ClassUnreachable, which stops a run resumable.
	OutageWindow Duration `yaml:"outage_window" json:"outage_window"`
	// Rate is the ceiling in requests per second for this key, shared by
	// all workers; 0 means no ceiling. Burst is the bucket's size.
	Rate  float64 `yaml:"rate" json:"rate"`
	Burst int     `yaml:"burst" json:"burst"`
	// CacheMaxAge, when set, is sent as cache_max_age on the endpoints
	// whose answers the upstream may serve from its cache (Route.Cached):
	// the job's reuse.upstream_cache, not an api key.
	CacheMaxAge string `yaml:"-" json:"cache_max_age,omitempty"`
	// AllowInsecureHTTP lets the key go over plain http to a host that is
	// not loopback (127.0.0.0/8, ::1, localhost). Only the operator sets it
	// (crawler run --allow-insecure-http); a job file cannot.
	AllowInsecureHTTP bool `yaml:"-" json:"-"`
}

// Prefixes are the platforms' path prefixes under the base URL.
type Prefixes struct {
	ShortVideo  string `yaml:"shortvideo" json:"shortvideo"`
	PhotoSocial string `yaml:"photosocial" json:"photosocial"`
}

// DefaultOptions are the defaults of Options (the documented defaults of
// the job file's `api:` keys).
func DefaultOptions() Options {
	return Options{
		Prefixes:      Prefixes{ShortVideo: ShortVideoPrefixDefault, PhotoSocial: PhotoSocialPrefixDefault},
		Timeout:       Duration(TimeoutDefault),
		MaxRetries:    MaxRetriesDefault,
		RetryInitial:  Duration(RetryInitialDefault),
		RetryMax:      Duration(RetryMaxDefault),
		RetryAfterCap: Duration(RetryAfterCapDefault),
		OutageWindow:  Duration(OutageWindowDefault),
		Burst:         1,
	}
}

// Caps and minimums of Options (docs/jobfile.md).
const (
	MaxPrefixBytes = 1000
	MaxRetriesCap  = 1000
	MaxRate        = 1e6
	MaxBurst       = 1_000_000
	// MinTimeout bounds timeout, retry_after_cap and outage_window from
	// below, MinRetryBackoff retry_initial and retry_max, when a user sets
	// them (Validate): a typo like `timeout: 1ms` would fail every request,
	// `retry_initial: 1ns` would hammer the upstream. A program calling New
	// may go lower (tests wait out windows of milliseconds), never to 0.
	MinTimeout      = time.Second
	MinRetryBackoff = time.Millisecond
)

// FieldError is a problem of one value of Options, keyed by its yaml path
// (e.g. "prefixes.shortvideo"), so a job file's error can name its key and
// line.
type FieldError struct {
	Key string
	Msg string
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Msg }

// FieldErrors are the problems of Options, in the order of their fields.
type FieldErrors []*FieldError

func (es FieldErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Validate reports every problem of o as a user wrote it (with the
// minimums MinTimeout and MinRetryBackoff), or nil.
func (o Options) Validate() FieldErrors { return o.check(MinTimeout, MinRetryBackoff) }

// check is the one list of rules of Options: Validate applies it with the
// user's minimums, New with any positive duration.
func (o Options) check(minTimeout, minBackoff time.Duration) FieldErrors {
	var errs FieldErrors
	add := func(key, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if err := CheckBaseURL(o.baseURL(), o.AllowInsecureHTTP); err != nil {
		add("base_url", "%v", err)
	}
	o.checkDialect(add)
	for _, p := range []struct{ key, v string }{{"prefixes.shortvideo", o.Prefixes.ShortVideo}, {"prefixes.photosocial", o.Prefixes.PhotoSocial}} {
		if !strings.HasPrefix(p.v, "/") {
			add(p.key, "%s must start with /", quoteCut(p.v))
		} else if len(p.v) > MaxPrefixBytes {
			add(p.key, "is %d bytes long; at most %d", len(p.v), MaxPrefixBytes)
		}
	}
	minDur := func(key string, d Duration, lo time.Duration) {
		if time.Duration(d) < lo {
			add(key, "%s is shorter than the minimum %s", time.Duration(d), lo)
		}
	}
	minDur("timeout", o.Timeout, minTimeout)
	if o.MaxRetries < 0 || o.MaxRetries > MaxRetriesCap {
		add("max_retries", "must be between 0 and %d, got %d (0: no retries)", MaxRetriesCap, o.MaxRetries)
	}
	minDur("retry_initial", o.RetryInitial, minBackoff)
	minDur("retry_max", o.RetryMax, minBackoff)
	if o.RetryMax < o.RetryInitial && time.Duration(o.RetryInitial) >= minBackoff {
		add("retry_max", "%s is shorter than retry_initial (%s)", time.Duration(o.RetryMax), time.Duration(o.RetryInitial))
	}
	minDur("retry_after_cap", o.RetryAfterCap, minTimeout)
	minDur("outage_window", o.OutageWindow, minTimeout)
	if !(o.Rate >= 0 && o.Rate <= MaxRate) { // NaN too
		add("rate", "must be between 0 and %g requests per second, got %g (0: no ceiling)", float64(MaxRate), o.Rate)
	}
	if o.Burst < 1 || o.Burst > MaxBurst {
		add("burst", "must be between 1 and %d, got %d", MaxBurst, o.Burst)
	}
	return errs
}

// baseURL is BaseURL, or the preset's address when it has one.
func (o Options) baseURL() string {
	if o.BaseURL == "" && o.Preset == PresetScrapeCreators {
		return ScrapeCreatorsBaseURL
	}
	return o.BaseURL
}

// quoteCut is s quoted, cut to 60 bytes at a rune boundary, for messages.
func quoteCut(s string) string {
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// Duration is a time.Duration written as "90s" or "2m" in a job file and
// in JSON (the run's stored spec).
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a Go duration (90s, 20h) or a number of days (30d).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := yamlstrict.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Config configures a Client: the user's Options and what only a program
// sets. Zero values of the fields outside Options take the documented
// defaults.
type Config struct {
	Options
	// APIKey is sent in the x-api-key header and nowhere else. Required.
	APIKey Secret
	// MaxRateLimitWaits bounds the 429 pauses one call sits through before
	// it gives up with ClassRateLimited (which stops the run, resumable:
	// throttling is never a reason to drop a task). Default
	// MaxRateLimitWaitsDefault.
	MaxRateLimitWaits int
	// MaxBodyBytes bounds a response body: a larger one fails its task.
	// Default MaxBodyBytesDefault.
	MaxBodyBytes int64
	// MaxInflightBytes bounds the response-body bytes held at once by all
	// workers sharing this Client (a reader waits for room before reading;
	// a body stays counted until its lease lets it go, see Lease.Hold).
	// Default MaxInflightBytesDefault; never less than MaxBodyBytes.
	MaxInflightBytes int64
	// MaxInFlight caps the requests in flight (limits.workers when the job
	// file sets it): the adaptive limit (package concurrency) never goes
	// above it. 0: concurrency.HardCeiling, the most a client ever has in
	// flight.
	MaxInFlight int
	// InitialInFlight is the limit the first round runs at (0:
	// concurrency.InitialDefault; never above MaxInFlight). The job file
	// has no key for it: tests that need many requests in flight at once
	// start there rather than wait for the doubling.
	InitialInFlight int
	// AfterResponse, when set, is told the outcome of every attempt of every
	// call, after the call's Lease (metrics). Credits are the lease's.
	AfterResponse func(ctx context.Context, r Outcome)
	HTTPClient    *http.Client
	Logger        *slog.Logger
}

// BodyBudget is the in-flight body budget a client of c keeps to:
// MaxInflightBytes after its defaults, never below MaxBodyBytes. The
// crawler sizes its soft memory limit by it.
func (c Config) BodyBudget() int64 {
	return max(cmp.Or(c.MaxInflightBytes, MaxInflightBytesDefault), cmp.Or(c.MaxBodyBytes, MaxBodyBytesDefault))
}

// connBufferSize is the size of each of an HTTP/1.1 connection's read and
// write buffers in the default client.
const connBufferSize = 1 << 10

func (c Config) withDefaults() Config {
	c.MaxRateLimitWaits = cmp.Or(c.MaxRateLimitWaits, MaxRateLimitWaitsDefault)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, MaxBodyBytesDefault)
	c.MaxInflightBytes = c.BodyBudget()
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{
			Transport: &http.Transport{
				Proxy: http.ProxyFromEnvironment,
				// As many as requests may be in flight: fewer would close
				// connections after each answer and open new ones (a TLS
				// handshake each) while the limit is high.
				MaxIdleConnsPerHost: concurrency.HardCeiling,
				IdleConnTimeout:     90 * time.Second,
				// A connection keeps its buffers while it lives, one per
				// request in flight over HTTP/1.1: 4 KiB each by default,
				// 16 MB at 2,000 in flight. A request's line and headers
				// fit in 1 KiB, and a body is read past the buffer into its
				// own (readExact).
				ReadBufferSize:  connBufferSize,
				WriteBufferSize: connBufferSize,
			},
			CheckRedirect: keepKeyOnHost,
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports what New would refuse in cfg, without building a
// client.
func (c Config) Validate() error { return c.withDefaults().validate() }

func (c Config) validate() error {
	if errs := c.Options.check(1, 1); len(errs) > 0 {
		return fmt.Errorf("sources: %w", errs)
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > concurrency.HardCeiling {
		return fmt.Errorf("sources: MaxInFlight must be between 0 and %d, got %d", concurrency.HardCeiling, c.MaxInFlight)
	}
	if c.InitialInFlight < 0 || c.InitialInFlight > concurrency.HardCeiling {
		return fmt.Errorf("sources: InitialInFlight must be between 0 and %d, got %d", concurrency.HardCeiling, c.InitialInFlight)
	}
	if c.APIKey == "" {
		return errors.New("sources: api key is empty")
	}
	return nil
}

// MaxURLBytes caps base_url and URL seeds.
const MaxURLBytes = 2048

// CheckBaseURL reports whether raw can be the service address: an absolute
// http(s) URL with a host and without credentials, at most MaxURLBytes, and
// plain http only to a loopback host unless allowInsecureHTTP. The key goes
// to this host, so its error never quotes raw (which may carry a password,
// whatever its shape): at most RedactURL(raw).
func CheckBaseURL(raw string, allowInsecureHTTP bool) error {
	if raw == "" {
		return errors.New("is required: the service address including /api")
	}
	if len(raw) > MaxURLBytes {
		return fmt.Errorf("is %d bytes long; at most %d", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err == nil && u.User != nil || strings.Contains(raw, "@") && (err != nil || u.Opaque != "" || u.Host == "") {
		return errors.New("must not carry credentials (user:password@): the key is read from api.key_env and sent in x-api-key")
	}
	if err != nil || u.Opaque != "" || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s must be an absolute http(s) URL with a host, e.g. https://api.example.com/api", RedactURL(raw))
	}
	if u.Scheme == "http" && !allowInsecureHTTP && !IsLoopbackHost(u.Hostname()) {
		return fmt.Errorf("%s would send the API key over plain http to a host that is not loopback: use https "+
			"(plain http goes only to 127.0.0.0/8, ::1 and localhost, unless the operator passes crawler run --allow-insecure-http)", RedactURL(raw))
	}
	return nil
}

// IsLoopbackHost reports whether host (without port) is localhost or a
// loopback address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RedactURL is raw as messages may show it: scheme://host/path, without user
// info, query or fragment (any may hold a secret); a fixed description when
// raw is not an absolute URL with a host, since then it cannot be told
// which part is a password.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Scheme == "" || u.Host == "" {
		return "(a value that is not an absolute URL, not shown)"
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.User != nil {
		r.User = url.User("redacted")
	}
	return fmt.Sprintf("%q", r.String())
}

// keepKeyOnHost follows redirects but drops the API key when one leaves the
// original host or downgrades to http: Go strips Authorization on such
// redirects, not a custom header like x-api-key.
func keepKeyOnHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https") {
		req.Header.Del("x-api-key")
	}
	return nil
}
