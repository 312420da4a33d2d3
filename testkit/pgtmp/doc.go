// Package pgtmp starts and controls throwaway PostgreSQL clusters for tests
// and demos, from the PostgreSQL binaries installed on the machine.
//
// Start runs initdb (trust authentication, superuser postgres, UTF8, C locale,
// no fsync) in a new directory under Options.Dir (or copies the output of
// its first run on the machine, kept under os.TempDir as
// pgtmpcache-initdb-*: a copy costs a quarter of initdb's CPU), then runs postgres on
// 127.0.0.1 with durability turned off for speed (fsync, synchronous_commit
// and full_page_writes off), and waits until a pgx connection succeeds:
//
//	c, err := pgtmp.Start(ctx, pgtmp.Options{})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	pool, err := pgxpool.New(ctx, c.URL())
//
// StopImmediate and Restart simulate an outage and recovery on the same port
// and data directory; Close stops the server and removes the directory.
//
// # Binaries
//
// initdb, pg_ctl and postgres are taken from the highest version under
// /usr/lib/postgresql/*/bin (Debian and Ubuntu packages), else from PATH.
// Start returns ErrNoBinaries when none are found; scripts/ensure-postgres.sh
// installs them on Debian.
//
// # Running as root
//
// initdb refuses to run as root. When the process is root, the cluster
// directory is handed to the postgres OS user and initdb, pg_ctl and postgres
// run with its credentials, so that user must exist and Options.Dir must be
// traversable by it (os.TempDir() usually is; a t.TempDir() is not).
//
// # Processes and leftovers
//
// The server is a child process of the caller, in its process group: a
// terminal Ctrl-C stops it too. Its output goes to postgres.log in the
// cluster directory; start errors include the tail of that log. A process
// killed before Close (a go test timeout, SIGKILL) leaves its directory
// behind; the next Start with the same parent directory on the same host
// stops any server still running there and removes it.
//
// The package supports Unix systems only.
package pgtmp
