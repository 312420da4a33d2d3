package bench

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"text/template"
	"time"
)

// Markdown renders the report as BENCHMARKS.md.
func (r *Report) Markdown() ([]byte, error) {
	var b bytes.Buffer
	if err := reportTmpl.Execute(&b, r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Row is one line of the figures table.
type Row struct {
	N int
	Figure
}

// Rows numbers the figures as the table shows them.
func (r *Report) Rows() []Row {
	var rows []Row
	for i, f := range r.Figures() {
		rows = append(rows, Row{N: i + 1, Figure: f})
	}
	return rows
}

// Failed lists the workloads that could not run.
func (r *Report) Failed() []WorkloadReport {
	var out []WorkloadReport
	for _, w := range r.Workloads {
		if w.Err != "" {
			out = append(out, w)
		}
	}
	return out
}

// worstGap is the figure that misses its aim by the most, relative to the
// aim; when every aim is met, the one with the least margin.
func (r *Report) worstGap() (Row, bool) {
	var worst Row
	found := false
	gap := math.Inf(-1)
	for _, x := range r.Rows() {
		if !x.Aim.Has() {
			continue
		}
		if g := x.Aim.Gap(x.Value); g > gap {
			worst, gap, found = x, g, true
		}
	}
	return worst, found
}

// WorstGapText is the closing paragraph: which figure is furthest from its
// aim, and why, in the workload's own measured terms.
func (r *Report) WorstGapText() string {
	w, ok := r.worstGap()
	if !ok {
		return "No figure with an aim was measured."
	}
	var b strings.Builder
	if w.Aim.Met(w.Value) {
		fmt.Fprintf(&b, "Every aim is met. The least margin is row %d, %s / %s: %s against an aim of %s.",
			w.N, w.Workload, w.Name, w.Shown(), w.Aim)
	} else {
		fmt.Fprintf(&b, "The worst gap is row %d, %s / %s: %s against an aim of %s.",
			w.N, w.Workload, w.Name, w.Shown(), w.Aim)
	}
	if w.Why != "" {
		b.WriteString(" Why: " + w.Why)
	}
	var missed []string
	for _, x := range r.Rows() {
		if x.Aim.Has() && !x.Aim.Met(x.Value) && x.N != w.N {
			missed = append(missed, fmt.Sprintf("row %d (%s: %s, aim %s)", x.N, x.Name, x.Shown(), x.Aim))
		}
	}
	if len(missed) > 0 {
		b.WriteString("\n\nAlso missed: " + strings.Join(missed, "; ") + ".")
	}
	return b.String()
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"cell": cell,
	"date": func(t time.Time) string { return t.Format("2006-01-02 15:04 MST") },
	"dur": func(d time.Duration) string {
		if d < time.Minute {
			return d.Round(100 * time.Millisecond).String()
		}
		return d.Round(time.Second).String()
	},
}).Parse(`# Benchmarks

How close the crawler runs to the limits it works under. Every figure is a ratio to a limit
measured in the same run (the sandbox's quota and latency, raw PostgreSQL COPY, the pages a crawl
needs), or an absolute taken on the machine below. This file is written by the harness
(` + "`testkit/bench`" + `, run by ` + "`make bench`" + `); do not edit it by hand. Benchmarks report; they do not fail
the build. Absolute times drift on a shared machine: compare ratios.
{{if .Smoke}}
**Smoke mode**: every workload ran for a second or two with small sizes. These figures only show
that each one is computed; run ` + "`make bench`" + ` for real ones.
{{end}}
## Machine

| | |
|---|---|
| cores | {{.Machine.Cores}} ({{.Machine.CPU}}) |
| memory | {{.Machine.MemoryMB}} MB |
| Go | {{.Machine.Go}} |
| PostgreSQL | {{.Machine.PostgreSQL}}, {{.Machine.Server}} |
| OS | {{.Machine.OS}} |
| date | {{date .Machine.Date}} |
| command | ` + "`{{.Command}}`" + `, {{dur .Took}} in all |

## Figures

| # | workload | figure | value | aim | met? |
|---|---|---|---|---|---|
{{range .Rows}}| {{.N}} | {{cell .Workload}} | {{cell .Name}} | {{cell .Shown}} | {{cell .Aim.String}} | {{.Met}} |
{{end}}{{with .Failed}}
Workloads that could not run:
{{range .}}
- {{.Title}}: {{cell .Err}}
{{- end}}
{{end}}
### Reproduce

Each command runs one workload (or one ` + "`testing.B`" + ` benchmark) and prints its figures; ` + "`make bench`" + `
runs them all and rewrites this file. The harness uses DATABASE_URL when set, else a throwaway
PostgreSQL cluster.

| # | command | measured |
|---|---|---|
{{range .Rows}}| {{.N}} | ` + "`{{.Command}}`" + ` | {{cell .Detail}} |
{{end}}
## Workloads
{{range .Workloads}}
- **{{.Title}}** ({{dur .Took}}). {{.Setup}}
{{- end}}

## Worst gap and why

{{.WorstGapText}}
`))
