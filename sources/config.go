package sources

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of Config.
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
	// Each byte costs up to ~9 in memory until its commit (see README).
	MaxInflightBytesDefault = 8 << 20
	// MaxRateLimitWaitsDefault: with pauses capped at RetryAfterCap, a call
	// waits out up to about an hour of throttling.
	MaxRateLimitWaitsDefault = 30
	// OutageWindowDefault matches the patience with an unreachable
	// database (pipeline.OutageTimeoutDefault).
	OutageWindowDefault = 10 * time.Minute
)

// Config configures a Client. Zero values take the documented defaults.
type Config struct {
	// BaseURL is the service address including its /api segment, e.g.
	// "https://api.example.com/api". Required.
	BaseURL string
	// ShortVideoPrefix and PhotoSocialPrefix are the path prefixes of the two
	// platforms; the real service uses others (e.g. "/v1/<platform>").
	// Defaults: ShortVideoPrefixDefault, PhotoSocialPrefixDefault.
	ShortVideoPrefix  string
	PhotoSocialPrefix string
	// APIKey is sent in the x-api-key header and nowhere else. Required.
	APIKey Secret
	// Timeout bounds one attempt. Default TimeoutDefault.
	Timeout time.Duration
	// MaxRetries bounds the retries of a retryable failure (5xx, network,
	// truncated body, 429). Default MaxRetriesDefault; negative means none
	// (so a job's explicit `max_retries: 0` arrives here as -1).
	MaxRetries int
	// MaxRateLimitWaits bounds the 429 pauses one call sits through before
	// it gives up with ClassRateLimited (which stops the run, resumable:
	// throttling is never a reason to drop a task). Default
	// MaxRateLimitWaitsDefault.
	MaxRateLimitWaits int
	// RetryInitial and RetryMax shape the exponential back-off (with jitter).
	RetryInitial time.Duration
	RetryMax     time.Duration
	// RetryAfterCap caps the pause a Retry-After header can impose.
	RetryAfterCap time.Duration
	// OutageWindow is how long the Client waits out an upstream that gives
	// no HTTP answer at all (every worker paused, one probe on back-off)
	// before calls fail with ClassUnreachable. Default OutageWindowDefault.
	OutageWindow time.Duration
	// Rate is the ceiling in requests per second for this key, shared by all
	// workers; 0 means no ceiling. Burst defaults to 1 when Rate is set.
	Rate  float64
	Burst int
	// MaxBodyBytes bounds a response body: a larger one fails its task.
	// Default MaxBodyBytesDefault.
	MaxBodyBytes int64
	// MaxInflightBytes bounds the response-body bytes held at once by all
	// workers sharing this Client (a reader waits for room before reading;
	// a body stays counted until its page is committed, see HoldBodies).
	// Default MaxInflightBytesDefault; never less than MaxBodyBytes.
	MaxInflightBytes int64
	// AllowInsecureHTTP lets the key go over plain http to a host that is not
	// loopback (127.0.0.0/8, ::1, localhost). Only the operator sets it
	// (crawler run --allow-insecure-http); a job file cannot.
	AllowInsecureHTTP bool
	// BeforeSend, when set, is called before every attempt that may be
	// billed; an error aborts the call. The pipeline reserves credits here.
	BeforeSend func(ctx context.Context, endpoint string) error
	// AfterResponse, when set, is told the outcome of every attempt that got
	// an HTTP response, so the caller can account for credits.
	AfterResponse func(ctx context.Context, r Outcome)
	HTTPClient    *http.Client
	Logger        *slog.Logger
}

func (c Config) withDefaults() Config {
	c.ShortVideoPrefix = cmp.Or(c.ShortVideoPrefix, ShortVideoPrefixDefault)
	c.PhotoSocialPrefix = cmp.Or(c.PhotoSocialPrefix, PhotoSocialPrefixDefault)
	c.Timeout = cmp.Or(c.Timeout, TimeoutDefault)
	if c.MaxRetries == 0 {
		c.MaxRetries = MaxRetriesDefault
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	c.MaxRateLimitWaits = cmp.Or(c.MaxRateLimitWaits, MaxRateLimitWaitsDefault)
	c.RetryInitial = cmp.Or(c.RetryInitial, RetryInitialDefault)
	c.RetryMax = cmp.Or(c.RetryMax, RetryMaxDefault)
	c.RetryAfterCap = cmp.Or(c.RetryAfterCap, RetryAfterCapDefault)
	c.OutageWindow = cmp.Or(c.OutageWindow, OutageWindowDefault)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, MaxBodyBytesDefault)
	c.MaxInflightBytes = max(cmp.Or(c.MaxInflightBytes, MaxInflightBytesDefault), c.MaxBodyBytes)
	if c.Rate > 0 {
		c.Burst = cmp.Or(c.Burst, 1)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{
			Transport: &http.Transport{
				Proxy:               http.ProxyFromEnvironment,
				MaxIdleConnsPerHost: 64,
				IdleConnTimeout:     90 * time.Second,
			},
			CheckRedirect: keepKeyOnHost,
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c Config) validate() error {
	if err := CheckBaseURL(c.BaseURL, c.AllowInsecureHTTP); err != nil {
		return fmt.Errorf("sources: base_url: %w", err)
	}
	if c.APIKey == "" {
		return errors.New("sources: api key is empty")
	}
	for name, p := range map[string]string{"shortvideo prefix": c.ShortVideoPrefix, "photosocial prefix": c.PhotoSocialPrefix} {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("sources: %s %q must start with /", name, p)
		}
	}
	if c.OutageWindow < 0 {
		return fmt.Errorf("sources: outage window %v must not be negative", c.OutageWindow)
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		return fmt.Errorf("sources: rate %v must be a finite number, not negative", c.Rate)
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
