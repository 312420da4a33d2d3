// Command withpg runs a command with DATABASE_URL pointing at PostgreSQL.
//
//	go run ./tools/withpg -- go test -race -count=1 ./...
//
// If DATABASE_URL is set, withpg just runs the command. Otherwise it starts a
// throwaway cluster (package pgtmp), runs the command with DATABASE_URL
// exported, and removes the cluster afterwards, also on SIGINT or SIGTERM
// (which it forwards to the command). It exits with the command's exit code:
// 128+N when the command died of signal N, 127 when it could not be run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

const (
	envDatabaseURL = "DATABASE_URL"
	startTimeout   = 2 * time.Minute

	exitUsage    = 2
	exitSetup    = 3
	exitNotFound = 127
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("withpg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "log cluster start and stop")
	migrated := fs.Bool("migrated-template", false, "with a cluster of its own, also create a database migrated by this tree's migrations and export its name as "+pgtmp.EnvMigratedTemplate+", for pgtest.MainMigrated's packages to clone")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: withpg [-v] [--] CMD [ARGS...]

Runs CMD with DATABASE_URL set. If DATABASE_URL is already set, CMD just
inherits it. Otherwise withpg starts a throwaway PostgreSQL cluster from the
local binaries (/usr/lib/postgresql/*/bin or PATH), exports its URL as
DATABASE_URL, and removes the cluster when CMD exits or on SIGINT/SIGTERM.
Exits with CMD's exit code.

Example:
  go run ./tools/withpg -- go test -race -count=1 ./...

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fs.Usage()
		return exitUsage
	}
	path, err := exec.LookPath(argv[0]) // before starting a cluster for nothing
	if err != nil {
		fmt.Fprintf(stderr, "withpg: %v\n", err)
		return exitNotFound
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// Signals are handled from the start, so that one arriving while the
	// cluster starts still removes it.
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		child    atomic.Pointer[os.Process]
		received atomic.Int32 // number of the first signal received
	)
	go func() {
		for sig := range sigc {
			if s, ok := sig.(syscall.Signal); ok {
				received.CompareAndSwap(0, int32(s))
			}
			cancel()
			if p := child.Load(); p != nil {
				_ = p.Signal(sig)
			}
		}
	}()

	env := os.Environ()
	if os.Getenv(envDatabaseURL) == "" {
		startCtx, cancelStart := context.WithTimeout(ctx, startTimeout)
		c, err := pgtmp.Start(startCtx, pgtmp.Options{Logger: logger})
		cancelStart()
		if err != nil {
			fmt.Fprintf(stderr, "withpg: %v\n", err)
			return signalCode(&received, exitSetup)
		}
		defer func() {
			if err := c.Close(); err != nil {
				fmt.Fprintf(stderr, "withpg: %v\n", err)
			}
		}()
		env = append(env, envDatabaseURL+"="+c.URL())
		if *migrated {
			name, err := migratedTemplate(ctx, c.URL())
			if err != nil {
				fmt.Fprintf(stderr, "withpg: %v\n", err)
				return signalCode(&received, exitSetup)
			}
			env = append(env, pgtmp.EnvMigratedTemplate+"="+name)
		}
		fmt.Fprintf(stderr, "withpg: PostgreSQL on 127.0.0.1:%d for %s\n", c.Port(), argv[0])
	}
	if ctx.Err() != nil { // interrupted while the cluster started
		return signalCode(&received, exitSetup)
	}

	cmd := exec.Command(path, argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "withpg: %v\n", err)
		return exitNotFound
	}
	child.Store(cmd.Process)
	err = cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	default:
		fmt.Fprintf(stderr, "withpg: %v\n", err)
		return 1
	}
}

// signalCode is 128+N if signal N interrupted withpg, else code.
func signalCode(received *atomic.Int32, code int) int {
	if sig := received.Load(); sig != 0 {
		return 128 + int(sig)
	}
	return code
}

// migratedTemplate creates a database on the cluster at serverURL and
// applies the migrations to it: one migration for every package of a
// make test run instead of one each (pgtmp.EnvMigratedTemplate). It
// returns the database's name; it goes with the cluster.
func migratedTemplate(ctx context.Context, serverURL string) (string, error) {
	const name = "pgtest_migrated"
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", fmt.Errorf("migrated template: %w", err)
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	conn.Close(ctx)
	if err != nil {
		return "", fmt.Errorf("migrated template: %w", err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", errors.New("migrated template: the cluster's URL does not parse")
	}
	u.Path = "/" + name
	if err := migrations.UpURL(ctx, u.String()); err != nil {
		return "", fmt.Errorf("migrated template: %w", err)
	}
	return name, nil
}
