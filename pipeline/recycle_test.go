package pipeline_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/internal/sandbox"
	"github.com/socialcrawl/crawler/testkit/pgtest"
	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

// dbRecycler hands tests databases in the migrated state: a new clone of
// the template when none is free, else one a finished test gave back,
// emptied first (resetDB), with its pool and the pool's connections. A new
// database and its pool's new backends cost the server far more than
// emptying a used one: a backend loads the catalogs it reads (~33 ms on
// this 2-core VM), a clone ~0.11 CPU-s with its drop (and two checkpoints).
// The clones outlive every test and are dropped when TestMain's
// pgtest.Main ends.
type dbRecycler struct {
	mu   sync.Mutex
	free []*pgxpool.Pool

	checkOnce sync.Once
}

// pkgDBs recycles the databases of the package's tests that take setup,
// setupWith or testPool, and TestEveryKeyTakesEffect's hundred small runs.
// Those tests leave nothing in a database but rows and sequence values
// (no DDL, no settings, transaction-level advisory locks only); a test
// that changes more takes a clone of its own (setupFresh, pgtest.Pool).
// One recycler for all: at most as many clones as tests run at once.
var pkgDBs = &dbRecycler{}

// get returns a database in the migrated state and the func that gives it
// back once the caller no longer uses it.
func (r *dbRecycler) get(t *testing.T) (*pgxpool.Pool, func()) {
	t.Helper()
	var pool *pgxpool.Pool
	for pool == nil {
		r.mu.Lock()
		n := len(r.free)
		if n > 0 {
			pool, r.free = r.free[n-1], r.free[:n-1]
		}
		r.mu.Unlock()
		if n == 0 {
			pool = r.clone(t)
			r.checkOnce.Do(func() { checkEmpty(t, pool) })
			break
		}
		if err := resetDB(context.Background(), pool); err != nil {
			// A test closed it: not given back.
			t.Logf("recycled database not reused: %v", err)
			pool.Close()
			pool = nil
		}
	}
	return pool, func() {
		if pool.Stat().AcquiredConns() > 0 {
			return // still in use by something the test left running
		}
		r.mu.Lock()
		r.free = append(r.free, pool)
		r.mu.Unlock()
	}
}

// clone returns a pool on a new clone of the template, owned by the
// whole package.
func (r *dbRecycler) clone(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.Shared(t))
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	return pool
}

// resetDB empties a migrated database back to the state of a new clone
// of the template (pgtmp.Reset).
func resetDB(ctx context.Context, pool *pgxpool.Pool) error { return pgtmp.Reset(ctx, pool) }

// checkEmpty fails unless every table resetDB empties is empty in pool's
// database (a new clone: the template has no rows resetDB would lose).
func checkEmpty(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	tables, err := pgtmp.Tables(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		var any bool
		if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT FROM "+table+")").Scan(&any); err != nil || any {
			t.Fatalf("the migrated template's %s has rows (%v): resetDB would not give back its state", table, err)
		}
	}
}

// testPool is a pool on a database in the migrated state (pkgDBs), given
// back when t ends.
func testPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, done := pkgDBs.get(t)
	t.Cleanup(done)
	return pool
}

// setupRecycled is setupWith on a database from dbs, given back when t
// ends (after its sandbox's server is closed).
func setupRecycled(t *testing.T, dbs *dbRecycler, cfg sandbox.Config) *bundle {
	t.Helper()
	pool, done := dbs.get(t)
	t.Cleanup(done)
	return setupOn(t, pool, cfg)
}
