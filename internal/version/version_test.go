package version

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGet(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := func(rev, modified string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/fabricmap/fabricmap", Version: "(devel)"}}
		bi.Settings = []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
		return bi
	}
	tagged := vcs("1a2b3c", "false")
	tagged.Main.Version = "v0.2.0"
	for _, tc := range []struct {
		name              string
		stamped, revision string
		bi                *debug.BuildInfo
		want              Info
	}{
		{"stamped by the release build", "0.1.0", "cafe01", vcs("1a2b3c", "true"),
			Info{Version: "0.1.0", Commit: "cafe01", GoVersion: "go1.26.8", Platform: platform}},
		{"built in a modified checkout", "", "", vcs("1a2b3c", "true"),
			Info{Version: "dev", Commit: "1a2b3c-dirty", GoVersion: "go1.26.8", Platform: platform}},
		{"the build script's defaults fall back too", "dev", Unknown, vcs("1a2b3c", "false"),
			Info{Version: "dev", Commit: "1a2b3c", GoVersion: "go1.26.8", Platform: platform}},
		{"a module version from the toolchain", "", "", tagged,
			Info{Version: "v0.2.0", Commit: "1a2b3c", GoVersion: "go1.26.8", Platform: platform}},
		{"no build information at all", "", "", nil,
			Info{Version: "dev", Commit: Unknown, GoVersion: runtime.Version(), Platform: platform}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, get(tc.stamped, tc.revision, tc.bi)); diff != "" {
				t.Errorf("Info (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequested(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--version"}, true},
		{[]string{"--log-level=debug", "--version"}, true},
		{[]string{"--version=true"}, true},
		{[]string{"--version=false"}, false},
		{[]string{"--version", "--version=false"}, false},
		{[]string{"--version=maybe"}, false},
		{[]string{"--", "--version"}, false},
		{[]string{"--versions"}, false},
		{[]string{"-version"}, false},
	} {
		if got := Requested(tc.args); got != tc.want {
			t.Errorf("Requested(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestPrintIfRequested(t *testing.T) {
	var out bytes.Buffer
	if PrintIfRequested(&out, "fabricmap-agent", []string{"--once"}) || out.Len() > 0 {
		t.Fatalf("printed without --version: %q", out.String())
	}
	if !PrintIfRequested(&out, "fabricmap-agent", []string{"--version"}) {
		t.Fatal("--version was not taken")
	}
	want := "fabricmap-agent " + Get().Version + " (commit " + Get().Commit + ", " + Get().GoVersion + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("version line (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(Get().GoVersion, "go") {
		t.Errorf("Go version %q", Get().GoVersion)
	}
}
