package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestStampedWins(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.9.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ffffffffffffffffffffffffffffffffffffffff"}}}, true
	}
	in := from("v1.2.0", "0123456789abcdef0123456789abcdef01234567", read)
	if in.Version != "v1.2.0" || in.Commit != "0123456789abcdef0123456789abcdef01234567" || in.GoVersion != "go1.26.0" {
		t.Fatalf("stamped build reads %+v", in)
	}
	if s := in.String(); !strings.HasPrefix(s, "v1.2.0 (commit 0123456789ab, go1.26.0 ") {
		t.Errorf("String() = %q", s)
	}
}

func TestFallsBackToWhatGoRecorded(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.3", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abcdefabcdefabcdefabcdefabcdefabcdefabcd"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	in := from("", "", read)
	if in.Version != "devel" || in.Commit != "abcdefabcdefabcdefabcdefabcdefabcdefabcd-dirty" || in.GoVersion != "go1.26.3" {
		t.Fatalf("unstamped build reads %+v", in)
	}
	if s := in.String(); !strings.Contains(s, "commit abcdefabcdef-dirty") {
		t.Errorf("String() = %q", s)
	}
	in = from("", "", func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.3", Main: debug.Module{Version: "v1.4.0"}}, true
	})
	if in.Version != "v1.4.0" || in.Commit != "unknown" {
		t.Fatalf("go install'd build reads %+v", in)
	}
}
