// Package plan answers `crawler plan JOB`: what a run of the job would do
// now (start, continue or join a run), the most credits it can cost (a
// bound from the kinds' edges and the job's limits), what it is expected
// to cost from the job's last completed run, and what reuse would skip.
// It reads the job file, the kinds and the database in a read-only
// transaction, and spends and writes nothing.
package plan
