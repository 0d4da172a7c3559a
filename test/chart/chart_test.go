// Package chart checks the Helm chart for real: helm lint and helm template with every values file under
// charts/fabricmap/ci, and every rendered manifest sent to a real kube-apiserver as a server-side dry-run apply.
package chart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const namespace = "fabricmap-system"

func chartDir() string { return filepath.Join(testenv.RepoRoot(), "charts", "fabricmap") }

func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := filepath.Join(testenv.RepoRoot(), "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm not built (%v): run `make tools`", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

func valuesFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(chartDir(), "ci", "*-values.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("want at least two values files under ci/, got %v (%v)", files, err)
	}
	return files
}

func render(t *testing.T, values string) []*unstructured.Unstructured {
	t.Helper()
	return renderRelease(t, "fabricmap", "--include-crds", "-f", values)
}

// renderRelease renders the chart as release with helm template's further args (values files, --set) and
// decodes every object.
func renderRelease(t *testing.T, release string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return decodeAll(t, helm(t, append([]string{"template", release, chartDir(), "--namespace", namespace, "--kube-version", "1.36.3"}, args...)...))
}

func TestLint(t *testing.T) {
	for _, v := range valuesFiles(t) {
		t.Run(filepath.Base(v), func(t *testing.T) {
			helm(t, "lint", chartDir(), "--strict", "-f", v)
		})
	}
}

func TestRenderedManifestsPassServerSideDryRun(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	ensureNamespace(t, ctx, c)
	installMonitoringCRDs(t, c)
	for _, v := range valuesFiles(t) {
		t.Run(filepath.Base(v), func(t *testing.T) {
			objs := render(t, v)
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				ac := client.ApplyConfigurationFromUnstructured(o)
				if err := c.Apply(ctx, ac, client.FieldOwner("chart-test"), client.DryRunAll, client.ForceOwnership); err != nil {
					t.Errorf("%s %s/%s refused by the API server: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
			}
			for _, k := range []string{"DaemonSet", "Deployment", "ClusterRole", "ClusterRoleBinding", "ServiceAccount", "CustomResourceDefinition"} {
				if kinds[k] == 0 {
					t.Errorf("no %s rendered (kinds: %v)", k, kinds)
				}
			}
		})
	}
}

func TestVolcanoCRDOnlyWhenAsked(t *testing.T) {
	crds := func(values string) string {
		var names []string
		for _, o := range render(t, values) {
			if o.GetKind() == "CustomResourceDefinition" {
				names = append(names, o.GetName())
			}
		}
		return fmt.Sprint(names)
	}
	dir := filepath.Join(chartDir(), "ci")
	if got := crds(filepath.Join(dir, "default-values.yaml")); got != "[nodefabricreports.fabricmap.io]" {
		t.Errorf("default CRDs = %s", got)
	}
	if got := crds(filepath.Join(dir, "volcano-crds-values.yaml")); !strings.Contains(got, "hypernodes.topology.volcano.sh") {
		t.Errorf("CRDs with crds.install.volcano = %s", got)
	}
}
