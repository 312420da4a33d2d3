// Command simulate runs the simulator of combined nights (package
// testkit/sim) on many seeds and prints what it found.
//
//	go run ./tools/simulate -seeds 1000            # seeds 1..1000, profile full
//	go run ./tools/simulate -profile full -seed 1234 -v   # replay one seed
//
// It uses the PostgreSQL server of DATABASE_URL (a database per seed) or
// starts a throwaway cluster. Each failing seed prints its violations and
// the one command that replays it. Exit codes: 0 no violation, 1 some
// violation, 2 bad flags, 3 the harness failed (no PostgreSQL, the build).
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/socialcrawl/crawler/testkit/pgtmp"
	"github.com/socialcrawl/crawler/testkit/sim"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Int64("seed", 0, "run this one seed (a replay); 0: run -seeds seeds from -start")
	only := fs.String("list", "", "run these seeds, comma-separated (a summary's failing seeds, again)")
	seeds := fs.Int("seeds", 100, "how many seeds to run")
	start := fs.Int64("start", 1, "the first seed")
	profile := fs.String("profile", "full", "the scenarios' sizes: full or short (make test's)")
	plain := fs.Bool("plain", false, "the scenarios as they were before the blind spots of issue 33 (default concurrency, billed abandoned requests, real kill timing): to replay an older finding")
	parallel := fs.Int("parallel", 2, "seeds run at once")
	verbose := fs.Bool("v", false, "print each seed's scenario and nights")
	print := fs.Bool("print", false, "print the seeds' scenarios and run nothing")
	keep := fs.Bool("keep", false, "keep each seed's database (with -v its name is printed), to look into with DATABASE_URL's server")
	crawlerLog := fs.String("crawler-log", "warn", "the crawlers' --log-level (debug, info, warn, error): their last lines are quoted in exit and liveness violations")
	fs.DurationVar(&sim.NightTimeout, "night-timeout", sim.NightTimeout, "a night not over after this is a liveness violation")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	p, ok := sim.Profiles[*profile]
	p.Plain = *plain
	replayProfile := p.Name // what a replay command names
	if p.Plain {
		replayProfile += " -plain"
	}
	if !ok || *seeds < 1 || *parallel < 1 || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate: bad flags (profile: one of %v; -seeds and -parallel at least 1; no arguments)\n", slices.Sorted(maps.Keys(sim.Profiles)))
		return 2
	}
	list := make([]int64, 0, *seeds)
	switch {
	case *seed != 0:
		list = append(list, *seed)
	case *only != "":
		for f := range strings.FieldsFuncSeq(*only, func(r rune) bool { return r == ',' || r == ' ' || r == '[' || r == ']' }) {
			sd, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				fmt.Fprintf(stderr, "simulate: -list: %q is not a seed\n", f)
				return 2
			}
			list = append(list, sd)
		}
	default:
		for i := range int64(*seeds) {
			list = append(list, *start+i)
		}
	}

	if *print {
		for _, sd := range list {
			s, err := sim.Generate(sd, p)
			if err != nil {
				fmt.Fprintf(stderr, "simulate: seed %d: %v\n", sd, err)
				return 3
			}
			fmt.Fprintln(stdout, s)
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serverURL := os.Getenv("DATABASE_URL")
	if serverURL == "" {
		c, err := pgtmp.Start(ctx, pgtmp.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 3
		}
		defer c.Close()
		serverURL = c.URL()
	}
	env, err := sim.NewEnv(ctx, serverURL)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 3
	}
	defer env.Close()
	fmt.Fprintf(stdout, "simulating %d seeds (profile %s, %d at once)\n", len(list), p.Name, *parallel)

	var (
		mu       sync.Mutex
		failed   []int64
		broken   []int64
		byInv    = map[string]int{}
		answered int
		done     int // seeds run to their end
		busy     time.Duration
		twins    = map[string][2]int{} // kind -> run, compared
		// The blind spots issue 33 closed: seeds drawing each, and what
		// abandoned answers were charged.
		defaultConc, billAbandoned, realKills int
		abandoned                             int64
		overBy                                int
		estimated                             int   // nights unspent by design
		estimatedLeft                         int64 // and the credits they left
	)
	begin := time.Now()
	next := make(chan int64)
	var wg sync.WaitGroup
	for range *parallel {
		wg.Go(func() {
			for sd := range next {
				var log io.Writer
				if *verbose {
					log = &prefixed{w: stdout, mu: &mu, prefix: fmt.Sprintf("[%d] ", sd)}
				}
				res, err := env.Run(ctx, sd, p, sim.Options{Log: log, CrawlerLog: *crawlerLog, Keep: *keep})
				mu.Lock()
				if ctx.Err() == nil {
					done++
				}
				report(stdout, sd, replayProfile, res, err)
				switch {
				case err != nil && ctx.Err() == nil:
					broken = append(broken, sd)
				case res != nil && len(res.Violations) > 0:
					failed = append(failed, sd)
				}
				if res != nil {
					answered += res.Answered
					busy += res.Elapsed
					for _, v := range res.Violations {
						byInv[v.Invariant]++
					}
					s := res.Scenario
					if s.Job.Workers == 0 {
						defaultConc++
					}
					if s.World.BillAbandoned {
						billAbandoned++
					}
					if s.RealKills {
						realKills++
					}
					abandoned += res.Abandoned
					overBy += res.OverByAbandoned
					estimated += res.Estimated
					estimatedLeft += res.EstimatedLeft
					for k, n := range res.Twins {
						t := twins[k]
						twins[k] = [2]int{t[0] + n, t[1] + res.Compared[k]}
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, sd := range list {
		if ctx.Err() != nil {
			break
		}
		next <- sd
	}
	close(next)
	wg.Wait()

	elapsed := time.Since(begin)
	if done < len(list) {
		fmt.Fprintf(stdout, "\ninterrupted: %d of %d seeds run", done, len(list))
	}
	fmt.Fprintf(stdout, "\n%d seeds in %s (%.1f s a seed, %d at once; %d requests answered)\n",
		done, elapsed.Round(time.Second), busy.Seconds()/float64(max(1, done)), *parallel, answered)
	for _, k := range slices.Sorted(maps.Keys(twins)) {
		fmt.Fprintf(stdout, "%s twins: %d nights, %d compared in full\n", k, twins[k][0], twins[k][1])
	}
	fmt.Fprintf(stdout, "seeds of the default concurrency %d, of real kill timing %d, billing abandoned requests %d (%d credits charged for answers abandoned; %d nights over max_credits by them)\n",
		defaultConc, realKills, billAbandoned, abandoned, overBy)
	fmt.Fprintf(stdout, "nights left unspent by design (a skipped visit's cost at most did not fit; docs/simulator.md): %d, %d credits\n",
		estimated, estimatedLeft)
	fmt.Fprintf(stdout, "%d seeds with violations, %d harness errors\n", len(failed), len(broken))
	for _, inv := range slices.Sorted(maps.Keys(byInv)) {
		fmt.Fprintf(stdout, "  %-14s %d\n", inv, byInv[inv])
	}
	slices.Sort(failed)
	if len(failed) > 0 {
		fmt.Fprintf(stdout, "failing seeds: %v\n", failed)
	}
	return cmp.Or(map[bool]int{true: 3}[len(broken) > 0], map[bool]int{true: 1}[len(failed) > 0])
}

// report prints a seed's outcome: a line, and for a failing seed its
// violations and the command that replays it.
func report(w io.Writer, seed int64, profile string, res *sim.Result, err error) {
	switch {
	case err != nil:
		fmt.Fprintf(w, "seed %d: harness error: %v\n  replay: %s\n", seed, err, sim.Replay(seed, profile))
		if res == nil {
			return
		}
	case len(res.Violations) == 0:
		fmt.Fprintf(w, "seed %d: ok (%d nights, %d requests, %.1fs)\n", seed, len(res.Scenario.Nights), res.Answered, res.Elapsed.Seconds())
		return
	default:
		fmt.Fprintf(w, "seed %d: %d violations (%.1fs)\n", seed, len(res.Violations), res.Elapsed.Seconds())
	}
	for _, v := range res.Violations {
		fmt.Fprintf(w, "  %s\n", v)
	}
	fmt.Fprintf(w, "  replay: %s\n", sim.Replay(seed, profile))
}

// prefixed writes whole lines with a prefix, under mu.
type prefixed struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintf(p.w, "%s%s", p.prefix, b)
	return len(b), err
}
