// Command bench runs the benchmark harness (package testkit/bench) and
// writes BENCHMARKS.md:
//
//	go run ./tools/bench                 # every workload, ~15 minutes
//	go run ./tools/bench -only quota     # one workload, figures on stdout
//	go run ./tools/bench -smoke          # every workload for a second or two
//
// It uses DATABASE_URL when set (the role needs CREATEDB), else starts a
// throwaway PostgreSQL cluster. The report goes to -out (default: none with
// -only or -smoke, BENCHMARKS.md otherwise); the figures are also printed.
// Exit code 0 unless the session could not run (benchmarks report, they do
// not fail): 1 on error, 2 on bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/socialcrawl/crawler/testkit/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	smoke := fs.Bool("smoke", false, "run every workload for a second or two with small sizes")
	only := fs.String("only", "", "comma-separated workloads to run: "+strings.Join(bench.Workloads(), ", "))
	out := fs.String("out", "", "write the report (markdown) there; default BENCHMARKS.md for a full run of everything")
	goBench := fs.Bool("gobench", true, "also run the testing.B benchmarks (go test -bench), workload gobench")
	benchTime := fs.String("benchtime", "2s", "-benchtime of the testing.B benchmarks")
	verbose := fs.Bool("v", false, "log progress to stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the harness (with the in-process pipelines and sandboxes) there, for go tool pprof")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	cfg := bench.Config{
		Smoke:       *smoke,
		DatabaseURL: os.Getenv("DATABASE_URL"),
		GoBench:     *goBench,
		BenchTime:   *benchTime,
		Command:     strings.TrimSpace("go run ./tools/bench " + strings.Join(args, " ")),
		Logger:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	if *out == "" && *only == "" && !*smoke {
		*out = "BENCHMARKS.md"
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench: cpu profile: %v\n", err)
			return 1
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	rep, err := bench.Run(ctx, cfg)
	if rep != nil {
		printFigures(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if *out != "" {
		md, err := rep.Markdown()
		if err == nil {
			err = os.WriteFile(*out, md, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench: write %s: %v\n", *out, err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", *out)
	}
	return 0
}

func printFigures(w io.Writer, rep *bench.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tworkload\tfigure\tvalue\taim\tmet?")
	for _, r := range rep.Rows() {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.N, r.Workload, r.Name, r.Shown(), r.Aim, strings.Trim(r.Met(), "*"))
	}
	_ = tw.Flush()
	for _, f := range rep.Failed() {
		fmt.Fprintf(w, "%s: could not run: %s\n", f.Title, f.Err)
	}
	fmt.Fprintf(w, "took %s\n", rep.Took.Round(1e8))
}
