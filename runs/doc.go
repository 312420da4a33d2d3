// Package runs reads the records of runs: a run's status and failures
// (crawler status), the list of runs (crawler runs), the report's data
// (crawler report) and what reuse saved, and rebuilds a run's rows from
// its page archive (crawler replay) through the kinds' own mappings, with
// no request upstream. It writes nothing but replayed rows: the runner
// (package pipeline) records the runs it reads.
package runs
