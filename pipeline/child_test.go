package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/testkit/childproc"
)

// runChild runs body (a job's sections, as b.job takes them) to its end
// with `crawler run` in a process of its own (crawlChild), on b's
// database and sandbox, and returns the run's id and the process's exit
// code and output.
func (b *bundle) runChild(t *testing.T, body string) (runID int64, code int, out string) {
	t.Helper()
	b.job(t, body) // the same job parses in-process, with its errors named
	text := fmt.Sprintf("name: test\napi:\n  base_url: %s\n  key_env: CRAWLER_TEST_KEY\n  max_retries: 1\n%s", b.baseURL, body)
	return crawlChild(t, b.pool, text, "CRAWLER_TEST_KEY")
}

// crawlChild runs the job of text to its end with `crawler run` (args
// before the job file's path) in a process built without the race
// detector, on pool's database, with the test key in the variable keyEnv,
// and returns the new run's id and the process's exit code and output. For
// a crawl whose every step the race detector already watches in-process in
// another test (the everything harvest): under -race a crawl costs about
// three times the CPU.
func crawlChild(t *testing.T, pool *pgxpool.Pool, text, keyEnv string, args ...string) (runID int64, code int, out string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(childproc.Crawler(t), append(append([]string{"run"}, args...), path)...)
	cmd.Env = []string{"DATABASE_URL=" + pool.Config().ConnString(), keyEnv + "=" + testKey, "PATH=" + os.Getenv("PATH")}
	o, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("crawler run: %v\n%s", err, o)
	}
	if err := pool.QueryRow(context.Background(), `SELECT max(id) FROM crawl.runs`).Scan(&runID); err != nil {
		t.Fatalf("crawler run: %v\n%s", err, o)
	}
	return runID, cmd.ProcessState.ExitCode(), string(o)
}

// migrateChild applies the migrations to the database at url with
// `crawler migrate` in a process built without the race detector: for a
// test on a cluster of its own (no migrated template to clone), where
// goose's parser under -race costs about a CPU-second a fresh migration
// (a 4 MB buffer a line from a sync.Pool that the race detector makes
// drop its items). What the migrations do is tested in package migrations.
func migrateChild(t testing.TB, url string) {
	t.Helper()
	cmd := exec.Command(childproc.Crawler(t), "migrate")
	cmd.Env = []string{"DATABASE_URL=" + url, "PATH=" + os.Getenv("PATH")}
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crawler migrate: %v\n%s", err, o)
	}
}
