package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/socialcrawl/crawler/internal/sandbox/faults"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// Defaults and limits of Config, exported so callers and tests can compute
// exact page counts without copying numbers.
const (
	// PageSizeDefault is the page size of cursor lists when Config.PageSize is 0.
	PageSizeDefault = 50
	// PageSizeMax bounds Config.PageSize so one page stays cheap to build.
	PageSizeMax = 1000
	// WorldTimeDefault is the world clock when Config.WorldTime is 0.
	WorldTimeDefault = 0
	// ReelsPageSize is the fixed number of reels per page of the reels search;
	// the upstream does not let the caller choose it.
	ReelsPageSize = world.ReelsPageSize
	// FeedSize is the fixed length of the trending feed, popular videos and
	// popular creators lists.
	FeedSize = world.FeedSize
	// WorldEpoch is the Unix time of day 0 of the world clock
	// (2025-01-01T00:00:00Z). "Now" in the world is WorldEpoch + WorldTime*86400.
	WorldEpoch = world.WorldEpoch
)

// Presets of Config.Preset: the dialect the sandbox speaks.
const (
	// PresetContract serves the contract (docs/upstream.md) under /api.
	PresetContract = "contract"
	// PresetScrapeCreators serves the real service's dialect (ScrapeCreators,
	// see docs/upstream.md): its paths at the root (/v1/tiktok/...,
	// /v1/instagram/..., /v2/instagram/...), parameter names, response
	// shapes, credit costs, cache and errors, over the same world.
	PresetScrapeCreators = "scrapecreators"
	// PresetDefault is the preset when Config.Preset is "".
	PresetDefault = PresetContract
)

// Retry-After modes of Config.RetryAfterMode: how a 429 announces its delay.
const (
	// RetryAfterSeconds sends the whole seconds until the key's bucket has a
	// token again, rounded up, at least 1 (e.g. "Retry-After: 1").
	RetryAfterSeconds = faults.RetryAfterSeconds
	// RetryAfterDate sends an HTTP date (RFC 9110 IMF-fixdate) at or after
	// the moment the bucket has a token again.
	RetryAfterDate = faults.RetryAfterDate
	// RetryAfterNone sends no Retry-After header, like the real service.
	RetryAfterNone = faults.RetryAfterNone
	// RetryAfterGarbage sends a value that is neither seconds nor a date.
	RetryAfterGarbage = faults.RetryAfterGarbage
	// RetryAfterModeDefault is the mode when Config.RetryAfterMode is "".
	RetryAfterModeDefault = RetryAfterSeconds
)

// Config of the sandbox. Zero values get the defaults documented per field.
type Config struct {
	// Preset is the dialect: PresetContract (default) serves the contract's
	// 18 endpoints under /api; PresetScrapeCreators serves the same world in
	// the real service's dialect at the root (see doc.go for what differs:
	// parameters, shapes, min_time cursors, 15-credit replies, the
	// cache_max_age cache, 403 for "blocked..." items). Both count
	// Usage.Credits.
	Preset string
	// APIKeys are the accepted values of the x-api-key header. Required: at
	// least one, none empty (the empty key is the bucket of unknown callers).
	APIKeys []string
	// PageSize is the number of items per page of the cursor lists (endpoints
	// 1-6 and the post comments). Default PageSizeDefault (50); at most
	// PageSizeMax.
	PageSize int
	// WorldTime is the world clock in days; growing counters drift with it
	// and the feeds rotate daily. Default 0; never negative.
	WorldTime int64
	// Churn is how accounts change from day to day: ChurnLinear (default;
	// lists grow at their head by a fixed number a day, counters drift by a
	// fixed amount), ChurnHeavyTail (per-account heavy-tailed rates,
	// Poisson arrivals, unfollows, irregular counters; see world/churn.go
	// and ChurnTruth), ChurnBursts or ChurnDrift (log-normal follower rates
	// with bursts, or drifting; world/churnworlds.go), or ChurnContent
	// (heavytail whose comments and replies change too; world/contentchurn.go,
	// ContentAt). All are the same world at WorldTime 0.
	Churn string
	// Logger receives one debug record per request. Default: discard.
	Logger *slog.Logger

	// Rate turns on a token bucket per API key: Rate tokens per second,
	// Burst at most, full at a key's first request. A request finding no
	// token answers 429 (not billable, counted in Usage.Requests and
	// Usage.RateLimited) with a Retry-After per RetryAfterMode. Default 0:
	// no limit. Server.SetRate changes both at run time. The bucket runs on
	// the wall clock, so it is the one fault that is not a function of the
	// seed.
	Rate float64
	// Burst is the bucket's size. Default (0) when Rate > 0: one second of
	// requests, ceil(Rate), at least 1.
	Burst int
	// RetryAfterMode is how a 429 announces its delay: RetryAfterSeconds
	// (default), RetryAfterDate, RetryAfterNone or RetryAfterGarbage.
	RetryAfterMode string

	// Credits is the starting credit balance of every key. Each billable
	// answer spends one; a key whose balance is 0 gets 402 with
	// OutOfCreditsMessage (not billable) until Server.AddCredits tops it up.
	// Default 0: unlimited, unless CreditLimit is set.
	Credits int64
	// CreditLimit makes Credits a balance even when it is 0 (every request
	// answers 402 until AddCredits). Credits > 0 implies it.
	CreditLimit bool
	// RealServiceFields (contract preset only; the real preset writes its own
	// envelope) adds credits_charged (1, or the price) and, when credits are
	// limited, credits_remaining (the key's balance after this answer) at the
	// top level of billable 200 bodies, as the real service does. Default
	// false: the contract's exact shapes.
	RealServiceFields bool

	// Prices make a billable answer of an endpoint cost more than one
	// credit: keyed by the endpoint as Usage.ByEndpoint names it (the path
	// after /api, e.g. "/shortvideo/profile"; in the real preset the whole
	// path, e.g. "/v1/tiktok/profile"), 1..PriceMax credits. Usage,
	// Arrival.Credits and the credit balance count them; the body says so
	// where it says what it charged (credits_charged: the real preset's
	// envelopes, RealServiceFields). An answer that already costs more
	// (comments with replies, 15) keeps its cost; free answers stay free.
	// Default: every billable answer costs 1.
	Prices map[string]int64
	// Cache (real preset only) is an answer cache shared by several
	// servers, one per world day, on the world's clock (see Cache). nil:
	// the server's own cache, on the wall clock.
	Cache *Cache

	// Faults are the seeded random and scripted faults (5xx, hangs,
	// truncated bodies, latency). The zero value injects nothing.
	// Server.SetFaults replaces them at run time.
	Faults Faults

	// now is the clock of the bucket, Retry-After dates and arrivals; tests
	// replace it. Default time.Now.
	now func() time.Time
	// recorded and holding are test hooks: recorded is called with every
	// arrival once it is counted, holding when a request starts waiting out
	// a latency or a hang.
	recorded func(key string, a Arrival)
	holding  func()
}

func (c Config) withDefaults() Config {
	c.Preset = cmp.Or(c.Preset, PresetDefault)
	c.PageSize = cmp.Or(c.PageSize, PageSizeDefault)
	c.WorldTime = cmp.Or(c.WorldTime, WorldTimeDefault)
	c.Churn = cmp.Or(c.Churn, ChurnDefault)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.APIKeys = append([]string(nil), c.APIKeys...) // the caller may reuse its slice
	c.Burst = faults.BurstOrDefault(c.Rate, c.Burst)
	c.RetryAfterMode = cmp.Or(c.RetryAfterMode, RetryAfterModeDefault)
	c.Faults = c.Faults.WithDefaults()
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

func (c Config) validate() error {
	if len(c.APIKeys) == 0 {
		return errors.New("sandbox: Config.APIKeys: at least one key is required")
	}
	for i, k := range c.APIKeys {
		if k == "" {
			return fmt.Errorf("sandbox: Config.APIKeys[%d] is empty", i)
		}
	}
	if c.Preset != PresetContract && c.Preset != PresetScrapeCreators {
		return fmt.Errorf("sandbox: Config.Preset must be %q or %q, got %q", PresetContract, PresetScrapeCreators, c.Preset)
	}
	if c.PageSize < 1 || c.PageSize > PageSizeMax {
		return fmt.Errorf("sandbox: Config.PageSize must be in [1, %d], got %d", PageSizeMax, c.PageSize)
	}
	if c.WorldTime < 0 {
		return fmt.Errorf("sandbox: Config.WorldTime must not be negative, got %d", c.WorldTime)
	}
	if c.Churn != ChurnLinear && !world.IsChurnWorld(c.Churn) {
		return fmt.Errorf("sandbox: Config.Churn must be %q, %q, %q, %q or %q, got %q", ChurnLinear, ChurnHeavyTail, ChurnBursts, ChurnDrift, ChurnContent, c.Churn)
	}
	if err := faults.ValidateRate("Config.Rate", "Config.Burst", c.Rate, c.Burst); err != nil {
		return err
	}
	switch c.RetryAfterMode {
	case RetryAfterSeconds, RetryAfterDate, RetryAfterNone, RetryAfterGarbage:
	default:
		return fmt.Errorf("sandbox: Config.RetryAfterMode must be one of %q, %q, %q, %q, got %q",
			RetryAfterSeconds, RetryAfterDate, RetryAfterNone, RetryAfterGarbage, c.RetryAfterMode)
	}
	if c.Credits < 0 {
		return fmt.Errorf("sandbox: Config.Credits must not be negative, got %d", c.Credits)
	}
	if c.Cache != nil && c.Preset != PresetScrapeCreators {
		return fmt.Errorf("sandbox: Config.Cache: preset %q has no answer cache (only %q does)", c.Preset, PresetScrapeCreators)
	}
	if err := c.validatePrices(); err != nil {
		return err
	}
	return c.Faults.Validate("Config.Faults", knownPath)
}
