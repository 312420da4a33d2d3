package version

import (
	"runtime/debug"
	"testing"
)

func TestString(t *testing.T) {
	t.Parallel()
	cases := []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{}, "(devel)"},
		{debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3f2a9c1b7d4e5f60718293a4b5c6d7e8f9012345"},
			{Key: "vcs.time", Value: "2026-05-01T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, "v1.4.0 rev 3f2a9c1b7d4e 2026-05-01T10:00:00Z dirty"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"},
		}}, "(devel) rev abc"},
	}
	for _, c := range cases {
		if got := fromBuildInfo(&c.bi).String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.bi, got, c.want)
		}
	}
	if Read().Module == "" {
		t.Error("Read: empty module version")
	}
}
