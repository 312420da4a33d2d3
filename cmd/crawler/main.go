// Command crawler harvests the upstream social-data API into PostgreSQL.
// Run "crawler help" for its commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// memoryLimitDefault is the Go heap's soft limit unless GOMEMLIMIT sets
// one: the collector works harder as the heap nears it instead of letting
// garbage grow to twice the live data (docs/how-a-run-works.md#memory).
const memoryLimitDefault = 100 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimitDefault)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal the run winds down; a second one kills the
	// process the default way.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
