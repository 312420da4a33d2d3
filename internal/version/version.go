// Package version says which crawler is running, from the build info the
// Go toolchain embeds (module version, VCS revision and time, dirty flag),
// so no release step has to stamp it.
package version

import (
	"runtime/debug"
	"strings"
)

// Info is the crawler's build.
type Info struct {
	Module   string // the main module's version: v1.2.3, a pseudo-version, or (devel)
	Revision string // VCS revision, "" when built outside a checkout
	Time     string // commit time, RFC 3339
	Dirty    bool   // built with uncommitted changes
	Go       string // toolchain
}

// Read returns the build info of the running binary.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Module: "(unknown)"}
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Module: bi.Main.Version, Go: bi.GoVersion}
	if in.Module == "" {
		in.Module = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Dirty = s.Value == "true"
		}
	}
	return in
}

// String is the one-line form recorded with each run: the module version,
// then the revision (12 hex digits) and its time, and "dirty" if so, e.g.
// "(devel) rev 3f2a9c1b7d4e 2026-05-01T10:00:00Z dirty".
func (in Info) String() string {
	var b strings.Builder
	b.WriteString(in.Module)
	if in.Revision != "" {
		b.WriteString(" rev ")
		b.WriteString(in.Revision[:min(12, len(in.Revision))])
	}
	if in.Time != "" {
		b.WriteString(" " + in.Time)
	}
	if in.Dirty {
		b.WriteString(" dirty")
	}
	return b.String()
}

// String is Read().String().
func String() string { return Read().String() }
