// Package real is the sandbox's real dialect (Config.Preset =
// PresetScrapeCreators): the world of package world in the real service's
// terms, as docs/upstream.md and the vendor's sample responses describe it:
// its routes at the root, snake_case shapes, min_time and opaque cursors,
// costs above one credit, a per-key answer cache and its error bodies. The
// world answers once; this package reads the real parameters and writes
// the real shapes, reusing the contract's where the real service's are the
// same (package contract). It also serves the real service's own content
// endpoints, which the contract lacks (content.go).
package real
