package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	tests := []struct {
		name         string
		bi           *debug.BuildInfo
		ldVer, ldRev string
		want         Info
	}{
		{"clean checkout", vcs("abc123", "false"), "", "", Info{"(devel)", "abc123", "go1.27.3"}},
		{"modified tree", vcs("abc123", "true"), "", "", Info{"(devel)", "abc123-dirty", "go1.27.3"}},
		{"linker wins", vcs("abc123", "true"), "v1.2.0", "def456", Info{"v1.2.0", "def456", "go1.27.3"}},
		{"no vcs data", &debug.BuildInfo{GoVersion: "go1.27.3"}, "", "", Info{Unknown, Unknown, "go1.27.3"}},
		{"module version", &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v1.1.0"}}, "", "",
			Info{"v1.1.0", Unknown, "go1.27.3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuildInfo(tc.bi, tc.ldVer, tc.ldRev); got != tc.want {
				t.Errorf("fromBuildInfo = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadNamesTheToolchain(t *testing.T) {
	i := Read()
	if !strings.HasPrefix(i.GoVersion, "go") {
		t.Errorf("GoVersion = %q, want go...", i.GoVersion)
	}
	if i.Version == "" || i.Revision == "" {
		t.Errorf("Read left a field empty: %+v", i)
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		in   Info
		want string
	}{
		{Info{"v1.2.0", "abc", "go1.27.3"}, "warmroute v1.2.0 (revision abc, go1.27.3)"},
		{Info{}, "warmroute unknown (revision unknown, unknown)"},
	}
	for _, tc := range tests {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}
