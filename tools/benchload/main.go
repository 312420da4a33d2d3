// Command benchload is the client side of the benchmark workload 21
// (testkit/bench): it walks -lists follower lists of the sandbox at
// -base-url through one sources.Client with no settings (package
// listwalk) for -seconds, with the key in CRAWLER_API_KEY, and prints its
// figures as JSON: the process is the client alone, so the harness reads
// its memory, CPU and connections at thousands of requests in flight.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/socialcrawl/crawler/testkit/listwalk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	base := flag.String("base-url", "", "the sandbox's address, with /api")
	lists := flag.Int("lists", 2000, "lists walked at once, a goroutine each")
	seconds := flag.Int("seconds", 60, "how long to walk")
	flag.Parse()
	w, err := listwalk.New(*base, os.Getenv("CRAWLER_API_KEY"), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchload:", err)
		os.Exit(2)
	}
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, time.Duration(*seconds)*time.Second)
	defer cancel()
	w.Walk(ctx, *lists, "load")
	lo, hi, inFlight := w.Limits(begin, time.Now())
	st := w.Client.Concurrency()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{
		"pages": w.Pages.Load(), "errors": w.Errs.Load(), "seconds": time.Since(begin).Seconds(),
		"limit_min": lo, "limit_max": hi, "in_flight_mean": inFlight, "limit": st.Limit, "moves": len(st.Moves),
	})
}
