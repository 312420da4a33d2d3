package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

// modulePath is the module the harness builds and tests.
const modulePath = "github.com/socialcrawl/crawler"

// env is what the workloads share: the PostgreSQL server their databases
// are created on, the crawler binary, the sizes, the log.
type env struct {
	cfg  Config
	log  *slog.Logger
	size sizes

	server  *url.URL      // the server's URL; databases are created next to it
	admin   *pgxpool.Pool // for CREATE and DROP DATABASE
	cluster *pgtmp.Cluster
	pgVer   string

	mu    sync.Mutex
	dbs   []string // created databases, dropped by close
	spare []string // smoke mode: emptied databases of earlier workloads, see dropDBs

	// A database migrated once, which freshDB clones (dropped by close,
	// not by dropDBs).
	tmplOnce sync.Once
	tmpl     string
	tmplLent bool // tmpl is pgtmp.MigratedTemplate's: not ours to drop
	tmplErr  error

	fileCopyOnce   sync.Once
	fileCopyClause string // see fileCopy

	binOnce sync.Once
	bin     string
	binDir  string
	binErr  error
}

func newEnv(ctx context.Context, cfg Config) (*env, error) {
	e := &env{cfg: cfg, log: cfg.Logger, size: fullSizes}
	if cfg.Smoke {
		e.size = smokeSizes
	}
	raw := cfg.DatabaseURL
	if raw == "" {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		c, err := pgtmp.Start(sctx, pgtmp.Options{Logger: e.log})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("bench: start PostgreSQL: %w", err)
		}
		e.cluster = c
		raw = c.URL()
		e.log.Info("throwaway PostgreSQL started", "port", c.Port())
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		e.close()
		return nil, errors.New("bench: DATABASE_URL is not a postgres:// URL")
	}
	e.server = u
	e.admin, err = pgxpool.New(ctx, raw)
	if err == nil {
		err = e.admin.QueryRow(ctx, "SHOW server_version").Scan(&e.pgVer)
	}
	if err != nil {
		e.close()
		return nil, fmt.Errorf("bench: connect to PostgreSQL at %s: %w", u.Host, err)
	}
	return e, nil
}

// close drops the databases created, stops the throwaway cluster if any and
// removes the crawler binary.
func (e *env) close() {
	if e.admin != nil {
		e.dropDBs()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for _, name := range e.spare {
			e.drop(ctx, name)
		}
		cancel()
		if e.tmpl != "" && !e.tmplLent {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if _, err := e.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{e.tmpl}.Sanitize()+" WITH (FORCE)"); err != nil {
				e.log.Warn("drop template database", "name", e.tmpl, "err", err)
			}
			cancel()
		}
		e.admin.Close()
	}
	if e.cluster != nil {
		if err := e.cluster.Close(); err != nil {
			e.log.Warn("stop PostgreSQL", "err", err)
		}
	}
	if e.binDir != "" {
		_ = os.RemoveAll(e.binDir)
	}
}

// dropDBs drops the databases created so far, so that a workload does not
// share the server with the leftovers of the previous ones. In smoke mode
// it empties them instead and keeps them for freshDB: a copy of the
// template cost the server ~0.27 s of CPU, emptying one ~0.03 s, and the
// smoke's workloads took ~40 of them (pgtmp.Empty). close drops them.
func (e *env) dropDBs() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, name := range e.dbs {
		if e.cfg.Smoke {
			err := pgtmp.Empty(ctx, e.admin, e.dbURL(name), name)
			if err == nil {
				e.spare = append(e.spare, name)
				continue
			}
			e.log.Warn("empty database", "name", name, "err", err)
		}
		e.drop(ctx, name)
	}
	e.dbs = nil
}

func (e *env) drop(ctx context.Context, name string) {
	if _, err := e.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		e.log.Warn("drop database", "name", name, "err", err)
	}
}

// freshDB creates a new migrated database, dropped by close, and returns
// its URL: a copy of a database migrated once per session (creating and
// migrating a database cost the server ~1 s of CPU and 2.6 s, a copy
// ~0.3 s), or in smoke mode one an earlier workload used, emptied.
func (e *env) freshDB(ctx context.Context, label string) (string, error) {
	e.mu.Lock()
	if n := len(e.spare); n > 0 {
		name := e.spare[n-1]
		e.spare = e.spare[:n-1]
		e.dbs = append(e.dbs, name)
		e.mu.Unlock()
		return e.dbURL(name), nil
	}
	e.mu.Unlock()
	e.tmplOnce.Do(func() {
		if lent := pgtmp.MigratedTemplate(e.server.String()); lent != "" && e.cluster == nil {
			e.tmpl, e.tmplLent = lent, true // make test's, migrated once for every package
			return
		}
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		name := "bench_tmpl_" + hex.EncodeToString(b)
		if _, err := e.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			e.tmplErr = fmt.Errorf("create database %s: %w", name, err)
			return
		}
		e.tmpl = name
		if err := migrations.UpURL(ctx, e.dbURL(name)); err != nil {
			e.tmplErr = fmt.Errorf("migrate %s: %w", name, err)
		}
	})
	if e.tmplErr != nil {
		return "", e.tmplErr
	}
	return e.cloneDB(ctx, label, e.dbURL(e.tmpl))
}

// cloneDB creates a copy of the database at template (a URL freshDB or
// cloneDB returned, with no connection open to it), dropped by close, and
// returns its URL.
func (e *env) cloneDB(ctx context.Context, label, template string) (string, error) {
	tu, err := url.Parse(template)
	if err != nil {
		return "", err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "bench_" + label + "_" + hex.EncodeToString(b)
	if _, err := e.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{strings.TrimPrefix(tu.Path, "/")}.Sanitize()+e.fileCopy(ctx)); err != nil {
		return "", fmt.Errorf("create database %s from %s: %w", name, tu.Path, err)
	}
	e.mu.Lock()
	e.dbs = append(e.dbs, name)
	e.mu.Unlock()
	return e.dbURL(name), nil
}

// fileCopy is pgtmp.FileCopy, asked once.
func (e *env) fileCopy(ctx context.Context) string {
	e.fileCopyOnce.Do(func() {
		e.fileCopyClause = pgtmp.FileCopy(ctx, e.admin)
	})
	return e.fileCopyClause
}

// dbURL is the URL of database name on the server.
func (e *env) dbURL(name string) string {
	u := *e.server
	u.Path, u.RawPath = "/"+name, ""
	if q := u.Query(); q.Has("dbname") || q.Has("database") {
		q.Del("dbname")
		q.Del("database")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// pool opens a pool on dsn sized for workers, as `crawler run` does.
func (e *env) pool(ctx context.Context, dsn string, workers int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(workers + 4)
	return pgxpool.NewWithConfig(ctx, cfg)
}

// crawlerBin builds ./cmd/crawler once into a temporary directory.
func (e *env) crawlerBin(ctx context.Context) (string, error) {
	e.binOnce.Do(func() {
		if e.cfg.CrawlerBin != "" {
			e.bin = e.cfg.CrawlerBin
			return
		}
		var err error
		e.binDir, err = os.MkdirTemp("", "bench-crawler-")
		if err != nil {
			e.binErr = err
			return
		}
		e.bin = filepath.Join(e.binDir, "crawler")
		begin := time.Now()
		if e.binErr = e.goBuild(ctx, e.bin, "./cmd/crawler"); e.binErr != nil {
			return
		}
		e.log.Info("crawler built", "path", e.bin, "took", time.Since(begin).Round(time.Millisecond))
	})
	return e.bin, e.binErr
}

// moduleDir is dir, or the directory above the working directory holding
// the module's go.mod.
func moduleDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if strings.Contains(string(b), "module "+modulePath+"\n") {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("bench: no go.mod of %s above %s", modulePath, wd)
		}
	}
}
