package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// TestChartMetadata: what chart indexes (Artifact Hub, a repository's index.yaml) show of the chart, as helm
// reads it; helm lint --strict takes it, and kubeVersion keeps the chart off clusters without
// ValidatingAdmissionPolicy v1 (Kubernetes 1.30).
func TestChartMetadata(t *testing.T) {
	type maintainer struct{ Name, Email, URL string }
	type metadata struct {
		Home        string            `yaml:"home"`
		Sources     []string          `yaml:"sources"`
		Icon        string            `yaml:"icon"`
		Maintainers []maintainer      `yaml:"maintainers"`
		KubeVersion string            `yaml:"kubeVersion"`
		Annotations map[string]string `yaml:"annotations"`
	}
	var got metadata
	if err := yaml.Unmarshal(helm(t, "show", "chart", chartDir()), &got); err != nil {
		t.Fatalf("helm show chart: %v", err)
	}
	want := metadata{
		Home:        "https://github.com/fabricmap/fabricmap",
		Sources:     []string{"https://github.com/fabricmap/fabricmap"},
		Icon:        "https://raw.githubusercontent.com/fabricmap/fabricmap/main/docs/images/fabricmap.svg",
		Maintainers: []maintainer{{Name: "The fabricmap Authors", URL: "https://github.com/fabricmap/fabricmap"}},
		KubeVersion: ">=1.30.0-0",
		Annotations: map[string]string{"artifacthub.io/license": "Apache-2.0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("helm show chart (-want +got):\n%s", diff)
	}
	// The icon's URL names a file of this repository.
	if _, err := os.Stat(filepath.Join(testenv.RepoRoot(), strings.TrimPrefix(got.Icon, "https://raw.githubusercontent.com/fabricmap/fabricmap/main/"))); err != nil {
		t.Errorf("the icon %s is not in the repository: %v", got.Icon, err)
	}
	out := string(helm(t, "lint", chartDir(), "--strict"))
	if strings.Contains(out, "[INFO]") || strings.Contains(out, "[WARNING]") {
		t.Errorf("helm lint --strict has remarks:\n%s", out)
	}
	for _, tc := range []struct {
		kube    string
		refused bool
	}{{"1.29.9", true}, {"1.30.0", false}, {"1.36.3", false}} {
		err := exec.Command(filepath.Join(testenv.RepoRoot(), "bin", "helm"), "template", "x", chartDir(), "--kube-version", tc.kube).Run()
		if (err != nil) != tc.refused {
			t.Errorf("helm template on Kubernetes %s: %v, want refused %v", tc.kube, err, tc.refused)
		}
	}
}

// TestLicense: the repository's LICENSE is the Apache License 2.0 with the project's copyright line, and the
// chart carries the same file.
func TestLicense(t *testing.T) {
	root, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Apache License\n                           Version 2.0, January 2004",
		"http://www.apache.org/licenses/LICENSE-2.0", "END OF TERMS AND CONDITIONS", "Copyright 2026 The fabricmap Authors"} {
		if !bytes.Contains(root, []byte(want)) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
	chart, err := os.ReadFile(filepath.Join(chartDir(), "LICENSE"))
	if err != nil || !bytes.Equal(root, chart) {
		t.Errorf("charts/fabricmap/LICENSE is not the repository's LICENSE (%v)", err)
	}
}

// TestReleaseChartReproducible runs the chart part of `make release` (hack/release.sh chart) twice, in two
// different seconds (helm package dates each file at the time it runs): both write the same bytes and the same
// SHA256SUMS, and the package holds the LICENSE, every file dated at the commit and owned by root.
func TestReleaseChartReproducible(t *testing.T) {
	release := func() string {
		t.Helper()
		dist := t.TempDir()
		cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "hack", "release.sh"), "chart")
		cmd.Env = append(os.Environ(), "DIST="+dist)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/release.sh chart: %v\n%s", err, out)
		}
		return dist
	}
	first := release()
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	second := release()

	read := func(dir, name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sums := read(first, "SHA256SUMS")
	if diff := cmp.Diff(string(sums), string(read(second, "SHA256SUMS"))); diff != "" {
		t.Errorf("SHA256SUMS of two runs differ (-first +second):\n%s", diff)
	}
	pkg := strings.TrimSpace(strings.TrimPrefix(strings.Fields(string(sums))[1], "*"))
	if !strings.HasSuffix(pkg, ".tgz") || !bytes.Equal(read(first, pkg), read(second, pkg)) {
		t.Errorf("the chart package %s of two runs differs", pkg)
	}

	out, err := exec.Command("git", "-C", testenv.RepoRoot(), "log", "-1", "--format=%ct").Output()
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(read(first, pkg)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.ModTime.Unix() != epoch || h.Uid != 0 || h.Gid != 0 || h.Mode != 0o644 {
			t.Errorf("%s: dated %s, owner %d:%d, mode %o; want the commit's time %s, 0:0, 644", h.Name, h.ModTime.UTC(), h.Uid, h.Gid, h.Mode, time.Unix(epoch, 0).UTC())
		}
		if h.Name == "fabricmap/LICENSE" {
			body, _ := io.ReadAll(tr)
			if !bytes.Equal(body, read(testenv.RepoRoot(), "LICENSE")) {
				t.Error("the package's LICENSE is not the repository's")
			}
		}
	}
	if len(names) < 20 || names[0] != "fabricmap/Chart.yaml" || !strings.Contains(strings.Join(names, " "), "fabricmap/LICENSE") {
		t.Errorf("the package holds %v, want Chart.yaml first, the templates and the LICENSE", names)
	}
	// helm takes the repacked archive as a chart.
	helm(t, "lint", filepath.Join(first, pkg))
}
