package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Release builds stamp these with the linker, which wins over what the Go
// toolchain recorded (a build from a source archive records no VCS data):
//
//	go build -ldflags "-X github.com/warmroute/warmroute/buildinfo.version=v1.2.0 \
//	    -X github.com/warmroute/warmroute/buildinfo.revision=$(git rev-parse HEAD)"
var (
	version  string
	revision string
)

// Unknown stands for a field the build did not record.
const Unknown = "unknown"

// Info identifies one build. The zero value is valid and prints as unknown.
type Info struct {
	Version   string // module version or -X override, e.g. v1.2.0 or (devel)
	Revision  string // VCS commit, with a "-dirty" suffix for modified trees
	GoVersion string // toolchain that built the binary, e.g. go1.27.3
}

// Read returns the running binary's Info.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi, version, revision)
}

// fromBuildInfo merges the toolchain's record with the linker overrides.
func fromBuildInfo(bi *debug.BuildInfo, ldVersion, ldRevision string) Info {
	i := Info{GoVersion: runtime.Version()}
	if bi != nil {
		i.GoVersion = bi.GoVersion
		i.Version = bi.Main.Version
		i.Revision = vcsRevision(bi.Settings)
	}
	if ldVersion != "" {
		i.Version = ldVersion
	}
	if ldRevision != "" {
		i.Revision = ldRevision
	}
	return i.orUnknown()
}

func vcsRevision(settings []debug.BuildSetting) string {
	var rev string
	var modified bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "-dirty"
	}
	return rev
}

func (i Info) orUnknown() Info {
	for _, f := range []*string{&i.Version, &i.Revision, &i.GoVersion} {
		if *f == "" {
			*f = Unknown
		}
	}
	return i
}

// String is the one line `warmroute version` prints.
func (i Info) String() string {
	i = i.orUnknown()
	return fmt.Sprintf("warmroute %s (revision %s, %s)", i.Version, i.Revision, i.GoVersion)
}
