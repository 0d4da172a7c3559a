package ctl

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCLILinksNoGoPlugin: the CLI must not link Go's plugin package. With it the linker marks the binary to
// bind every symbol at start-up (BIND_NOW), and go-nvml's symbols, resolved lazily from the library the NVML
// probe opens, then stop fabricmap before main ("undefined symbol: nvmlDevice…"). k8s.io/cli-runtime's
// genericclioptions (ConfigFlags) and kubectl's custom-columns printer bring it in, through kustomize.
func TestCLILinksNoGoPlugin(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/fabricmap/fabricmap/cmd/fabricmap").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "plugin" {
			t.Fatal("cmd/fabricmap links Go's plugin package (go mod why -m, or go list -deps -f '{{.ImportPath}} {{.Imports}}', finds what brings it)")
		}
	}
}
