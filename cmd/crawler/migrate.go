package main

import (
	"context"
	"fmt"
)

func cmdMigrate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "migrate", "", "Apply every pending migration to the database in DATABASE_URL.\n`crawler run` applies them too.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("migrate takes no arguments, got %q", fs.Args())
	}
	pool, err := connect(ctx, env, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	applied, err := migrate(ctx, pool)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(env.stdout, "migrations: up to date")
	} else {
		fmt.Fprintf(env.stdout, "migrations: applied %v\n", applied)
	}
	return nil
}
