package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
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
	ReelsPageSize = 12
	// FeedSize is the fixed length of the trending feed, popular videos and
	// popular creators lists.
	FeedSize = 20
	// WorldEpoch is the Unix time of day 0 of the world clock
	// (2025-01-01T00:00:00Z). "Now" in the world is WorldEpoch + WorldTime*86400.
	WorldEpoch int64 = 1735689600
)

// Config of the sandbox. Zero values get the defaults documented per field.
type Config struct {
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
	// Logger receives one debug record per request. Default: discard.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.PageSize = cmp.Or(c.PageSize, PageSizeDefault)
	c.WorldTime = cmp.Or(c.WorldTime, WorldTimeDefault)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.APIKeys = append([]string(nil), c.APIKeys...) // the caller may reuse its slice
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
	if c.PageSize < 1 || c.PageSize > PageSizeMax {
		return fmt.Errorf("sandbox: Config.PageSize must be in [1, %d], got %d", PageSizeMax, c.PageSize)
	}
	if c.WorldTime < 0 {
		return fmt.Errorf("sandbox: Config.WorldTime must not be negative, got %d", c.WorldTime)
	}
	return nil
}
