package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/childproc"
	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

// Env is what every seed's simulation shares: a PostgreSQL server (a
// database per seed, cloned from one migrated once), the crawler binary
// and a scratch directory.
type Env struct {
	base  *url.URL
	admin *pgxpool.Pool
	tmpl  string // the migrated template database
	lent  bool   // tmpl is pgtmp.MigratedTemplate's: not ours to drop
	bin   string // the crawler binary
	dir   string // scratch: job files, seed files, the binary

	fileCopyOnce   sync.Once
	fileCopyClause string // see fileCopy

	mu    sync.Mutex
	spare []string // emptied databases of finished seeds, see release
}

// NewEnv prepares an Env on the server of serverURL (any database of it;
// the role needs CREATEDB): it builds the crawler binary (go build, from
// the module the caller runs in) and migrates a template database.
func NewEnv(ctx context.Context, serverURL string) (*Env, error) {
	base, err := url.Parse(serverURL)
	if err != nil {
		return nil, errors.New("sim: the server URL does not parse")
	}
	e := &Env{base: base}
	ok := false
	defer func() {
		if !ok {
			e.Close()
		}
	}()
	if e.dir, err = os.MkdirTemp("", "sim-"); err != nil {
		return nil, err
	}
	e.bin = filepath.Join(e.dir, "crawler")
	// The build and the migrations take seconds each: side by side.
	built := make(chan error, 1)
	go func() {
		if bin := childproc.PrebuiltCrawler(); bin != "" {
			e.bin = bin
			built <- nil
			return
		}
		build := exec.CommandContext(ctx, "go", "build", "-o", e.bin, "github.com/socialcrawl/crawler/cmd/crawler")
		if out, err := build.CombinedOutput(); err != nil {
			built <- fmt.Errorf("sim: go build the crawler: %v\n%s", err, out)
			return
		}
		built <- nil
	}()
	err = e.migrateTemplate(ctx)
	if berr := <-built; berr != nil {
		return nil, berr
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return e, nil
}

// migrateTemplate creates the template database and migrates it.
func (e *Env) migrateTemplate(ctx context.Context) (err error) {
	if e.admin, err = pgxpool.New(ctx, e.dbURL("postgres")); err != nil {
		return fmt.Errorf("sim: connect to the server: %w", err)
	}
	if lent := pgtmp.MigratedTemplate(e.base.String()); lent != "" {
		e.tmpl, e.lent = lent, true // make test's, migrated once for every package
		return nil
	}
	e.tmpl = "sim_tmpl_" + randomHex()
	if _, err := e.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{e.tmpl}.Sanitize()); err != nil {
		return fmt.Errorf("sim: create the template database: %w", err)
	}
	if err := migrations.UpURL(ctx, e.dbURL(e.tmpl)); err != nil {
		return fmt.Errorf("sim: migrate the template database: %w", err)
	}
	return nil
}

// Close drops the template database and the spare ones, and removes the
// scratch directory.
func (e *Env) Close() {
	if e.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for _, name := range e.spare {
			_ = e.dropDB(ctx, name)
		}
		if e.tmpl != "" && !e.lent {
			_ = e.dropDB(ctx, e.tmpl)
		}
		cancel()
		e.admin.Close()
	}
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
}

// dbURL is the URL of database name on the server.
func (e *Env) dbURL(name string) string {
	u := *e.base
	u.Path = "/" + name
	return u.String()
}

// freshDB is a database as the template is, named after label: an
// earlier seed's, emptied (release), or a new copy of the template.
func (e *Env) freshDB(ctx context.Context, label string) (string, error) {
	e.mu.Lock()
	if n := len(e.spare); n > 0 {
		name := e.spare[n-1]
		e.spare = e.spare[:n-1]
		e.mu.Unlock()
		return name, nil
	}
	e.mu.Unlock()
	return e.cloneDB(ctx, label, "")
}

// release empties a seed's database for the next seed's freshDB, or drops
// it when it cannot be emptied (pgtmp.Empty).
func (e *Env) release(ctx context.Context, name string) {
	if err := pgtmp.Empty(ctx, e.admin, e.dbURL(name), name); err != nil {
		_ = e.dropDB(ctx, name)
		return
	}
	e.mu.Lock()
	e.spare = append(e.spare, name)
	e.mu.Unlock()
}

// cloneDB creates a database copied from src (the template when src is
// ""), named after label. Nobody may be connected to src: a killed
// crawler's backends take a moment to go, so the copy is retried.
func (e *Env) cloneDB(ctx context.Context, label, src string) (string, error) {
	if src == "" {
		src = e.tmpl
	}
	name := "sim_" + label + "_" + randomHex()
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{src}.Sanitize() + e.fileCopy(ctx)
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if _, err = e.admin.Exec(ctx, sql); err == nil {
			return name, nil
		}
		if !strings.Contains(err.Error(), "being accessed by other users") {
			break
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("sim: copy database %s: %w", src, err)
}

// fileCopy is pgtmp.FileCopy, asked once.
func (e *Env) fileCopy(ctx context.Context) string {
	e.fileCopyOnce.Do(func() {
		e.fileCopyClause = pgtmp.FileCopy(ctx, e.admin)
	})
	return e.fileCopyClause
}

func (e *Env) dropDB(ctx context.Context, name string) error {
	_, err := e.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

func randomHex() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
