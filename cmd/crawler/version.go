package main

import (
	"context"
	"fmt"

	"github.com/socialcrawl/crawler/internal/version"
)

func cmdVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "version", "", "Print the crawler's version from its build info: module version, VCS revision\nand time, and \"dirty\" when built with uncommitted changes. Each run records\nthe version of every process that worked on it (crawler status, crawler runs).")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments, got %q", fs.Args())
	}
	in := version.Read()
	fmt.Fprintf(env.stdout, "crawler %s (%s)\n", in, in.Go)
	return nil
}
