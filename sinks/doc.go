// Package sinks writes normalized rows into PostgreSQL.
//
// A Batch holds the rows of one fetched page; Write applies it inside the
// caller's transaction, so the pipeline can commit a page's rows together
// with its cursor advance and the tasks it discovered. Every write is an
// idempotent bulk upsert (unnest + ON CONFLICT ... WHERE ... IS DISTINCT
// FROM): writing the same page twice leaves the same content and touches no
// row the second time. Rows are sorted by key before writing so that workers
// writing overlapping batches lock rows in the same order.
package sinks
