package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// writeSeedJob writes a job seeding shortvideo.profiles from handles.txt
// (n distinct handles, written by lines) that only seeds: max_credits 0
// stops the run, resumable, before any request.
func writeSeedJob(t *testing.T, base string, n int, lines func(w *bufio.Writer, n int)) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "handles.txt"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	lines(w, n)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	job := filepath.Join(dir, "job.yaml")
	text := fmt.Sprintf("name: backfill\napi: {base_url: %s}\nlimits: {max_credits: 0}\nexpand: {}\nseeds:\n  shortvideo:\n    profiles_file: handles.txt\n", base)
	if err := os.WriteFile(job, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return job
}

// researchHandles writes n distinct handles of 22 bytes (23 with the
// newline: 2 million are 46 MB, like a research list).
func researchHandles(w *bufio.Writer, n int) {
	for i := range n {
		fmt.Fprintf(w, "research_account_%05x\n", i)
	}
}

// A bad line is a validation error (exit 2) at the seed file's line with
// the job-file key, before anything is written.
func TestSeedFileBadLineWritesNothing(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.DB(t)
	job := writeSeedJob(t, "http://127.0.0.1:9/api", 0, func(w *bufio.Writer, _ int) {
		w.WriteString("alice\n# a comment\n@@x\nbob\n")
	})
	p := startCrawler(t, dbURL, "run", job)
	if code := p.wait(); code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, p.stderr.String())
	}
	want := filepath.Join(filepath.Dir(job), "handles.txt") + `:3: seeds.shortvideo.profiles_file: "@@x" is not a handle (letters, digits, . and _, optionally after @)`
	if !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
	}
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname = 'crawl'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("schemas created by a rejected job: %d (%v)", n, err)
	}
}

// seedRun runs `crawler run job` (which only seeds: max_credits 0) to its
// stop and returns its wall time and peak RSS.
func seedRun(t *testing.T, dbURL, job string) (time.Duration, int64) {
	t.Helper()
	start := time.Now()
	p := startCrawler(t, dbURL, "run", "--log-format", "json", job)
	if code := p.wait(); code != exitSpent {
		t.Fatalf("exit %d, want %d (stopped by max_credits 0): %s", code, exitSpent, p.stderr.String())
	}
	took := time.Since(start)
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	return took, ru.Maxrss << 10 // KiB on Linux
}

// seeded is the run's tasks, distinct keys, and whether it is still
// seeding.
func seeded(t *testing.T, dbURL string, runID int64) (tasks, distinct int64, pending bool) {
	t.Helper()
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	ctx := context.Background()
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT key) FROM crawl.tasks WHERE run_id = $1`, runID).Scan(&tasks, &distinct); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT seeds_pending FROM crawl.runs WHERE id = $1`, runID).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	return tasks, distinct, pending
}

// A seed file seeds a run in memory independent of its size: the real
// binary's peak RSS seeding ten times the lines is within a few MB (held,
// 200,000 handles and their tasks would take some 30 MB). By default
// 20,000 against 200,000 lines (4.6 MB), which keeps the package within
// go test's timeout on a shared machine (PostgreSQL's inserts dominate
// the time);
// CRAWLER_SEED_2M=1 measures 200,000 against 2,000,000 (46 MB), the
// figures of docs/seed-files.md.
func TestSeedFileMillionsBoundedMemory(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds 220,000 tasks")
	}
	sizes := []int{20_000, 200_000}
	if os.Getenv("CRAWLER_SEED_2M") == "1" {
		sizes = []int{200_000, 2_000_000}
	}
	var rss [2]int64
	for i, n := range sizes {
		dbURL := pgtest.DB(t)
		job := writeSeedJob(t, "http://127.0.0.1:9/api", n, researchHandles)
		took, peak := seedRun(t, dbURL, job)
		tasks, distinct, pending := seeded(t, dbURL, 1)
		if tasks != int64(n) || distinct != tasks || pending {
			t.Fatalf("%d lines: %d tasks (%d distinct), pending %v; want %d", n, tasks, distinct, pending, n)
		}
		rss[i] = peak
		t.Logf("%d lines: seeded in %s, peak RSS %.1f MB", n, took.Round(10*time.Millisecond), float64(peak)/1e6)
	}
	// About 9 MB of the growth is the collector's pacing (13 MB once on a
	// loaded two-core make test); holding the lines would add some 30 MB.
	if grew := rss[1] - rss[0]; grew > 16<<20 {
		t.Errorf("peak RSS grew by %.1f MB from %d to %d lines; want it independent of the file's size (under 16 MB, about half of what holding them takes)", float64(grew)/1e6, sizes[0], sizes[1])
	}
}

// A crawler killed (SIGKILL) while seeding: the next `crawler run` of the
// job goes on with the same run from the last batch committed and ends
// with every line's task exactly once.
func TestSeedFileKilledThenResumed(t *testing.T) {
	t.Parallel()
	const n = 60_000
	dbURL := pgtest.DB(t)
	job := writeSeedJob(t, "http://127.0.0.1:9/api", n, researchHandles)
	p := startCrawler(t, dbURL, "run", job)
	conn := testConn(t, dbURL)
	defer conn.Close(context.Background())
	var offset int64
	deadline := time.Now().Add(60 * time.Second)
	for offset == 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
		// Before migrations or the run exist this errors: keep polling.
		_ = conn.QueryRow(context.Background(), `SELECT seed_offset FROM crawl.runs WHERE id = 1`).Scan(&offset)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait()
	tasks, _, pending := seeded(t, dbURL, 1)
	if !pending || tasks == 0 || tasks >= n {
		t.Fatalf("killed at offset %d: %d tasks, pending %v; want a partial seeding", offset, tasks, pending)
	}
	t.Logf("killed after %d of %d tasks", tasks, n)
	took, _ := seedRun(t, dbURL, job)
	tasks, distinct, pending := seeded(t, dbURL, 1)
	if tasks != n || distinct != n || pending {
		t.Errorf("resumed: %d tasks (%d distinct), pending %v; want %d", tasks, distinct, pending, n)
	}
	var runs int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM crawl.runs`).Scan(&runs); err != nil || runs != 1 {
		t.Errorf("%d runs (%v), want the one run continued", runs, err)
	}
	t.Logf("resumed in %s", took.Round(10*time.Millisecond))
}
