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
//
// The endpoints themselves, each call and the types its answer decodes
// into, are in package endpoints, built on what this package exports for
// them: a call's constructors (NewCall, ObjectCall,
// PageCall, ShapedPageCall), the answer they decode (Answer), and the
// tolerant types and readers (Text, Int64, Object, FirstText, ...).
package sources
