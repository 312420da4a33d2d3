package sources

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	MaxBodyBytesDefault  = 32 << 20
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
	// truncated body, 429). Default MaxRetriesDefault; negative means none.
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
	// MaxBodyBytes bounds a response body. Default MaxBodyBytesDefault.
	MaxBodyBytes int64
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
	if c.BaseURL == "" {
		return errors.New("sources: base_url is required")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("sources: base_url %q must be an absolute http(s) URL", c.BaseURL)
	}
	if u.User != nil {
		return errors.New("sources: base_url must not carry credentials; the key goes in x-api-key")
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
	if c.Rate < 0 {
		return fmt.Errorf("sources: rate %v must not be negative", c.Rate)
	}
	return nil
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
