package sandbox

import (
	"fmt"
	"maps"
	"slices"

	"github.com/socialcrawl/crawler/internal/sandbox/contract"
	"github.com/socialcrawl/crawler/internal/sandbox/real"
)

// PriceMax bounds a price of Config.Prices.
const PriceMax = 1000

// validatePrices checks Config.Prices: every key an endpoint of the preset
// (as Usage.ByEndpoint names it), every price in 1..PriceMax.
func (c Config) validatePrices() error {
	has := contract.Has
	if c.Preset == PresetScrapeCreators {
		has = real.Has
	}
	for _, ep := range slices.Sorted(maps.Keys(c.Prices)) { // the first error is the same every time
		if !has(ep) {
			return fmt.Errorf("sandbox: Config.Prices[%q]: not an endpoint of preset %q (keys are Usage.ByEndpoint's: the path after /api, or the real path)", ep, c.Preset)
		}
		if p := c.Prices[ep]; p < 1 || p > PriceMax {
			return fmt.Errorf("sandbox: Config.Prices[%q] must be in [1, %d], got %d", ep, PriceMax, p)
		}
	}
	return nil
}
