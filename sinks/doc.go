// Package sinks writes normalized rows into PostgreSQL.
//
// A Batch holds the rows of one fetched page, of any registered row type
// (Add(&b, rows...), Rows[R](&b)); Queue appends its statements to a
// pgx.Batch and Results reads their outcomes, so the pipeline sends a page's rows, the tasks it discovered and its
// cursor advance in one round trip and commits them together (the tests and
// the ceiling benchmark write through the same two calls).
// Every write is an idempotent bulk upsert (unnest + ON CONFLICT ... WHERE
// ... IS DISTINCT FROM): writing the same page twice leaves the same content
// and touches no row the second time. Rows are sorted by key before writing,
// and tables are written in one fixed order (parents before the rows whose
// foreign keys point at them), so workers writing overlapping batches lock
// rows in the same order and never deadlock.
//
// # Rows
//
// A sink is one file, <platform>_<entity>.go, and its upserts beside it in
// <platform>_<entity>.sql. A row type has one field per column, tagged with
// its name (`db:"column"`); its upsert is a "-- name:" query of the .sql
// file, whose unnest(@column::type[]) arrays are built from the tagged fields
// (prepare, through package db, checks both match at init). Its ON CONFLICT
// clause is, where a table follows one, a rule of upsert_rules.sql named
// in a "-- from:" line: RunSnapshot (per-run rows), NewestRunWins
// (entities: the newest run's answer wins, a replay only fills NULLs) and
// ListEntry (a list's bare entries, the whole statement). The Go file
// registers the table: upsert(name, order, query, key, keep), which dedupes
// the batch's rows of that type by key (keep: preferFull for entities whose
// source may be trimmed, fillNil for snapshots) and queues the named upsert
// (upsertRows where rows need more preparing, register(name, order, write)
// where they become another type), and order places the
// table after the tables its foreign keys point at (short-video 1xx,
// photo-sharing 2xx; entities x01-x09, the rows referencing them from x11;
// TestWriteOrderFollowsForeignKeys checks the orders against the schema).
// Nothing else lists the tables.
// Pointer fields are nullable, and a
// nil value never erases what a fuller row said (COALESCE): a video seen in a
// list carrying only its play count keeps its description. Entity rows whose
// source may be trimmed have a flag (SVUser.Profile, PSUser.Profile,
// Partial on videos, hashtags and songs) deciding whose raw JSON is kept.
// Counters go to per-run snapshot rows (one per entity per run).
// first_seen_run and last_seen_run span every run that wrote a row.
//
// A row referencing another entity of the same API answer (a search result's
// video, a feed entry's video, a snapshot's entity) needs that entity in the
// same batch or already stored: the schema has a foreign key. References to
// entities described by other requests (a video's author, a comment's author,
// the song of a song's videos list) are plain columns.
//
// # Keys
//
// QueryKey canonicalizes search strings, CommentKey derives the id the
// contract does not give comments, PostCode extracts a post's shortcode from
// any of its URL forms, and HighlightID strips the "highlight:" prefix.
package sinks
