// Package bench measures how close the crawler runs to the limits it works
// under, each figure a ratio to a limit measured in the same run: the
// upstream's quota (a token bucket in the sandbox), its latency, raw
// PostgreSQL COPY speed, the requests a crawl needs. It drives the real
// pieces: the pipeline in-process (pipeline.Start, pipeline.Run) against a
// sandbox served over HTTP, and the crawler binary as a child process where
// the figure is about that process (its memory, kill -9 and resume, several
// processes on one run).
//
// Run executes the workloads one after the other, each in a fresh database
// created on one PostgreSQL server (DATABASE_URL, or a throwaway pgtmp
// cluster), and returns a Report; Report.Markdown renders BENCHMARKS.md.
// Config.Smoke runs every workload for a second or two with small sizes, so
// a test can check that every figure is computed.
//
// Benchmarks report; they do not fail: a figure that misses its aim is shown
// as missed, and a workload that cannot run is reported with its error.
package bench
