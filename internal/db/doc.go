// Package db is the crawler's SQL boundary: every query the crawler sends
// lives in a .sql file, one "-- name: Xxx" block per query, written as SQL
// with named parameters (@run_id) the way sqlc files are: queries/*.sql
// here, and the sinks' upserts in sinks/*.sql, beside each sink's Go file,
// which package sinks embeds and adds with Register. The files are parsed
// once at init; each @name becomes a positional $n, and a name is unique
// across all of them. A family of statements that differ only by their
// table (retention's batched deletes) is written once, as a "-- template:"
// block of its file, and each of its queries is a "-- name:" block whose
// "-- from:" line names the template and its values.
//
// Callers bind a query to a parameter struct whose fields carry `db:"name"`
// tags: Prepare[P] for one-row statements, PrepareBulk[P, R] for bulk upserts
// whose arrays (unnest(@col::type[])) are built from a []R of typed rows.
// Both check at init that the struct and the query's parameters match one
// to one, and panic otherwise, so a renamed column or a missing query fails
// every test, not one code path in production.
//
// Why not sqlc, which river uses: sqlc would be a code generator in the
// build (its PostgreSQL parser is cgo and slow to build), and its batch
// support sends its own pgx.Batch per query, while the page commit
// (pipeline Frontier.Commit) must queue a page's upserts, its discovered
// tasks and the fenced cursor advance into one pgx.Batch: one round trip.
// Here a query is text plus a typed argument list, which any pgx call or
// batch takes.
package db
