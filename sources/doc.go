// Package sources is the HTTP client of the upstream social-data API.
//
// One Client serves one API key and is shared by every worker of a run, so
// the things that belong to the key live here: the token bucket and the
// pause that a 429 imposes on all workers (package ratecontrol), and
// retries. Errors are classified once,
// in classify, into the Class values the pipeline acts on.
//
// Decoding is tolerant of the real service's variations (see
// docs/upstream.md): counters as exact int64 whether they arrive as
// numbers or strings, has_more as a boolean or 0/1, cursors as strings or
// numbers, snake_case entries. Every item keeps its raw JSON so unknown
// fields are never lost.
package sources
