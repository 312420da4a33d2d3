// Package yamlstrict decodes a YAML document into Go structs strictly, for
// files people write: the document is parsed once into a yaml.Node tree and
// decoded by walking that tree against the Go types (reflection over their
// yaml tags), so every rejection carries the node's line and the full
// dotted key path ("seeds.shortvideo.profiles[2]"): unknown keys at any
// depth (with a did-you-mean hint), wrong types, integers that would wrap,
// NaN and Inf, strings that cannot be stored (CheckText), and documents
// past the value cap with aliases expanded. A field added to a struct is
// checked without code of its own; a type that needs its own reading
// implements Unmarshaler.
//
// The job file (package job) is its one user; it is a package of its own
// because it knows nothing of jobs.
package yamlstrict
