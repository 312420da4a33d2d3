// Package report writes a run's report (runs.LoadReport) as one
// self-contained HTML file with inline SVG charts, for `crawler report`.
package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/socialcrawl/crawler/runs"
)

// Report is the report's figures (runs.LoadReport).
type Report = runs.Report

// Mover is an entity's change between two runs.
type Mover = runs.Mover

// Point is one interval of the timeline.
type Point = runs.TimelinePoint

// The HTML form: one file, no external script, font, style or image. The
// charts are inline SVG computed here (geometry in Go, markup in
// report.html.tmpl); every data mark is a <rect>, <path> or <circle> of
// class "mark" inside an <svg data-chart=NAME data-marks=N>, N its count,
// which the browser test checks against the data.

//go:embed report.html.tmpl
var pageText string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":  func(n int64) string { return group(n) },
	"add":  func(a, b int) int { return a + b },
	"f1":   func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"dur":  duration,
	"sign": func(n int64) string { return signed(n) },
	"opt":  Opt,
	"delta": func(a, b *int64) string {
		if a == nil || b == nil {
			return "–"
		}
		return signed(*b - *a)
	},
	"neg":   func(n int64) int64 { return -n },
	"int64": func(n int) int64 { return int64(n) },
}).Parse(pageText))

// Opt writes a count that may be missing: grouped digits, or – for nil.
func Opt(n *int64) string {
	if n == nil {
		return "–"
	}
	return group(*n)
}

// WriteHTML writes r as the HTML report.
func WriteHTML(w io.Writer, r *Report) error {
	return page.Execute(w, view{Report: r, Charts: charts(r)})
}

type view struct {
	*Report
	Charts map[string]*Chart
}

// Chart is one inline SVG: horizontal bars (Bars), lines (Lines), or both
// empty when there is nothing to draw.
type Chart struct {
	Name          string
	Title         string
	Width, Height float64
	Bars          []Bar
	Lines         []Line
	Axes          []Text // tick and axis labels
	Grid          []Seg
	Legend        []Legend
	Marks         int
}

// Bar is one row of a bar chart: a label, its segments, a value text.
type Bar struct {
	Label      string
	LabelY     float64
	Segs       []Rect
	Value      string
	ValueX     float64
	LabelWidth float64
}

// Rect is one segment (a mark).
type Rect struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// Line is one series: its path and a circle per point.
type Line struct {
	Class  string
	Path   string
	Points []Circle
}

// Circle is one point of a series (a mark).
type Circle struct {
	X, Y  float64
	Title string
}

// Text is a label placed in the chart.
type Text struct {
	X, Y   float64
	Anchor string
	S      string
}

// Seg is a grid or axis line.
type Seg struct{ X1, Y1, X2, Y2 float64 }

// Legend is a colour key.
type Legend struct {
	Class, Label string
}

const (
	chartWidth = 720.0
	labelWidth = 250.0
	valueWidth = 110.0
	rowHeight  = 22.0
	barHeight  = 14.0
)

func charts(r *Report) map[string]*Chart {
	out := map[string]*Chart{}
	credits := make([]barRow, len(r.Credits))
	for i, e := range r.Credits {
		credits[i] = barRow{label: e.Endpoint, segs: []seg{{float64(e.Billed), "c0", fmt.Sprintf("%s: %d billed of %d requests", e.Endpoint, e.Billed, e.Requests)}},
			value: group(e.Billed)}
	}
	out["credits"] = bars("credits", "Credits billed per endpoint", credits, nil)

	kinds := make([]barRow, len(r.Kinds))
	for i, k := range r.Kinds {
		var segs []seg
		for _, s := range []struct {
			n     int64
			class string
			what  string
		}{{k.Done, "done", "done"}, {k.Skipped, "skipped", "skipped"}, {k.Failed, "failed", "failed"}, {k.Open, "open", "pending or leased"}} {
			if s.n > 0 {
				segs = append(segs, seg{float64(s.n), s.class, fmt.Sprintf("%s: %d %s", k.Kind, s.n, s.what)})
			}
		}
		kinds[i] = barRow{label: k.Kind, segs: segs, value: group(k.Done + k.Skipped + k.Failed + k.Open)}
	}
	out["tasks"] = bars("tasks", "Task outcomes by kind", kinds,
		[]Legend{{"done", "done"}, {"skipped", "skipped"}, {"failed", "failed"}, {"open", "pending/leased"}})

	reasons := make([]barRow, len(r.Reasons))
	for i, rc := range r.Reasons {
		reasons[i] = barRow{label: rc.Kind + " " + rc.Reason, segs: []seg{{float64(rc.N), rc.State, fmt.Sprintf("%s %s: %d tasks %s", rc.Kind, rc.Reason, rc.N, rc.State)}},
			value: group(rc.N)}
	}
	out["reasons"] = bars("reasons", "Top reasons tasks failed or were skipped", reasons, []Legend{{"failed", "failed"}, {"skipped", "skipped"}})

	tables := make([]barRow, len(r.Tables))
	for i, t := range r.Tables {
		tables[i] = barRow{label: t.Table, segs: []seg{{float64(t.Rows), "c1", fmt.Sprintf("%s: %d rows", t.Table, t.Rows)}}, value: group(t.Rows)}
	}
	out["tables"] = bars("tables", "Rows per table", tables, nil)
	out["followers"] = movers("followers", "Top follower growth", r.Followers)
	out["followerfalls"] = movers("followerfalls", "Top follower losses", r.FollowerFalls)
	if r.Changes != nil {
		out["edges"] = edgeChanges(r.Changes.Lists)
	}
	out["plays"] = movers("plays", "Top play-count growth", r.Plays)
	out["timeline"] = lines(r.Timeline)
	if c := inFlight(r.Timeline); c != nil {
		out["inflight"] = c
	}
	return out
}

type seg struct {
	v     float64
	class string
	title string
}

type barRow struct {
	label string
	segs  []seg
	value string
}

// bars lays out a horizontal bar chart, segments stacked left to right.
func bars(name, title string, rows []barRow, legend []Legend) *Chart {
	c := &Chart{Name: name, Title: title, Width: chartWidth, Height: float64(len(rows))*rowHeight + 8, Legend: legend}
	maxV := 0.0
	for _, r := range rows {
		total := 0.0
		for _, s := range r.segs {
			total += s.v
		}
		maxV = math.Max(maxV, total)
	}
	span := chartWidth - labelWidth - valueWidth
	for i, r := range rows {
		y := 4 + float64(i)*rowHeight
		b := Bar{Label: clip(r.label, 40), LabelY: y + barHeight - 2, Value: r.value, LabelWidth: labelWidth - 8}
		x := labelWidth
		for _, s := range r.segs {
			w := 0.0
			if maxV > 0 {
				w = s.v / maxV * span
			}
			b.Segs = append(b.Segs, Rect{X: x, Y: y, W: round(w, 2), H: barHeight, Class: s.class, Title: s.title})
			x += w
			c.Marks++
		}
		b.ValueX = x + 6
		c.Bars = append(c.Bars, b)
	}
	return c
}

// movers lays out a diverging bar chart of deltas around a zero line.
func movers(name, title string, ms []Mover) *Chart {
	c := &Chart{Name: name, Title: title, Width: chartWidth, Height: float64(len(ms))*rowHeight + 8}
	maxAbs := 0.0
	hasNeg := false
	for _, m := range ms {
		maxAbs = math.Max(maxAbs, math.Abs(float64(m.Delta)))
		hasNeg = hasNeg || m.Delta < 0
	}
	span := chartWidth - labelWidth - valueWidth
	zero := labelWidth
	if hasNeg {
		zero = labelWidth + span/2
		span /= 2
	}
	for i, m := range ms {
		y := 4 + float64(i)*rowHeight
		w := 0.0
		if maxAbs > 0 {
			w = math.Abs(float64(m.Delta)) / maxAbs * span
		}
		x, class := zero, "up"
		if m.Delta < 0 {
			x, class = zero-w, "down"
		}
		c.Bars = append(c.Bars, Bar{Label: clip(m.Key, 40), LabelY: y + barHeight - 2, LabelWidth: labelWidth - 8,
			Segs:  []Rect{{X: round(x, 2), Y: y, W: round(w, 2), H: barHeight, Class: class, Title: fmt.Sprintf("%s: %s → %s (%s)", m.Key, group(m.Before), group(m.After), signed(m.Delta))}},
			Value: signed(m.Delta), ValueX: math.Max(x+w, zero) + 6})
		c.Marks++
	}
	if len(ms) > 0 {
		c.Grid = append(c.Grid, Seg{zero, 0, zero, c.Height})
	}
	return c
}

// edgeChanges lays out the follow edges each compared list gained (right
// of the zero line) and lost (left of it): two marks per list.
func edgeChanges(ls []runs.ListChange) *Chart {
	c := &Chart{Name: "edges", Title: "Follow edges gained and lost per list", Width: chartWidth, Height: float64(len(ls))*rowHeight + 8,
		Legend: []Legend{{"up", "gained"}, {"down", "lost"}}}
	maxV := 0.0
	for _, l := range ls {
		maxV = math.Max(maxV, math.Max(float64(l.Gained), float64(l.Lost)))
	}
	span := (chartWidth - labelWidth - valueWidth) / 2
	zero := labelWidth + span
	for i, l := range ls {
		y := 4 + float64(i)*rowHeight
		wg, wl := 0.0, 0.0
		if maxV > 0 {
			wg, wl = float64(l.Gained)/maxV*span, float64(l.Lost)/maxV*span
		}
		label := l.Account + " " + l.List
		c.Bars = append(c.Bars, Bar{Label: clip(label, 40), LabelY: y + barHeight - 2, LabelWidth: labelWidth - 8,
			Segs: []Rect{
				{X: round(zero-wl, 2), Y: y, W: round(wl, 2), H: barHeight, Class: "down", Title: fmt.Sprintf("%s: %s lost since run %d", label, group(l.Lost), l.PrevRun)},
				{X: zero, Y: y, W: round(wg, 2), H: barHeight, Class: "up", Title: fmt.Sprintf("%s: %s gained since run %d", label, group(l.Gained), l.PrevRun)},
			},
			Value: signed(l.Gained) + " / " + signed(-l.Lost), ValueX: zero + wg + 6})
		c.Marks += 2
	}
	if len(ls) > 0 {
		c.Grid = append(c.Grid, Seg{zero, 0, zero, c.Height})
	}
	return c
}

// lines lays out the timeline: pages/s (left axis) and 429s per interval
// (right axis) against seconds since the run started.
func lines(pts []Point) *Chart {
	return lineChart("timeline", "Pages per second and 429s over the run", pts, false,
		series{"pages", "pages/s (left)", func(p Point) float64 { return p.PagesPerSec },
			func(p Point) string { return fmt.Sprintf("%s: %.1f pages/s", duration(p.At), p.PagesPerSec) }},
		series{"r429", "429s per interval (right)", func(p Point) float64 { return float64(p.RateLimited) },
			func(p Point) string { return fmt.Sprintf("%s: %d 429s", duration(p.At), p.RateLimited) }})
}

// inFlight lays out the requests in flight (on average over each
// interval) and the adaptive limit of them, on one axis, each point's
// title saying why the limit moved in its interval; nil when the run's
// samples hold no limit (older than the adaptive limit).
func inFlight(pts []Point) *Chart {
	if !slices.ContainsFunc(pts, func(p Point) bool { return p.ConcurrencyLimit > 0 }) {
		return nil
	}
	return lineChart("inflight", "Requests in flight and their limit over the run", pts, true,
		series{"inflight", "requests in flight (mean over the interval)", func(p Point) float64 { return p.InFlight },
			func(p Point) string { return fmt.Sprintf("%s: %.1f in flight", duration(p.At), p.InFlight) }},
		series{"limit", "limit", func(p Point) float64 { return float64(p.ConcurrencyLimit) },
			func(p Point) string {
				return fmt.Sprintf("%s: limit %d%s", duration(p.At), p.ConcurrencyLimit, movesText(p.Moves))
			}})
}

// movesText says how the limit moved in an interval: "; moved latency
// down x2, rate down", or "" when it did not.
func movesText(moves map[string]int64) string {
	if len(moves) == 0 {
		return ""
	}
	var parts []string
	for _, mv := range slices.Sorted(maps.Keys(moves)) {
		if n := moves[mv]; n > 1 {
			parts = append(parts, fmt.Sprintf("%s x%d", mv, n))
		} else {
			parts = append(parts, mv)
		}
	}
	return "; moved " + strings.Join(parts, ", ")
}

// series is one line of a line chart: its class, legend, value and title.
type series struct {
	class, legend string
	value         func(Point) float64
	title         func(Point) string
}

// lineChart lays out two series against seconds since the run started:
// a on the left axis, b on the right one, or on the left too (shared).
func lineChart(name, title string, pts []Point, shared bool, a, b series) *Chart {
	const h, left, right, top, bottom = 240.0, 56.0, 56.0, 12.0, 34.0
	c := &Chart{Name: name, Title: title, Width: chartWidth, Height: h,
		Legend: []Legend{{a.class, a.legend}, {b.class, b.legend}}}
	if len(pts) == 0 {
		return c
	}
	maxT, maxA, maxB := 0.0, 0.0, 0.0
	for _, p := range pts {
		maxT = math.Max(maxT, p.At)
		maxA = math.Max(maxA, a.value(p))
		maxB = math.Max(maxB, b.value(p))
	}
	if shared {
		maxA = math.Max(maxA, maxB)
		maxB = maxA
	}
	maxA, maxB = nice(maxA), nice(math.Max(maxB, 1))
	if shared {
		maxB = maxA
	}
	pw, ph := chartWidth-left-right, h-top-bottom
	x := func(t float64) float64 { return round(left+t/maxT*pw, 2) }
	y := func(v, of float64) float64 { return round(top+ph-v/of*ph, 2) }
	for i := 0; i <= 4; i++ {
		gy := top + ph*float64(i)/4
		c.Grid = append(c.Grid, Seg{left, gy, left + pw, gy})
		c.Axes = append(c.Axes, Text{left - 6, gy + 4, "end", trim(maxA * float64(4-i) / 4)})
		if !shared {
			c.Axes = append(c.Axes, Text{left + pw + 6, gy + 4, "start", trim(maxB * float64(4-i) / 4)})
		}
	}
	for i := 0; i <= 5; i++ {
		t := maxT * float64(i) / 5
		c.Axes = append(c.Axes, Text{x(t), h - bottom + 16, "middle", duration(t)})
	}
	c.Axes = append(c.Axes, Text{left + pw/2, h - 2, "middle", "time since the run started"})
	for _, sr := range []struct {
		series
		of float64
	}{{a, maxA}, {b, maxB}} {
		var path strings.Builder
		l := Line{Class: sr.class}
		for i, p := range pts {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%g %g ", cmd, x(p.At), y(sr.value(p), sr.of))
			l.Points = append(l.Points, Circle{x(p.At), y(sr.value(p), sr.of), sr.title(p)})
		}
		l.Path = strings.TrimSpace(path.String())
		c.Lines = append(c.Lines, l)
	}
	c.Marks = 2 + 2*len(pts)
	return c
}

// nice rounds a maximum up to 1, 2 or 5 times a power of ten.
func nice(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trim(v float64) string { return strconv.FormatFloat(round(v, 2), 'f', -1, 64) }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// group writes n with thin spaces between thousands.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func signed(n int64) string {
	if n > 0 {
		return "+" + group(n)
	}
	return group(n)
}

// duration writes seconds as 1h2m, 3m4s or 5.6s.
func duration(secs float64) string {
	switch {
	case secs >= 3600:
		return fmt.Sprintf("%dh%02dm", int(secs)/3600, int(secs)%3600/60)
	case secs >= 60:
		return fmt.Sprintf("%dm%02ds", int(secs)/60, int(secs)%60)
	case secs >= 10:
		return fmt.Sprintf("%.0fs", secs)
	}
	return fmt.Sprintf("%.1fs", secs)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
