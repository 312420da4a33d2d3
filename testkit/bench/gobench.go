package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Workload 8: the testing.B benchmarks of the hot paths, run with go test
// (DATABASE_URL pointing at the harness's server, so the packages' test
// harness creates its databases there).
var goBenchPackages = []string{"./sources/", "./sinks/", "./pipeline/", "./output/export/"}

func runGoBench(ctx context.Context, e *env) (*outcome, error) {
	out := &outcome{setup: fmt.Sprintf("`go test -run '^$' -bench . -benchtime %s -benchmem` in %s: decoding a followers page (sources), normalizing it (the pipeline's handler, HTTP served from memory), writing a page (sinks), leasing and finishing a task (pipeline), exporting ten million rows to Parquet in a child process, its peak memory (output/export).",
		e.cfg.BenchTime, strings.Join(goBenchPackages, " "))}
	dir, err := moduleDir(e.cfg.ModuleDir)
	if err != nil {
		return out, err
	}
	args := append([]string{"test", "-timeout", "60m", "-run", "^$", "-bench", ".", "-benchtime", e.cfg.BenchTime, "-benchmem", "-count", "1"}, goBenchPackages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DATABASE_URL="+e.server.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	for _, b := range parseGoBench(stdout.String()) {
		f := Figure{Name: b.Name, Value: b.NsPerOp / 1e3, Unit: "µs/op", Detail: b.detail(),
			Command: fmt.Sprintf("go run ./tools/withpg -- go test -run '^$' -bench '%s' -benchtime %s -benchmem %s", b.pattern(), e.cfg.BenchTime, b.Dir())}
		if m, ok := b.throughput(); ok {
			f.Text = fmt.Sprintf("%s µs/op (%s)", formatValue(f.Value), m)
		}
		out.figures = append(out.figures, f)
	}
	if runErr != nil {
		return out, fmt.Errorf("go test -bench: %v\n%s%s", runErr, tail(stdout.String(), 20), tail(stderr.String(), 20))
	}
	if len(out.figures) == 0 {
		return out, fmt.Errorf("go test -bench printed no benchmark:\n%s", tail(stdout.String(), 20))
	}
	return out, nil
}

// GoBench is one line of go test -bench output.
type GoBench struct {
	Package string // import path
	Name    string // without the -GOMAXPROCS suffix
	N       int64
	NsPerOp float64
	Metrics []Metric // every value/unit pair, in order
}

// Metric is a value with its unit, as go test prints it.
type Metric struct {
	Value float64
	Unit  string
}

// parseGoBench reads the benchmark lines of go test -bench output.
func parseGoBench(out string) []GoBench {
	var res []GoBench
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || len(fields)%2 != 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		b := GoBench{Package: pkg, Name: fields[0], N: n}
		if i := strings.LastIndexByte(b.Name, '-'); i > 0 {
			if _, err := strconv.Atoi(b.Name[i+1:]); err == nil {
				b.Name = b.Name[:i]
			}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			b.Metrics = append(b.Metrics, Metric{Value: v, Unit: fields[i+1]})
			if fields[i+1] == "ns/op" {
				b.NsPerOp = v
			}
		}
		res = append(res, b)
	}
	return res
}

// Dir is the package directory relative to the module, e.g. ./sinks/.
func (b GoBench) Dir() string {
	return "./" + strings.TrimPrefix(strings.TrimPrefix(b.Package, modulePath), "/") + "/"
}

// pattern selects exactly this benchmark with -bench.
func (b GoBench) pattern() string {
	parts := strings.Split(b.Name, "/")
	for i, p := range parts {
		parts[i] = "^" + p + "$"
	}
	return strings.Join(parts, "/")
}

// throughput is the benchmark's own rate metric (rows/s, tasks/s...), or
// else MB/s, if any.
func (b GoBench) throughput() (string, bool) {
	found := ""
	for _, m := range b.Metrics {
		if !strings.HasSuffix(m.Unit, "/s") {
			continue
		}
		s := formatValue(m.Value) + " " + m.Unit
		if m.Unit != "MB/s" {
			return s, true
		}
		found = s
	}
	return found, found != ""
}

func (b GoBench) detail() string {
	parts := []string{fmt.Sprintf("%d iterations", b.N)}
	for _, m := range b.Metrics {
		parts = append(parts, formatValue(m.Value)+" "+m.Unit)
	}
	return strings.Join(parts, ", ")
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n") + "\n"
}
