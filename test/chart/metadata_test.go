package chart

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// everythingOn are helm template's arguments for a render with every part of the chart on: the customisation
// values, UFM with a chart-made Secret and CA, every output and optional CRD, the capture and the placer.
func everythingOn() []string {
	var args []string
	for _, f := range []string{"every-customisation-values.yaml", "ufm-values.yaml", "outputs-values.yaml", "volcano-crds-values.yaml"} {
		args = append(args, "-f", filepath.Join(chartDir(), "ci", f))
	}
	return args
}

// TestEveryObjectCarriesManagedByAndCommonLabels: every object the chart renders (its templates; crds/ is
// installed as written) carries app.kubernetes.io/managed-by with Helm's name for itself and each of
// commonLabels, and so does every pod template.
func TestEveryObjectCarriesManagedByAndCommonLabels(t *testing.T) {
	want := map[string]string{"app.kubernetes.io/managed-by": "Helm", "team": "ml-infra", "example.com/cost-centre": "4711"}
	objs := renderRelease(t, "fabricmap", everythingOn()...)
	if len(objs) < 30 {
		t.Fatalf("only %d objects rendered with everything on", len(objs))
	}
	pick := func(labels map[string]string) map[string]string {
		got := map[string]string{}
		for k := range want {
			if v, ok := labels[k]; ok {
				got[k] = v
			}
		}
		return got
	}
	for _, o := range objs {
		if diff := cmp.Diff(want, pick(o.GetLabels())); diff != "" {
			t.Errorf("%s %s: labels (-want +got):\n%s", o.GetKind(), o.GetName(), diff)
		}
		if podLabels, found, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels"); found {
			if diff := cmp.Diff(want, pick(podLabels)); diff != "" {
				t.Errorf("%s %s: pod template labels (-want +got):\n%s", o.GetKind(), o.GetName(), diff)
			}
		}
	}
}

// replaceStrings returns v (decoded JSON) with r applied to every string, and the value of every
// app.kubernetes.io/name key set to name when name is not empty.
func replaceStrings(v any, r *strings.Replacer, name string) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = replaceStrings(e, r, name)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if k == "app.kubernetes.io/name" && name != "" {
				out[k] = name
				continue
			}
			out[k] = replaceStrings(e, r, name)
		}
		return out
	}
	return v
}

// TestNameOverridesRenameEveryObject renders release prod with every part on, then again with nameOverride and
// with fullnameOverride: each render is the first with the name prefix (and the Service's environment variable
// built from it) replaced everywhere, names and references alike, and the app.kubernetes.io/name label changed
// with nameOverride, in label maps and in selectors written as text; every object but a CRD (named by its
// group) starts with the new prefix.
func TestNameOverridesRenameEveryObject(t *testing.T) {
	// every-customisation-values.yaml sets both overrides: cleared for the first render, set for the others.
	clear := append(everythingOn(), "--set", "nameOverride=,fullnameOverride=")
	unnamed := renderRelease(t, "prod", clear...)
	for _, tc := range []struct {
		name, set, prefix, label string
	}{
		{"nameOverride", "nameOverride=topo", "prod-topo", "topo"},
		{"fullnameOverride", "fullnameOverride=netmap", "netmap", ""},
		{"both: fullnameOverride names objects, nameOverride the label", "fullnameOverride=netmap,nameOverride=topo", "netmap", "topo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderRelease(t, "prod", slices.Concat(clear, []string{"--set", tc.set})...)
			pairs := []string{"prod-fabricmap", tc.prefix, "PROD_FABRICMAP", strings.ToUpper(strings.ReplaceAll(tc.prefix, "-", "_"))}
			if tc.label != "" { // label selectors written as text
				pairs = append(pairs, "app.kubernetes.io/name=fabricmap", "app.kubernetes.io/name="+tc.label)
			}
			r := strings.NewReplacer(pairs...)
			var want, have []any
			for _, o := range unnamed {
				want = append(want, replaceStrings(o.Object, r, tc.label))
			}
			for _, o := range got {
				have = append(have, o.Object)
				if o.GetKind() != "CustomResourceDefinition" && !strings.HasPrefix(o.GetName(), tc.prefix) {
					t.Errorf("%s %s: name does not start with %s", o.GetKind(), o.GetName(), tc.prefix)
				}
			}
			if diff := cmp.Diff(want, have); diff != "" {
				t.Errorf("render with %s (-the default render renamed +rendered):\n%s", tc.set, diff)
			}
		})
	}
}

// TestShowReadme: `helm show readme` prints the chart's generated README, with every top-level value in its
// table (the README is checked current against values.yaml by make verify-docs).
func TestShowReadme(t *testing.T) {
	out := string(helm(t, "show", "readme", chartDir()))
	values := string(helm(t, "show", "values", chartDir()))
	if !strings.Contains(out, "## Values") || !strings.Contains(out, "helm install fabricmap oci://") {
		t.Fatalf("helm show readme:\n%s", out)
	}
	for _, line := range strings.Split(values, "\n") {
		if key, _, ok := strings.Cut(line, ":"); ok && key != "" && !strings.HasPrefix(key, " ") && !strings.HasPrefix(key, "#") {
			if !strings.Contains(out, "| `"+key) {
				t.Errorf("the README's table has no row for %s", key)
			}
		}
	}
}
