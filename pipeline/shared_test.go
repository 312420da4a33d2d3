package pipeline_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/jobfile"
	"github.com/socialcrawl/crawler/pipeline"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// A harvest several tests read is made once (a crawl of the everything job
// takes seconds under -race): each test gets a copy of its database
// (CREATE DATABASE ... TEMPLATE) and reads the sandbox that served it,
// which no one asks anything more.
type sharedHarvest struct {
	once sync.Once
	db   string // the harvest's database, copied for each test
	sum  *pipeline.Summary
	sb   *sandbox.Server
	err  error
}

// everythingHarvest is the everything job with archive on, at world day 0:
// TestEverySeedKindAndEdge reads what it stored and bought,
// TestReplayRebuildsRunFromArchive replays it.
var everythingHarvest sharedHarvest

// sharedDBs are the databases of the shared harvests, dropped after the
// package's tests (TestMain).
var sharedDBs struct {
	mu    sync.Mutex
	admin string // a URL of the server
	names []string
}

// everything returns a bundle on a copy of the everything harvest's
// database, with the sandbox that served it, and the harvest's summary.
func everything(t *testing.T) (*bundle, *pipeline.Summary) {
	t.Helper()
	h := &everythingHarvest
	h.once.Do(func() {
		h.sb, h.sum, h.db, h.err = harvestOnce(pgtest.DB(t), "archive: true\n"+fmt.Sprintf(everythingJob, secUID("bare_f7_g3")))
	})
	if h.err != nil {
		t.Fatalf("the shared everything harvest: %v", h.err)
	}
	return &bundle{pool: copyDB(t, h.db), sandbox: h.sb}, h.sum
}

// harvestOnce copies the empty migrated database of URL src into a
// database of its own (dropped after the package's tests), runs body (a
// job's sections) there against a new sandbox to its end, and returns the
// sandbox, the run's summary and the database's name.
func harvestOnce(src, body string) (*sandbox.Server, *pipeline.Summary, string, error) {
	ctx := context.Background()
	su, err := url.Parse(src)
	if err != nil {
		return nil, nil, "", errors.New("the test database's URL does not parse")
	}
	admin := os.Getenv(pgtest.EnvDatabaseURL)
	if admin == "" { // the package's own cluster
		au := *su
		au.Path = "/postgres"
		admin = au.String()
	}
	sharedDBs.mu.Lock()
	sharedDBs.admin = admin
	sharedDBs.mu.Unlock()
	name := "pipeline_shared_" + randHex()
	u, err := createFrom(ctx, admin, name, strings.TrimPrefix(su.Path, "/"))
	if err != nil {
		return nil, nil, "", err
	}
	sharedDBs.mu.Lock()
	sharedDBs.names = append(sharedDBs.names, name)
	sharedDBs.mu.Unlock()
	sb, err := sandbox.New(sandbox.Config{APIKeys: []string{testKey}})
	if err != nil {
		return nil, nil, "", err
	}
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	text := fmt.Sprintf("name: test\napi:\n  base_url: %s/api\n  key_env: CRAWLER_TEST_KEY\n  max_retries: 1\n%s", srv.URL, body)
	job, err := jobfile.Parse("test.yaml", []byte(text))
	if err != nil {
		return nil, nil, "", err
	}
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return nil, nil, "", err
	}
	defer pool.Close() // before the copies: a database is copied with no one on it
	b := &bundle{pool: pool, sandbox: sb}
	runID, err := pipeline.Start(ctx, pool, job)
	if err != nil {
		return nil, nil, "", err
	}
	sum, err := pipeline.Run(ctx, b.options(job, testKey), job, runID)
	if err != nil {
		return nil, nil, "", err
	}
	if sum.State != "done" {
		return nil, nil, "", fmt.Errorf("state %s: %s", sum.State, sum.Reason)
	}
	return sb, sum, name, nil
}

// copyDB returns a pool on a new copy of database name, closed and
// dropped when the test ends.
func copyDB(t *testing.T, name string) *pgxpool.Pool {
	t.Helper()
	sharedDBs.mu.Lock()
	admin := sharedDBs.admin
	sharedDBs.mu.Unlock()
	ctx := t.Context()
	cp := "pipeline_copy_" + randHex()
	u, err := createFrom(ctx, admin, cp, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dropDB(admin, cp); err != nil {
			t.Error(err)
		}
	})
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // before the drop
	return pool
}

// createFrom creates database name as a copy of database template on the
// server of URL admin, and returns its URL.
func createFrom(ctx context.Context, admin, name, template string) (string, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var fileCopy bool
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int >= 150000 AND NOT current_setting('fsync')::bool`).Scan(&fileCopy); err != nil {
		return "", err
	}
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	if fileCopy {
		sql += " STRATEGY file_copy" // as pgtest's copies
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return "", fmt.Errorf("copy database %s: %w", template, err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", errors.New("the server's URL does not parse")
	}
	u.Path = "/" + name
	return u.String(), nil
}

func dropDB(admin, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

func randHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dropShared drops the shared harvests' databases, on a server that
// outlives the tests (DATABASE_URL; the package's own cluster is gone).
func dropShared() {
	if os.Getenv(pgtest.EnvDatabaseURL) == "" {
		return
	}
	sharedDBs.mu.Lock()
	defer sharedDBs.mu.Unlock()
	for _, name := range sharedDBs.names {
		if err := dropDB(sharedDBs.admin, name); err != nil {
			fmt.Fprintf(os.Stderr, "drop the shared database %s: %v\n", name, err)
		}
	}
}
