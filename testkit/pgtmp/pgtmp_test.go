package pgtmp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

func TestClusterLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	begin := time.Now()
	c, err := pgtmp.Start(ctx, pgtmp.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster started in %v", time.Since(begin))
	t.Cleanup(func() { _ = c.Close() })

	wantURL := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port())
	if c.URL() != wantURL {
		t.Errorf("URL() = %q, want %q", c.URL(), wantURL)
	}
	conn := connect(t, c.URL())
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
	var fsync string
	if err := conn.QueryRow(ctx, "show fsync").Scan(&fsync); err != nil || fsync != "off" {
		t.Errorf("fsync = %q, %v; want off", fsync, err)
	}
	// Committed just before the outage: must survive it.
	if _, err := conn.Exec(ctx, "create table t (n int); insert into t select generate_series(1, 1000)"); err != nil {
		t.Fatal(err)
	}

	if err := c.StopImmediate(ctx); err != nil {
		t.Fatalf("StopImmediate: %v", err)
	}
	if err := conn.Ping(ctx); err == nil {
		t.Error("open connection still works after StopImmediate")
	}
	if _, err := pgx.Connect(ctx, c.URL()); err == nil {
		t.Error("new connection succeeded after StopImmediate")
	}
	if err := c.StopImmediate(ctx); err != nil {
		t.Errorf("StopImmediate on a stopped server: %v", err)
	}

	begin = time.Now()
	if err := c.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	t.Logf("cluster restarted in %v", time.Since(begin))
	if err := c.Restart(ctx); err == nil {
		t.Error("Restart of a running server succeeded")
	}
	conn = connect(t, c.URL())
	var n int
	if err := conn.QueryRow(ctx, "select count(*) from t").Scan(&n); err != nil || n != 1000 {
		t.Errorf("after restart: count = %d, %v; want 1000", n, err)
	}
	conn.Close(ctx)

	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster dir %s still exists after Close: %v", c.Dir(), err)
	}
	if _, err := pgx.Connect(ctx, c.URL()); err == nil {
		t.Error("connection succeeded after Close")
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A server that cannot start must fail Start quickly, with the server log in
// the error, and leave nothing behind.
func TestStartPortInUse(t *testing.T) {
	t.Parallel()
	parent := traversableDir(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	begin := time.Now()
	c, err := pgtmp.Start(t.Context(), pgtmp.Options{
		Dir:    parent,
		Logger: testLogger(t),
		Port:   l.Addr().(*net.TCPAddr).Port,
	})
	if err == nil {
		_ = c.Close()
		t.Fatal("Start succeeded on a port in use")
	}
	t.Logf("failed in %v: %v", time.Since(begin), err)
	if !strings.Contains(err.Error(), "could not") {
		t.Errorf("error lacks the server log tail: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("Start left %d entries in %s", len(entries), parent)
	}
}

// Start removes directories left by a process that died without Close.
func TestStartSweepsStaleClusters(t *testing.T) {
	t.Parallel()
	parent := traversableDir(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	stale := filepath.Join(parent, "pgtmp-stale")
	if err := os.MkdirAll(filepath.Join(stale, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	owner := fmt.Sprintf("%d %s\n", dead.Process.Pid, host)
	if err := os.WriteFile(filepath.Join(stale, "owner"), []byte(owner), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(parent, "pgtmp-foreign") // no owner file: not ours to remove
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}

	c, err := pgtmp.Start(t.Context(), pgtmp.Options{Dir: parent, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale cluster dir not removed: %v", err)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("dir without owner file was touched: %v", err)
	}
	if filepath.Dir(c.Dir()) != parent {
		t.Errorf("cluster dir %s not under %s", c.Dir(), parent)
	}
}

func TestStartValidatesOptions(t *testing.T) {
	t.Parallel()
	_, err := pgtmp.Start(t.Context(), pgtmp.Options{Port: 70000})
	if err == nil || !strings.Contains(err.Error(), "Options.Port") {
		t.Errorf("Start(Port: 70000) error = %v, want one naming Options.Port", err)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// traversableDir returns an empty directory the postgres user can reach when
// the tests run as root (t.TempDir is mode 0700).
func traversableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p := dir; p != os.TempDir() && p != filepath.Dir(p); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// MigratedTemplate lends make test's template only to a harness on the
// server it was made on (DATABASE_URL's), never to one on another server.
func TestMigratedTemplate(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:5433/postgres")
	t.Setenv(pgtmp.EnvMigratedTemplate, "")
	if got := pgtmp.MigratedTemplate("postgres://u@127.0.0.1:5433/other"); got != "" {
		t.Errorf("unset: %q", got)
	}
	t.Setenv(pgtmp.EnvMigratedTemplate, "pgtest_migrated")
	for server, want := range map[string]string{
		"postgres://u@127.0.0.1:5433/pgtest_abc": "pgtest_migrated",
		"postgres://u@127.0.0.1:5434/postgres":   "", // a harness's own cluster
		"not a url\x7f":                          "",
	} {
		if got := pgtmp.MigratedTemplate(server); got != want {
			t.Errorf("MigratedTemplate(%q) = %q, want %q", server, got, want)
		}
	}
}
