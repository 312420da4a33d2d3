package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

// EnvMigratedTemplate names the environment variable holding the name of a
// database on DATABASE_URL's server that the migrations of the tree under
// test were applied to, and that nothing connects to: MainMigrated's
// packages then clone it instead of each migrating a template of its own
// (about 2 CPU-s each under -race, a dozen packages). tools/withpg
// -migrated-template (make test) creates it with the cluster; set it by
// hand only to a database migrated from the same tree.
const EnvMigratedTemplate = pgtmp.EnvMigratedTemplate

// EnvDatabaseURL names the environment variable holding the URL of the
// PostgreSQL server to create test databases on. Unset: Main starts a
// throwaway cluster.
const EnvDatabaseURL = "DATABASE_URL"

const (
	// StartTimeout bounds starting a throwaway cluster (Main, OwnCluster).
	StartTimeout = 2 * time.Minute
	// SetupTimeout bounds the template setup function.
	SetupTimeout = 5 * time.Minute
	// OpTimeout bounds creating or dropping one database.
	OpTimeout = 30 * time.Second
)

// h is the package state behind Main, SetTemplate and DB: the per-package
// test harness of one test binary.
var h harness

type harness struct {
	mu      sync.Mutex
	started bool     // Main ran
	base    *url.URL // server to create databases on; nil if baseErr
	baseErr error
	cluster *pgtmp.Cluster // the throwaway cluster Main started, if any

	adminOnce sync.Once
	admin     *pgxpool.Pool // connections to base, for CREATE/DROP DATABASE
	adminErr  error

	setup    func(ctx context.Context, url string) error
	migrated bool // setup is MainMigrated's: EnvMigratedTemplate may stand in for it
	tmplUsed bool // the first DB asked for the template: too late for SetTemplate
	tmplOnce sync.Once
	tmplName string // template database, dropped by close unless tmplLent
	tmplLent bool   // tmplName is EnvMigratedTemplate's, not this process's
	tmplErr  error

	shared []string // databases of Shared, dropped by close
}

// Main runs a package's tests against PostgreSQL; call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// It uses DATABASE_URL when set, else starts a throwaway cluster shared by the
// package's tests. It runs m.Run, then drops the template database (if any)
// and closes the cluster, and returns the exit code. A server that cannot be
// had does not stop the run: each DB call fails its test with the reason.
func Main(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse() // for testing.Verbose
	}
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	h.start(context.Background(), logger)
	code := m.Run()
	if err := h.close(); err != nil {
		logger.Error("pgtest: cleanup", "err", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// SetTemplate registers setup (e.g. running migrations) to prepare a template
// database once per test binary; DB then clones it for each test, so the
// setup cost is paid once per package, not per test. setup receives the URL of
// the template database and must close its connections before returning (a
// database cannot be cloned while in use). Call it before the first DB, e.g.
// in TestMain before Main; it panics if called twice or too late.
func SetTemplate(setup func(ctx context.Context, url string) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.setup != nil {
		panic("pgtest: SetTemplate called twice")
	}
	if h.tmplUsed {
		panic("pgtest: SetTemplate called after the first DB")
	}
	h.setup = setup
}

// DB returns the URL of a new database for this test, dropped (WITH FORCE)
// when the test ends. It is empty, or a copy of the template database when
// SetTemplate was called. DB fails the test when PostgreSQL cannot be had; it
// never skips. Safe for parallel tests.
func DB(t testing.TB) string {
	t.Helper()
	u, err := h.newDB(t, true)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// EmptyDB is DB without the template: a new empty database even when
// SetTemplate was called, for the few tests of what happens to a database
// never migrated (a package's other tests clone the template, cheaper
// than migrating each).
func EmptyDB(t testing.TB) string {
	t.Helper()
	u, err := h.newDB(t, false)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Pool is DB plus a pool connected to the new database, closed when the test
// ends. It also returns the database URL.
func Pool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	u := DB(t)
	pool, err := pgxpool.New(t.Context(), u)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the drop registered by DB
	ctx, cancel := context.WithTimeout(t.Context(), OpTimeout)
	defer cancel()
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("pgtest: connect to test database: %v", err)
	}
	return pool, u
}

// OwnCluster starts a private throwaway cluster for a test that stops or
// restarts the server, closed when the test ends. It fails the test when the
// cluster cannot be started; it never skips. It does not need Main.
//
// Its commits are durable (synchronous_commit=on): an outage test must not
// lose acknowledged commits to the throwaway cluster's speed settings.
func OwnCluster(t testing.TB) *pgtmp.Cluster {
	t.Helper()
	return OwnClusterWith(t, pgtmp.Options{DurableCommits: true})
}

// OwnClusterWith is OwnCluster started with opts (its Logger is the
// test's).
func OwnClusterWith(t testing.TB, opts pgtmp.Options) *pgtmp.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), StartTimeout)
	defer cancel()
	opts.Logger = testLogger(t)
	c, err := pgtmp.Start(ctx, opts)
	if err != nil {
		t.Fatalf("pgtest: own cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("pgtest: close own cluster: %v", err)
		}
	})
	return c
}

// start picks the server: DATABASE_URL, or a new throwaway cluster.
func (h *harness) start(ctx context.Context, logger *slog.Logger) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = true
	if raw := os.Getenv(EnvDatabaseURL); raw != "" {
		h.base, h.baseErr = parseURL(raw)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	c, err := pgtmp.Start(ctx, pgtmp.Options{Logger: logger})
	if err != nil {
		h.baseErr = fmt.Errorf("pgtest: %s is unset and no throwaway cluster could be started: %w", EnvDatabaseURL, err)
		logger.Warn(h.baseErr.Error())
		return
	}
	h.cluster = c
	h.base, h.baseErr = parseURL(c.URL())
}

// close drops the template database when the server outlives the run, then
// closes the admin pool and the throwaway cluster.
func (h *harness) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	if h.admin != nil {
		if h.cluster == nil {
			ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
			for _, name := range h.shared {
				errs = append(errs, dropDB(ctx, h.admin, name))
			}
			if h.tmplName != "" && !h.tmplLent {
				errs = append(errs, dropDB(ctx, h.admin, h.tmplName))
			}
			cancel()
		}
		h.admin.Close()
	}
	if h.cluster != nil {
		errs = append(errs, h.cluster.Close())
	}
	return errors.Join(errs...)
}

// server returns the base URL and the admin pool.
func (h *harness) server() (*url.URL, *pgxpool.Pool, error) {
	h.mu.Lock()
	started, base, baseErr := h.started, h.base, h.baseErr
	h.mu.Unlock()
	if !started {
		return nil, nil, errors.New("pgtest: no server: call pgtest.Main from the package's TestMain")
	}
	if baseErr != nil {
		return nil, nil, baseErr
	}
	h.adminOnce.Do(func() {
		pool, err := pgxpool.New(context.Background(), base.String())
		h.mu.Lock()
		defer h.mu.Unlock()
		h.admin, h.adminErr = pool, err
		if err != nil {
			h.adminErr = fmt.Errorf("pgtest: admin pool: %w", err)
		}
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	return base, h.admin, h.adminErr
}

// template returns the template database name ("" without SetTemplate),
// creating it on first use.
func (h *harness) template(base *url.URL, admin *pgxpool.Pool) (string, error) {
	h.tmplOnce.Do(func() {
		h.mu.Lock()
		setup, migrated, own := h.setup, h.migrated, h.cluster != nil
		h.tmplUsed = true
		h.mu.Unlock()
		if setup == nil {
			return
		}
		if lent := pgtmp.MigratedTemplate(base.String()); migrated && lent != "" && !own {
			h.mu.Lock()
			h.tmplName, h.tmplLent = lent, true
			h.mu.Unlock()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), SetupTimeout)
		defer cancel()
		// A name unique to this process: packages tested in parallel against
		// one DATABASE_URL each build their own template.
		name := "pgtest_tmpl_" + randomHex()
		err := createDB(ctx, admin, name, "")
		if err == nil {
			h.mu.Lock()
			h.tmplName = name
			h.mu.Unlock()
			err = setup(ctx, withDatabase(base, name))
		}
		if err != nil {
			h.mu.Lock()
			h.tmplErr = fmt.Errorf("pgtest: template setup: %w", err)
			h.mu.Unlock()
		}
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tmplName, h.tmplErr
}

// Clone returns the URL of a new database copied from the database at src
// (one DB or Clone made; CREATE DATABASE ... TEMPLATE), dropped (WITH
// FORCE) when the test ends: the state after some steps, to run two
// continuations from without repeating the steps. Nothing may be
// connected to src while it copies: close its pools first.
func Clone(t testing.TB, src string) string {
	t.Helper()
	u, err := parseURL(src)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if !strings.HasPrefix(name, "pgtest_") {
		t.Fatalf("pgtest: Clone copies a database DB made, not %q", name)
	}
	base, admin, err := h.server()
	if err == nil {
		src, err = h.create(t, base, admin, name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// Shared is DB for a database several tests read (a harvest made once):
// it outlives the test that asks for it and is dropped when Main ends.
// Each test copies it with Clone.
func Shared(t testing.TB) string {
	t.Helper()
	base, admin, err := h.server()
	var tmpl string
	if err == nil {
		tmpl, err = h.template(base, admin)
	}
	name := "pgtest_" + randomHex()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
		err = createDB(ctx, admin, name, tmpl)
		cancel()
	}
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.shared = append(h.shared, name)
	h.mu.Unlock()
	return withDatabase(base, name)
}

func (h *harness) newDB(t testing.TB, fromTemplate bool) (string, error) {
	base, admin, err := h.server()
	if err != nil {
		return "", err
	}
	var tmpl string
	if fromTemplate {
		if tmpl, err = h.template(base, admin); err != nil {
			return "", err
		}
	}
	return h.create(t, base, admin, tmpl)
}

// create makes a new database, a copy of tmpl when not "", dropped when
// the test ends, and returns its URL.
func (h *harness) create(t testing.TB, base *url.URL, admin *pgxpool.Pool, tmpl string) (string, error) {
	ctx, cancel := context.WithTimeout(t.Context(), OpTimeout)
	defer cancel()
	name := "pgtest_" + randomHex()
	if err := createDB(ctx, admin, name, tmpl); err != nil {
		return "", err
	}
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
		defer cancel()
		if err := dropDB(ctx, admin, name); err != nil {
			t.Errorf("%v", err)
		}
	})
	return withDatabase(base, name), nil
}

// fileCopy is pgtmp.FileCopy, asked once.
func fileCopy(ctx context.Context, admin *pgxpool.Pool) string {
	fileCopyOnce.Do(func() {
		fileCopyClause = pgtmp.FileCopy(ctx, admin)
	})
	return fileCopyClause
}

var (
	fileCopyOnce   sync.Once
	fileCopyClause string
)

func createDB(ctx context.Context, admin *pgxpool.Pool, name, template string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	sql += fileCopy(ctx, admin)
	if _, err := admin.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return nil
}

func dropDB(ctx context.Context, admin *pgxpool.Pool, name string) error {
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: drop database %s: %w", name, err)
	}
	return nil
}

// parseURL parses a postgres:// URL. Its errors never include the URL, which
// may hold a password.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // url.Error quotes the whole URL
		}
		return nil, fmt.Errorf("pgtest: %s is not a valid URL: %w", EnvDatabaseURL, err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("pgtest: %s must be a postgres:// URL, not scheme %q", EnvDatabaseURL, u.Scheme)
	}
	return u, nil
}

// withDatabase returns base pointing at database name; user, password, host
// and parameters are kept.
func withDatabase(base *url.URL, name string) string {
	u := *base
	u.Path = "/" + name
	u.RawPath = ""
	if q := u.Query(); q.Has("dbname") || q.Has("database") {
		// pgx lets these query parameters override the path.
		q.Del("dbname")
		q.Del("database")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// testLogger logs to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// MainMigrated is the TestMain of a package whose tests need the crawler's
// schema: each test's database is a clone of one migrated once (the
// migrations' Up), then Main runs the tests and the process exits with
// their code.
//
//	func TestMain(m *testing.M) { pgtest.MainMigrated(m) }
func MainMigrated(m *testing.M) {
	SetTemplate(func(ctx context.Context, url string) error { return migrations.UpURL(ctx, url) })
	h.mu.Lock()
	h.migrated = true
	h.mu.Unlock()
	os.Exit(Main(m))
}

// WaitNone polls count, a query of one count, until it reads 0, failing
// the test after 30 s with what it last read. For what the server does
// on its own after a client has gone: a session it ends, a statement a
// killed process sent that it still runs.
func WaitNone(t testing.TB, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, what, count string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int64
		err := q.QueryRow(ctx, count).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %d left (%v)", what, n, err)
		case <-tick.C:
		}
	}
}
