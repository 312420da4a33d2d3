// Package migrations holds the database schema as goose SQL migrations,
// embedded in the binary, and applies them through goose's Provider with a
// Postgres session lock so processes starting together don't race.
//
// Schemas: crawl (runs and the frontier), shortvideo and photosocial (one per
// platform, named after the spec's neutral platform names).
package migrations
