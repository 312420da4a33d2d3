package sandbox

import (
	"fmt"
	"net/http"
	"slices"
)

// PriceMax bounds a price of Config.Prices.
const PriceMax = 1000

// validatePrices checks Config.Prices: every key an endpoint of the preset
// (as Usage.ByEndpoint names it), every price in 1..PriceMax.
func (c Config) validatePrices() error {
	keys := make([]string, 0, len(c.Prices))
	for k := range c.Prices {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first error is the same every time
	for _, ep := range keys {
		if !presetEndpoint(c.Preset, ep) {
			return fmt.Errorf("sandbox: Config.Prices[%q]: not an endpoint of preset %q (keys are Usage.ByEndpoint's: the path after /api, or the real path)", ep, c.Preset)
		}
		if p := c.Prices[ep]; p < 1 || p > PriceMax {
			return fmt.Errorf("sandbox: Config.Prices[%q] must be in [1, %d], got %d", ep, PriceMax, p)
		}
	}
	return nil
}

// presetEndpoint reports whether path names an endpoint of preset.
func presetEndpoint(preset, path string) bool {
	if preset == PresetScrapeCreators {
		_, ok := realRoutes[path]
		return ok
	}
	_, ok := routes[path]
	return ok
}

// price is what a billable answer of endpoint costs by Config.Prices: 0
// when the endpoint is not priced (the preset's own cost).
func (s *Server) price(endpoint string) int64 { return s.prices[endpoint] }

// chargePrice makes a billable contract answer cost its endpoint's price:
// the credits beyond the one inject holds are held too, or, when the
// balance is short, the answer is a 402 (false: nothing more to write).
func (s *Server) chargePrice(rw http.ResponseWriter, ex *exchange) bool {
	p := s.price(ex.endpoint)
	if p <= 1 {
		return true
	}
	ok, left := s.credits.holdMore(ex.key, p-1)
	if !ok {
		ex.fault = "out_of_credits"
		writeOutOfCredits(rw)
		return false
	}
	ex.charge, ex.creditsLeft = p, left
	return true
}
