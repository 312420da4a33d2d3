package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// crawler prune refuses bad input with exit 2 before it connects.
func TestPruneBadInput(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"}
	for _, args := range [][]string{
		{"prune"},
		{"prune", "--older-than", "5x"},
		{"prune", "--older-than", "0d"},
		{"prune", "--older-than", "-3h"},
		{"prune", "--keep-runs", "-1"},
		{"prune", "--keep-runs", "2", "--batch", "0"},
		{"prune", "--keep-runs", "2", "extra"},
		{"prune", "--frobnicate"},
	} {
		if r := invoke(t, env, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
	if r := invoke(t, nil, "prune", "--keep-runs", "1"); r.code != exitUsage || !strings.Contains(r.stderr, "DATABASE_URL") {
		t.Errorf("no DATABASE_URL: %+v", r)
	}
	if r := invoke(t, nil, "prune", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage: crawler prune") || !strings.Contains(r.stdout, "-dry-run") {
		t.Errorf("--help: %+v", r)
	}
}

// Three runs of a job, then prune --keep-runs 1: the dry run prints what
// the prune then removes, crawler runs marks the pruned runs, and a second
// prune removes nothing.
func TestPruneCommand(t *testing.T) {
	t.Parallel()
	_, url := newSandbox(t)
	env := map[string]string{"DATABASE_URL": pgtest.DB(t), "CRAWLER_API_KEY": cliKey}
	job := writeJob(t, "name: prune-cli\napi: {base_url: "+url+"}\nexpand: {followers: {}}\nseeds: {shortvideo: {profiles: [cli_f70]}}\n")
	for range 3 {
		if r := invoke(t, env, "run", "--live", "off", job); r.code != 0 {
			t.Fatalf("run: %+v", r)
		}
	}
	dry := invoke(t, env, "prune", "--keep-runs", "1", "--dry-run")
	if dry.code != 0 || !strings.HasPrefix(dry.stdout, "would prune 2 runs (2 not pruned before): 1-2\n") {
		t.Fatalf("dry run: %+v", dry)
	}
	r := invoke(t, env, "prune", "--keep-runs", "1", "--batch", "2")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pruned 2 runs (2 not pruned before): 1-2\n") {
		t.Fatalf("prune: %+v", r)
	}
	// The same tables and rows; the dry run does no batch.
	zeroBatches := regexp.MustCompile(`(?m)\d+\s*$`)
	rows := func(s string) string {
		_, table, _ := strings.Cut(s, "\n")
		table = strings.Replace(table, "would remove", "removed", 1)
		return zeroBatches.ReplaceAllString(table, "")
	}
	if rows(dry.stdout) != rows(r.stdout) {
		t.Errorf("dry run:\n%s\nprune:\n%s", dry.stdout, r.stdout)
	}
	// 2 runs: 2 tasks each but run 2's followers walk (read by run 3's
	// stop_at_seen, should it be resumed).
	if !regexp.MustCompile(`(?m)^crawl\.tasks\s+3\s+2$`).MatchString(r.stdout) {
		t.Errorf("prune removed other than 3 tasks in 2 batches (run 1: 2, run 2: 1):\n%s", r.stdout)
	}
	list := invoke(t, env, "runs")
	if list.code != 0 || strings.Count(list.stdout, "done (pruned)") != 2 {
		t.Errorf("runs: %+v", list)
	}
	again := invoke(t, env, "prune", "--keep-runs", "1")
	if again.code != 0 || again.stdout != "no run to prune (2 runs pruned before, not read again)\n" {
		t.Errorf("second prune: %+v", again)
	}
	if r := invoke(t, env, "run", "--resume", "1", job); r.code != exitUsage || !strings.Contains(r.stderr, "pruned") {
		t.Errorf("resume of a pruned run: %+v", r)
	}
}
