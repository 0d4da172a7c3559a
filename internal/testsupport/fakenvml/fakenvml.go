// Package fakenvml builds the stand-in libnvidia-ml.so.1 (csrc/fakenvml.c) that end-to-end tests give the agent
// instead of a driver: no machine here has an NVIDIA GPU. The library is compiled against the nvml.h of the
// go-nvml module fabricmap is built with, so its structures are the ones the agent's binding passes, and it
// answers from a fixture file named by $FABRICMAP_FAKE_NVML_GPUS (EnvVar); Fixture gives the shipped ones.
package fakenvml

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvVar names the fixture file the library answers from: one GPU a line (see csrc/fakenvml.c).
const EnvVar = "FABRICMAP_FAKE_NVML_GPUS"

// LibraryName is the file name the agent loads (its --nvml-library, or the dynamic loader's search).
const LibraryName = "libnvidia-ml.so.1"

// dir is this package's source folder, which holds fakenvml.c and the fixtures.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Fixture returns the path of a shipped GPU fixture: gb200-rack1-tray1.gpus and gb200-rack1-tray2.gpus (two
// trays of one GB200 NVL72 rack, one NVLink domain) or hgx-h100.gpus (no NVLink fabric).
func Fixture(name string) string { return filepath.Join(dir(), "testdata", name) }

// Build compiles the library into outDir and returns its path. gcc and the go-nvml module (found through
// `go list` from the fabricmap module) must be present.
func Build(outDir string) (string, error) {
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/NVIDIA/go-nvml")
	list.Dir = dir()
	mod, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("finding the go-nvml module: %w", err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", outDir, err)
	}
	out := filepath.Join(outDir, LibraryName)
	cc := exec.Command("gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-Wno-deprecated-declarations",
		"-I", filepath.Join(strings.TrimSpace(string(mod)), "pkg", "nvml"),
		"-o", out, filepath.Join(dir(), "csrc", "fakenvml.c"))
	if b, err := cc.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the stand-in NVML library: %w\n%s", err, b)
	}
	return out, nil
}
