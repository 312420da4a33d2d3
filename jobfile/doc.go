// Package jobfile is the job file: its schema (Job and its sections, the
// seeds and expansion edges declared by package kinds), strict decoding
// with file:line errors (internal/yamlstrict), defaults, and validation,
// down to each seed's value. A parsed Job is what the runner, crawler plan
// and the stored run record (crawl.runs.job, as JSON) work from.
//
// Bad input is refused whole: Parse returns every problem found as
// Errors, sorted by line, and nothing is written.
package jobfile
