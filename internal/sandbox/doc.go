// Package sandbox is a faithful, deterministic stand-in for the social-data
// API of upstream-api.md: it serves the contract's 18 GET endpoints under
// /api so the client and the pipeline can be tested without credits.
//
// It writes its JSON from its own types and never imports the client
// (package sources), so a misspelled field in the client cannot pass by
// sharing a struct. Its world, tokens, faults and debug endpoints are
// documented in docs/sandbox.md; `crawler sandbox --help` lists its flags.
package sandbox
