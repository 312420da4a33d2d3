// Package pgtest gives tests their own database on a real PostgreSQL server:
// never a mock, fast enough for t.Parallel everywhere.
//
// A package whose tests need the crawler's schema calls MainMigrated from
// TestMain (the migrations run once per package, not per test; Main and
// SetTemplate do the same for another schema), then DB or Pool in each test:
//
//	func TestMain(m *testing.M) { pgtest.MainMigrated(m) }
//
//	func TestStore(t *testing.T) {
//		t.Parallel()
//		pool, _ := pgtest.Pool(t) // a fresh database, dropped after the test
//		...
//	}
//
// # Where the server comes from
//
// DATABASE_URL (a postgres:// URL; its role needs CREATEDB) picks the server.
// When it is unset, Main starts a throwaway cluster with package pgtmp for the
// package's tests and removes it afterwards. make test runs all packages
// through tools/withpg, which starts one cluster and exports its URL
// as DATABASE_URL, so packages share it instead of starting one each.
//
// Each DB call creates a database named pgtest_<random> (about 30-150 ms),
// dropped WITH (FORCE) in t.Cleanup. With SetTemplate, the setup function
// runs once per test binary on a template database pgtest_tmpl_<random>
// unique to the process, so packages tested in parallel against one server do
// not race; DB clones it with CREATE DATABASE ... TEMPLATE (EmptyDB does not, for a
// test of a database never migrated). The template is
// dropped by Main when the server outlives the run. make test goes one step
// further (tools/withpg -migrated-template): the cluster comes with one
// database the migrations were applied to, named by PGTEST_MIGRATED_TEMPLATE,
// which MainMigrated's packages clone instead of migrating their own.
// A run killed before its
// cleanups leaves its pgtest_* databases behind on a DATABASE_URL server.
//
// # Failing, never skipping
//
// When PostgreSQL cannot be had (no DATABASE_URL and no binaries, a server
// that refuses connections, Main not called), DB, Pool and OwnCluster fail
// the test with the reason. They never skip: a test suite that silently skips
// its database tests, in CI (CI=true) or anywhere else, proves nothing.
// scripts/ensure-postgres.sh installs the binaries on Debian.
//
// # Outages
//
// Tests that stop and restart the server use OwnCluster, a private cluster
// with pgtmp.Cluster's StopImmediate and Restart, closed after the test.
//
// URLs with passwords are never logged: errors name databases, not URLs.
package pgtest
