package chart

import (
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// renderUmbrella renders fabricmap as the subchart of an umbrella chart "platform" whose Chart.yaml depends on it
// with the dependency's further lines (e.g. "    condition: fabricmap.enabled\n") and whose values.yaml is
// values, as a platform team installs it; it returns every object rendered.
func renderUmbrella(t *testing.T, dependency, values string) []*unstructured.Unstructured {
	t.Helper()
	umbrella := t.TempDir()
	chart := "apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n  - name: fabricmap\n    version: \">0.0.0-0\"\n" + dependency
	if err := os.WriteFile(filepath.Join(umbrella, "Chart.yaml"), []byte(chart), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(umbrella, "values.yaml"), []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(umbrella, "charts", "fabricmap"), os.DirFS(chartDir())); err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, helm(t, "template", "platform", umbrella, "--namespace", namespace, "--kube-version", "1.36.3"))
}

// decodeAll decodes every object of a multi-document YAML stream.
func decodeAll(t *testing.T, out []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if err == io.EOF {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding rendered manifests: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// TestUmbrellaCondition: an umbrella chart that turns fabricmap on and off with the usual
// `condition: fabricmap.enabled` renders (the schema takes enabled), with fabricmap's objects when it is true or
// unset (the chart's default) and without any when it is false.
func TestUmbrellaCondition(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         bool // fabricmap's workloads rendered
	}{
		{"enabled", "fabricmap:\n  enabled: true\n", true},
		{"unset: the chart's default", "", true},
		{"disabled", "fabricmap:\n  enabled: false\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var workloads []string
			for _, o := range renderUmbrella(t, "    condition: fabricmap.enabled\n", tc.values) {
				if o.GetKind() == "DaemonSet" || o.GetKind() == "Deployment" {
					workloads = append(workloads, o.GetKind()+"/"+o.GetName())
				}
			}
			var want []string
			if tc.want {
				want = []string{"DaemonSet/platform-fabricmap-agent", "Deployment/platform-fabricmap-aggregator"}
			}
			if diff := cmp.Diff(want, workloads); diff != "" {
				t.Errorf("workloads rendered (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImagePullSecretsOnce: the chart's imagePullSecrets and global.imagePullSecrets, each entry a name or
// {name: …}, reach every pod as one list that names each Secret once, in the order first given (the chart's
// before the global ones).
func TestImagePullSecretsOnce(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         []string // nil: no imagePullSecrets
	}{
		{"none", "", nil},
		{"one name as a string in the chart and as a dict in global",
			"imagePullSecrets: [regcred]\nglobal:\n  imagePullSecrets: [{name: regcred}]\n", []string{"regcred"}},
		{"one name as a dict in the chart and as a string in global",
			"imagePullSecrets: [{name: regcred}]\nglobal:\n  imagePullSecrets: [regcred]\n", []string{"regcred"}},
		{"both shapes in the chart's own list", "imagePullSecrets: [regcred, {name: regcred}]\n", []string{"regcred"}},
		{"the chart's first and then the global ones not already given",
			"imagePullSecrets: [{name: mine}, shared]\nglobal:\n  imagePullSecrets: [platform, {name: shared}, mine]\n",
			[]string{"mine", "shared", "platform"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(file, []byte(tc.values+"placer:\n  enabled: true\ncaptureJob:\n  enabled: true\n  nodeSelector: {hca: \"true\"}\n  privileged: true\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			specs := podSpecs(t, renderRelease(t, "fabricmap", "-f", file))
			if len(specs) < 6 {
				t.Fatalf("pods of %v rendered, want the agent, aggregator, placer, cleanup, capture and test pods", slices.Collect(maps.Keys(specs)))
			}
			for name, spec := range specs {
				var got []string
				for _, s := range spec.ImagePullSecrets {
					got = append(got, s.Name)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: imagePullSecrets (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}
