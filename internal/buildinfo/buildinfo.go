// Package buildinfo says which build of Quartermaster is running: the version and commit stamped
// at build time with -ldflags, or, for a plain `go build` or `go install`, what the Go toolchain
// recorded in the binary.
//
// Stamp a release with:
//
//	go build -ldflags "-X github.com/acme/quartermaster/internal/buildinfo.version=v1.2.0 \
//	  -X github.com/acme/quartermaster/internal/buildinfo.commit=$(git rev-parse HEAD)" ./cmd/...
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags -X at build time; empty in a plain build.
var (
	version string
	commit  string
)

// Info is the running binary's version, commit and Go version.
type Info struct {
	Version   string // v1.2.0, or "devel" for an unstamped build from a working tree
	Commit    string // the full commit hash, with "-dirty" when the tree had changes; "unknown" when not recorded
	GoVersion string // go1.26.0
	Platform  string // linux/amd64
}

// Get returns the running binary's build information.
func Get() Info {
	return from(version, commit, debug.ReadBuildInfo)
}

func from(v, c string, read func() (*debug.BuildInfo, bool)) Info {
	in := Info{Version: v, Commit: c, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := read(); ok {
		in.GoVersion = bi.GoVersion
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
		if in.Commit == "" {
			var rev, dirty string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					if s.Value == "true" {
						dirty = "-dirty"
					}
				}
			}
			if rev != "" {
				in.Commit = rev + dirty
			}
		}
	}
	if in.Version == "" {
		in.Version = "devel"
	}
	if in.Commit == "" {
		in.Commit = "unknown"
	}
	return in
}

// String is the one-line form: "v1.2.0 (commit 0123abc, go1.26.0 linux/amd64)".
func (i Info) String() string {
	c := i.Commit
	if len(c) >= 40 {
		c = c[:12] + c[40:] // a short hash, keeping "-dirty"
	}
	return fmt.Sprintf("%s (commit %s, %s %s)", i.Version, c, i.GoVersion, i.Platform)
}
