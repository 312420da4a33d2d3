package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/migrations"
)

// connect opens a pool on DATABASE_URL and checks it answers. Errors name
// the host and database, never the password.
func connect(ctx context.Context, env *cliEnv, maxConns int) (*pgxpool.Pool, error) {
	dsn := env.getenv("DATABASE_URL")
	if dsn == "" {
		return nil, usagef("DATABASE_URL is not set: export the PostgreSQL URL, e.g. postgres://user@host:5432/db")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, usagef("DATABASE_URL is not a valid PostgreSQL URL: %s", scrub(err.Error(), dsn))
	}
	where := fmt.Sprintf("%s:%d (database %q, user %q)", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, cfg.ConnConfig.User)
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "crawler"
	cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	if maxConns > 0 {
		cfg.MaxConns = int32(maxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot use PostgreSQL at %s: %s", where, scrub(err.Error(), dsn))
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		if ctx.Err() != nil {
			// SIGINT or SIGTERM while connecting: nothing was started.
			return nil, interruptedError{"while connecting to PostgreSQL"}
		}
		if db.TooManyConnections(err) {
			return nil, fmt.Errorf("PostgreSQL at %s has no free connection slot (SQLSTATE 53300): a crawler process opens at most database.max_conns "+
				"connections (%d here); lower it or run fewer processes, raise the server's max_connections, or put PgBouncer in front (docs/pgbouncer.md): %s",
				where, cfg.MaxConns, scrub(err.Error(), dsn))
		}
		return nil, fmt.Errorf("cannot reach PostgreSQL at %s: %s", where, scrub(err.Error(), dsn))
	}
	return pool, nil
}

// interruptedError is a command stopped by a signal before it started
// anything: exit 3, as a stopped run, since running it again goes on.
type interruptedError struct{ when string }

func (e interruptedError) Error() string { return "interrupted " + e.when }

func (e interruptedError) Resumable() string { return "nothing was started: run the command again" }

// connectCurrent connects for a command that only reads: it fails, changing
// nothing, when the database's schema is not this binary's.
func connectCurrent(ctx context.Context, env *cliEnv, maxConns int) (*pgxpool.Pool, error) {
	pool, err := connect(ctx, env, maxConns)
	if err != nil {
		return nil, err
	}
	if err := schemaCurrent(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// scrub removes the password of dsn from msg, should a driver echo it.
func scrub(msg, dsn string) string {
	// ParseConfig reads both URL and keyword/value forms.
	if cfg, err := pgxpool.ParseConfig(dsn); err == nil && cfg.ConnConfig.Password != "" {
		msg = strings.ReplaceAll(msg, cfg.ConnConfig.Password, "xxxxx")
	}
	return msg
}

func migrate(ctx context.Context, pool *pgxpool.Pool) ([]int64, error) {
	// Nothing pending (the usual start): skip goose, whose lock makes
	// processes starting together wait on each other for seconds.
	if pending, err := migrations.Pending(ctx, pool); err == nil && len(pending) == 0 {
		return nil, nil
	}
	applied, err := migrations.Up(ctx, pool)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "migrations: ") + " (applying migrations)")
	}
	return applied, nil
}
