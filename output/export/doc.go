// Package export writes what the crawler harvested to files a researcher
// can hand on: `crawler export` (docs/export.md). The analysts' views (or
// a chosen list of tables and views), as of a run or the latest, to Parquet
// or CSV, with a manifest beside them that says where the rows came from:
// the runs, what they cost, how complete each list is, the crawler's
// version, and a SHA-256 per file, which Verify checks.
//
// An export reads one REPEATABLE READ snapshot, so its files agree with
// each other and with the manifest. Rows come from a server-side cursor a
// batch at a time and go straight to the file: memory is bounded by the
// batch and one Parquet row group, whatever the table's size. The files are
// written under a staging directory beside the target and renamed into
// place once all of them and the manifest are on disk: an export that
// fails or is killed leaves nothing under the target's name. Rows are
// ordered by a key, the writers' settings are fixed and no file records
// the time it was written, so the same database and as-of give the same
// bytes.
package export
