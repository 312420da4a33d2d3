package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/sources/sandbox"
)

func cmdSandbox(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "sandbox", "", "Serve the deterministic local stand-in for the upstream API at http://ADDR/api.\nSee docs/sandbox.md for its world and conventions.")
	addr := fs.String("addr", "127.0.0.1:8099", "listen address HOST:PORT (port 0 picks a free one, printed on start)")
	keys := fs.String("api-key", "", "accepted API key(s), comma-separated (default: $SANDBOX_API_KEY)")
	pageSize := fs.Int("page-size", 0, "items per page of cursor lists (0: the sandbox default)")
	worldTime := fs.Int64("world-time", 0, "world clock in days: counters drift with it")
	newLogger := logFlags(fs)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("sandbox takes no arguments, got %q", fs.Args())
	}
	log, err := newLogger(env.stderr)
	if err != nil {
		return err
	}
	keyList := *keys
	if keyList == "" {
		keyList = env.getenv("SANDBOX_API_KEY")
	}
	if keyList == "" {
		return usagef("--api-key is required (or set SANDBOX_API_KEY)")
	}
	srv, err := sandbox.New(sandbox.Config{
		APIKeys:   strings.Split(keyList, ","),
		PageSize:  *pageSize,
		WorldTime: *worldTime,
		Logger:    log,
	})
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("--addr %s: %v", *addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.stdout, "sandbox: serving http://%s/api (usage at /debug/usage)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
