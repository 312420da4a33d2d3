// Package db is the crawler's SQL boundary: every query the crawler sends
// lives in a .sql file, one "-- name: Xxx" block per query, written as SQL
// with named parameters (@run_id) the way sqlc files are: queries/*.sql
// here, and the sinks' upserts in sinks/*.sql, beside each sink's Go file,
// which package sinks embeds and adds with Register. The files are parsed
// once at init; each @name becomes a positional $n, and a name is unique
// across all of them. A rule that several statements share is written once,
// as a "-- template:" block (a text/template), and a "-- from:" line of a
// query names the template and its values: the line stands for the
// template's text. A query may be that line alone (retention's batched
// deletes, the stop_at_seen counts) or SQL around it (a sink's INSERT whose
// ON CONFLICT clause is a rule of sinks/upsert_rules.sql). The templates of
// one load serve all of its files: queries/*.sql share theirs, and the
// files of one Register call theirs. A template used by no query, a from:
// line naming no template of its load, or a key the template does not read
// or needs and is not given fails at init.
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
