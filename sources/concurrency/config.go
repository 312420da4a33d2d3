package concurrency

// Config configures a Limiter.
type Config struct {
	// Ceiling is the most requests in flight (limits.workers when the job
	// file sets it); 0 or above HardCeiling: HardCeiling.
	Ceiling int
	// Initial is the limit the first round runs at; 0: InitialDefault.
	// Never above Ceiling.
	Initial int
	// Rate is this process's share of the rate control's current rate,
	// requests/s (0: no bucket, the rate is not known to bind). nil: none.
	// When the rate binds, the limit is held near what it needs (Little's
	// law) rather than left to grow with requests that only wait.
	Rate func() float64
	// Loose reports whether Rate is held under a first estimate that may
	// be a loose lower bound of the quota; a probe above it is then
	// followed (see followRate). nil: never.
	Loose func() bool
}

func (c Config) withDefaults() Config {
	if c.Ceiling <= 0 || c.Ceiling > HardCeiling {
		c.Ceiling = HardCeiling
	}
	if c.Initial <= 0 {
		c.Initial = InitialDefault
	}
	c.Initial = min(c.Initial, c.Ceiling)
	if c.Rate == nil {
		c.Rate = func() float64 { return 0 }
	}
	if c.Loose == nil {
		c.Loose = func() bool { return false }
	}
	return c
}
