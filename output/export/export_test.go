package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/testkit/childproc"
	"github.com/socialcrawl/crawler/testkit/exportcheck"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// The child process: the test binary run again with EXPORT_CHILD_DIR set
// exports and exits, so a test can measure its peak memory or kill it.
func TestMain(m *testing.M) {
	if dir := os.Getenv("EXPORT_CHILD_DIR"); dir != "" {
		os.Exit(child(dir))
	}
	pgtest.MainMigrated(m)
}

// child exports EXPORT_CHILD_TABLES of DATABASE_URL to dir with the
// crawler's memory limit (cmd/crawler's main). With EXPORT_CHILD_BLOCK it
// prints "writing" after its first batch and waits to be killed.
func child(dir string) int {
	debug.SetMemoryLimit(100 << 20)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pool.Close()
	if os.Getenv("EXPORT_CHILD_BLOCK") != "" {
		testHookBatch = func(int64) {
			fmt.Println("writing")
			select {}
		}
	}
	perFile, _ := strconv.ParseInt(os.Getenv("EXPORT_CHILD_ROWS_PER_FILE"), 10, 64)
	_, err = Export(ctx, pool, Options{Dir: dir, Objects: strings.Split(os.Getenv("EXPORT_CHILD_TABLES"), ","),
		Format: Parquet, RowsPerFile: perFile, Version: "test"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childExport runs `crawler export` on url's database and returns its peak
// resident memory in bytes.
func childExport(t testing.TB, url, dir, tables string, perFile int64) int64 {
	t.Helper()
	cmd := exec.Command(childproc.Crawler(t), "export", "--out", dir, "--tables", tables, "--rows-per-file", strconv.FormatInt(perFile, 10))
	cmd.Env = []string{"DATABASE_URL=" + url, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("crawler export: %v\n%s", err, out)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
}

// seedFollows writes n follow edges: 19-digit followers as text, JSON, and
// bigint run ids that run past 2^53 (a double would round them).
func seedFollows(t testing.TB, pool *pgxpool.Pool, n int) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `
		INSERT INTO shortvideo.follows (follower, followee, raw, first_seen_run, last_seen_run)
		SELECT (7000000000000000000 + g * 7919)::text, 'star_' || (g % 97),
		       jsonb_build_object('uniqueId', 'u' || g, 'nickname', 'Name ' || g, 'n', g),
		       9007199254740993 + g % 5, 9007199254740993 + g % 5 + 1
		FROM generate_series(1::bigint, $1) g`, n); err != nil {
		t.Fatal(err)
	}
}

// largeExport exports n seeded rows through a child process, reads every
// row back with xitongsys/parquet-go's reader against PostgreSQL, verifies the manifest's
// checksums, and returns the child's peak memory.
func largeExport(t testing.TB, n int, perFile int64) int64 {
	pool, url := pgtest.Pool(t)
	seedFollows(t, pool, n)
	dir := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	peak := childExport(t, url, dir, "shortvideo.follows", perFile)
	took := time.Since(start)
	m, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (int64(n) + perFile - 1) / perFile; int64(len(m.Objects[0].Files)) != want || m.Objects[0].Rows != int64(n) {
		t.Fatalf("%d rows in %d files, want %d in %d", m.Objects[0].Rows, len(m.Objects[0].Files), n, want)
	}
	conn, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	counts, err := exportcheck.Compare(context.Background(), conn.Conn(), dir, func(o string) string { return o })
	if err != nil {
		t.Fatal(err)
	}
	if counts["shortvideo.follows"] != int64(n) {
		t.Fatalf("compared %v", counts)
	}
	t.Logf("%d rows exported in %v (%.0f rows/s), %d files, peak RSS %.1f MiB", n, took.Round(time.Millisecond),
		float64(n)/took.Seconds(), len(m.Objects[0].Files), float64(peak)/(1<<20))
	return peak
}

// memoryBound is the peak resident memory `crawler export` stays under
// whatever the table's size (docs/export.md#memory): the binary, one FETCH
// batch (1000 rows) and one Parquet row group (16 MiB of values, more in
// the writer's column buffers) under the crawler's 100 MiB soft limit.
// Measured: 87 to 186 MiB for 200,000 to 500,000 rows, 125 MiB for ten
// million (BenchmarkExport10M).
const memoryBound = 256 << 20

// TestExportLarge exports half a million rows (200,000 under the race
// detector) in three part files with the crawler binary and reads each one
// back; the 10-million-row case is BenchmarkExport10M (make
// bench): the bound is the same, as memory does not grow with the rows.
func TestExportLarge(t *testing.T) {
	t.Parallel()
	n := largeRows
	if testing.Short() {
		n = 50_000
	}
	if peak := largeExport(t, n, int64(n)*2/5); peak > memoryBound {
		t.Errorf("peak RSS %.1f MiB over the %d MiB bound", float64(peak)/(1<<20), memoryBound>>20)
	}
}

// BenchmarkExport10M exports ten million rows once per iteration (b.N is 1
// at any benchtime short of the minutes it takes) and reports its peak
// memory, which must stay under the same bound as a million rows.
func BenchmarkExport10M(b *testing.B) {
	for b.Loop() {
		peak := largeExport(b, 10_000_000, DefaultRowsPerFile)
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		if peak > memoryBound {
			b.Errorf("peak RSS %.1f MiB over the %d MiB bound", float64(peak)/(1<<20), memoryBound>>20)
		}
	}
}

// TestExportKilled kills an export with SIGKILL while it writes: nothing is
// under the target's name; the next export to it succeeds and removes what
// the killed one left.
func TestExportKilled(t *testing.T) {
	t.Parallel()
	pool, url := pgtest.Pool(t)
	seedFollows(t, pool, 5000)
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EXPORT_CHILD_DIR="+dir, "EXPORT_CHILD_TABLES=shortvideo.follows", "EXPORT_CHILD_BLOCK=1", "DATABASE_URL="+url)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "writing\n" {
		cmd.Process.Kill()
		t.Fatalf("child: %q %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after SIGKILL: %s: %v", dir, err)
	}
	left, _ := filepath.Glob(filepath.Join(parent, ".out.export-*", "shortvideo.follows", "part-00000.parquet"))
	if len(left) != 1 {
		t.Fatalf("the killed export's staging: %v (want its half-written file there)", left)
	}
	if _, err := Export(context.Background(), pool, Options{Dir: dir, Objects: []string{"shortvideo.follows"}, Format: Parquet}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 || ents[0].Name() != "out" {
		t.Errorf("after the next export, %s holds %v", parent, ents)
	}
	if _, err := Verify(dir); err != nil {
		t.Error(err)
	}
}

// TestExportCancelled cancels an export's context after its first batch:
// it fails with the context's error and leaves nothing, staging included.
func TestExportCancelled(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	seedFollows(t, pool, 5000)
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	testHookBatch = func(int64) { cancel() }
	defer func() { testHookBatch = nil }()
	_, err := Export(ctx, pool, Options{Dir: filepath.Join(parent, "out"), Format: CSV, Objects: []string{"shortvideo.follows"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("export: %v, want context.Canceled", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("a cancelled export left %v", ents)
	}
}
