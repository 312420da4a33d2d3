package bench

import (
	"fmt"
	"math"
	"strconv"
)

// Figure is one measured value, with the aim it is held to (if any).
type Figure struct {
	Workload string // the workload's title, e.g. "1. Quota saturation"
	Name     string
	Value    float64
	Unit     string // shown after the value: "s", "MB", "rows/s"...
	// Text, when set, is shown instead of Value and Unit (e.g. "> 40 s"
	// when a level was never reached).
	Text string
	Aim  Aim
	// Command reproduces the figure.
	Command string
	// Detail is what the figure was computed from, in numbers.
	Detail string
	// Why explains the gap to the aim (or to the limit) in measured terms.
	Why string
}

// Aim is what a figure should be: Op is ">=", "<=" or "==", against Bound.
// The zero Aim means the figure is reported only.
type Aim struct {
	Op    string
	Bound float64
	// Text, when set, describes the aim instead of Op and Bound.
	Text string
}

func atLeast(v float64) Aim { return Aim{Op: ">=", Bound: v} }
func atMost(v float64) Aim  { return Aim{Op: "<=", Bound: v} }
func exactly(v float64) Aim { return Aim{Op: "==", Bound: v} }

// Has reports whether the figure is held to an aim.
func (a Aim) Has() bool { return a.Op != "" }

func (a Aim) String() string {
	switch {
	case a.Text != "":
		return a.Text
	case a.Op == "":
		return "-"
	case a.Op == "==":
		return "= " + trimFloat(a.Bound)
	case a.Op == ">=":
		return "≥ " + trimFloat(a.Bound)
	default:
		return "≤ " + trimFloat(a.Bound)
	}
}

// Met reports whether v meets the aim (true when there is none).
func (a Aim) Met(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	switch a.Op {
	case ">=":
		return v >= a.Bound
	case "<=":
		return v <= a.Bound
	case "==":
		return math.Abs(v-a.Bound) <= 1e-9*math.Max(1, math.Abs(a.Bound))
	}
	return true
}

// Gap is how far v is from the aim, relative to the bound: > 0 when
// missed, <= 0 when met (the margin). 0 without an aim.
func (a Aim) Gap(v float64) float64 {
	if !a.Has() {
		return 0
	}
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	scale := math.Max(math.Abs(a.Bound), 1e-9)
	switch a.Op {
	case ">=":
		return (a.Bound - v) / scale
	case "<=":
		if a.Bound == 0 {
			return v
		}
		return (v - a.Bound) / scale
	default:
		return math.Abs(v-a.Bound) / scale
	}
}

// Met is the figure's verdict: "yes", "no", or "-" without an aim.
func (f Figure) Met() string {
	if !f.Aim.Has() {
		return "-"
	}
	if f.Aim.Met(f.Value) {
		return "yes"
	}
	return "**no**"
}

// Shown is the value as the table shows it.
func (f Figure) Shown() string {
	if f.Text != "" {
		return f.Text
	}
	s := formatValue(f.Value)
	if f.Unit != "" {
		s += " " + f.Unit
	}
	return s
}

// formatValue prints 3 significant digits for small values and whole
// numbers with thousands separators for large ones.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprint(v)
	case v == 0:
		return "0"
	case math.Abs(v) >= 1000:
		return thousands(int64(math.Round(v)))
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 0.1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
