package sources

import (
	"testing"
	"time"
)

// Overlapping 429 pauses count once: the clock adds up the union of their
// windows, and only the part already elapsed.
func TestPauseClockUnion(t *testing.T) {
	t.Parallel()
	var p pauseClock
	t0 := time.Unix(1000, 0)
	p.pause(t0, 10*time.Second)                    // [0, 10)
	p.pause(t0.Add(2*time.Second), 5*time.Second)  // inside: nothing
	p.pause(t0.Add(8*time.Second), 4*time.Second)  // extends to 12
	p.pause(t0.Add(20*time.Second), 3*time.Second) // [20, 23)
	for _, c := range []struct {
		at   time.Duration
		want time.Duration
		now  bool
	}{{21 * time.Second, 13 * time.Second, true}, {23 * time.Second, 15 * time.Second, false}, {time.Minute, 15 * time.Second, false}} {
		got, now := p.elapsed(t0.Add(c.at))
		if got != c.want || now != c.now {
			t.Errorf("at %s: %s %v, want %s %v", c.at, got, now, c.want, c.now)
		}
	}
}
