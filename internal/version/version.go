// Package version is the one home of the version every fabricmap binary prints with --version (and
// `fabricmap version`): the release version and the source revision stamped at link time, else what the Go
// toolchain recorded in the binary (its module version and the VCS revision of the checkout it was built in).
//
// The release build stamps both (hack/image/build-binaries.sh):
//
//	go build -ldflags "-X github.com/fabricmap/fabricmap/internal/version.version=0.1.0 \
//	  -X github.com/fabricmap/fabricmap/internal/version.revision=$(git rev-parse HEAD)" ./cmd/...
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Set at link time with -X (see the package comment); empty (or the build script's "dev" and "unknown") means
// not stamped.
var (
	version  string
	revision string
)

// Unknown stands for a version or a revision that neither the link flags nor the build information give.
const Unknown = "unknown"

// Info is what a binary knows of its own build.
type Info struct {
	// Version is the release version (e.g. 0.1.0), else the Go module version the toolchain recorded (a
	// pseudo-version for a build in a checkout), else "dev".
	Version string `json:"version"`
	// Commit is the source revision, with "-dirty" when the checkout had uncommitted changes; "unknown" when
	// the binary was built without VCS information (e.g. -buildvcs=false) and not stamped.
	Commit string `json:"commit"`
	// GoVersion is the Go toolchain that built the binary, and Platform its OS and architecture.
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns this binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return get(version, revision, bi)
}

// get combines the link-time stamps with the toolchain's build information (nil when there is none).
func get(stamped, stampedRevision string, bi *debug.BuildInfo) Info {
	info := Info{Version: stamped, Commit: stampedRevision, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if !given(info.Version) && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if !given(info.Version) {
		info.Version = "dev"
	}
	if !given(info.Commit) && bi != nil {
		info.Commit = vcsRevision(bi.Settings)
	}
	if !given(info.Commit) {
		info.Commit = Unknown
	}
	if bi != nil && bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	return info
}

// given reports whether a stamp carries a value (the build script's defaults are "dev" and "unknown").
func given(s string) bool { return s != "" && s != "dev" && s != Unknown }

// vcsRevision is the VCS revision the toolchain recorded, "-dirty" added for a modified checkout.
func vcsRevision(settings []debug.BuildSetting) string {
	var rev string
	var modified bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified, _ = strconv.ParseBool(s.Value)
		}
	}
	if rev != "" && modified {
		rev += "-dirty"
	}
	return rev
}

// String is the one line --version prints for program: "fabricmap-agent 0.1.0 (commit 1a2b…, go1.26.8, linux/amd64)".
func (i Info) String(program string) string {
	return program + " " + i.Details()
}

// Details is the line without the program's name: "0.1.0 (commit 1a2b…, go1.26.8, linux/amd64)".
func (i Info) Details() string {
	return fmt.Sprintf("%s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}

// Flag is the name of the flag that prints the version and exits.
const Flag = "version"

// AddFlag registers --version on fs, so that a binary's help lists it and its parser accepts it; the binary's
// main acts on it before anything else runs (Requested).
func AddFlag(fs *pflag.FlagSet) {
	fs.Bool(Flag, false, "print the version, git commit and Go version, and exit")
}

// Requested reports whether the command line args (without the program name) ask for the version:
// --version or --version=true before any "--". A main checks it before it parses its flags.
// The last one given wins, as in the flag parser.
func Requested(args []string) bool {
	requested := false
	for _, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		if name != "--"+Flag {
			continue
		}
		on, err := strconv.ParseBool(value)
		requested = !hasValue || (err == nil && on)
	}
	return requested
}

// PrintIfRequested writes program's version line to w and returns true when args ask for it (Requested):
// the main then exits 0 without running anything else.
func PrintIfRequested(w io.Writer, program string, args []string) bool {
	if !Requested(args) {
		return false
	}
	fmt.Fprintln(w, Get().String(program))
	return true
}
