// Package migrations holds the database schema as goose SQL migrations,
// embedded in the binary, and applies them through goose's Provider with a
// Postgres session lock so processes starting together don't race.
//
// Schemas: crawl (runs and the frontier), shortvideo and photosocial (one per
// platform, named after the spec's neutral platform names).
//
// Numbering: a new migration is numbered above every migration already on
// main (released.txt lists them), never in a gap below (00033, 00044-00051
// stay unused). goose runs without out-of-order migrations: a database at
// main's head refuses, on every `crawler migrate`, a migration numbered
// below its version. When a branch with migrations is merged to main,
// append their versions to released.txt. TestMigrationNumbering checks the
// rule against released.txt; TestNewestMigrationsApplyAtHead applies the
// migrations not on main to a database at main's head.
package migrations
