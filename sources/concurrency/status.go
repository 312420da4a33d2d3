package concurrency

import "time"

// Reason is why the limit moved.
type Reason string

const (
	// ReasonStart: doubled, the answers keeping their time.
	ReasonStart Reason = "start"
	// ReasonLatency: the answer times said more requests in flight would
	// (up) or would not (down) buy answers.
	ReasonLatency Reason = "latency"
	// ReasonRate: held to what the rate control lets through (after 429s,
	// or api.rate).
	ReasonRate Reason = "rate"
	// ReasonErrors: a burst of 5xx or timeouts.
	ReasonErrors Reason = "errors"
	// ReasonCeiling: limits.workers, or HardCeiling.
	ReasonCeiling Reason = "ceiling"
)

// Reasons lists the reasons, in a fixed order for displays.
var Reasons = []Reason{ReasonStart, ReasonLatency, ReasonRate, ReasonErrors, ReasonCeiling}

// Move is a move of the limit: its reason and direction.
type Move struct {
	Reason Reason
	Up     bool
}

func (m Move) String() string {
	if m.Reason == "" {
		return ""
	}
	if m.Up {
		return string(m.Reason) + " up"
	}
	return string(m.Reason) + " down"
}

// Status is the limiter's state, for the live line, the metrics and the
// run's samples.
type Status struct {
	Limit    int // requests that may be in flight now
	InFlight int // slots held now
	Ceiling  int // limits.workers, or HardCeiling
	Phase    string
	// Last is the latest move of the limit (zero before the first): the
	// alternation of the steady phase around its centre is not a move.
	Last Move
	// Moves counts the moves since the start, by reason and direction.
	Moves map[Move]int64
	// SlotSeconds is the time integral of the slots held since the start:
	// its increase over an interval divided by the interval is the mean
	// number of requests in flight.
	SlotSeconds float64
	// At is the instant SlotSeconds counts to (the limiter's clock when
	// the status was read): a mean over an interval must end there, not
	// when its reader got to it, or the slot time between the two lands
	// in the next interval (a mean above the workers).
	At time.Time
	// Latency is the median answer time of the latest round evaluated.
	Latency time.Duration
}

func (c *controller) status(held int) Status {
	s := Status{Limit: c.limit, InFlight: held, Ceiling: c.cfg.Ceiling, Phase: c.phase.String(), Last: c.last,
		Moves: make(map[Move]int64, len(c.moves)), SlotSeconds: c.slotSeconds,
		Latency: time.Duration(c.median * float64(time.Second))}
	for m, n := range c.moves {
		s.Moves[m] = n
	}
	return s
}
