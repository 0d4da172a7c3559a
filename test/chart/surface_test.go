package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/chartsurface"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// declared is one registry entry's chart surface, named for the test's messages.
type declared struct {
	name    string
	surface chartsurface.Surface
}

// registrySurfaces lists the chart surfaces of every source the released aggregator links and every output.
func registrySurfaces() []declared {
	var out []declared
	o := sources.NewOptions(clouds.Kinds)
	for _, k := range o.Kinds() {
		out = append(out, declared{"source " + k.Name, k.Chart})
	}
	var oo outputs.Options
	for _, k := range oo.Kinds() {
		out = append(out, declared{"output " + k.Name, k.Chart})
	}
	return out
}

// chartValues reads the chart's default values.
func chartValues(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	return v
}

// freeKey tells whether path is a key of a block of free keys: its parent is an empty map in the defaults
// (aggregator.config, whose keys are the aggregator's flags).
func freeKey(values map[string]any, path string) bool {
	i := strings.LastIndex(path, ".")
	if i < 0 {
		return false
	}
	parent, ok := lookup(values, path[:i])
	m, isMap := parent.(map[string]any)
	return ok && isMap && len(m) == 0
}

// lookup finds a dotted path in values.
func lookup(values map[string]any, path string) (any, bool) {
	var cur any = values
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// turnOn returns helm's --set flags that turn on every value a declared rule depends on (true for a flag,
// a name of its own for a string), with the value each string gets.
func turnOn(t *testing.T, regs []declared) ([]string, map[string]string) {
	t.Helper()
	defaults := chartValues(t)
	names := map[string]string{}
	var args []string
	for _, d := range regs {
		for _, r := range d.surface.Rules {
			for _, key := range slices.Concat(r.When, r.NamesFrom) {
				if _, done := names[key]; done {
					continue
				}
				def, ok := lookup(defaults, key)
				if !ok && !freeKey(defaults, key) {
					t.Fatalf("%s: its rule depends on %s, which values.yaml lacks", d.name, key)
				}
				switch def.(type) {
				case bool:
					names[key] = "true"
					args = append(args, "--set", key+"=true")
				default:
					names[key] = fmt.Sprintf("surface-%d", len(names))
					args = append(args, "--set-string", key+"="+names[key])
				}
			}
		}
	}
	return args, names
}

// roleRules returns the rules of the rendered (Cluster)Role named name.
func roleRules(t *testing.T, objs []*unstructured.Unstructured, kind, name string) []rbacv1.PolicyRule {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != kind || o.GetName() != name {
			continue
		}
		var role rbacv1.Role // a ClusterRole's rules decode the same
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			t.Fatalf("%s %s: %v", kind, name, err)
		}
		return role.Rules
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// granted tells whether one of rules grants verb on group/resource for every name of names (none: any object).
func granted(rules []rbacv1.PolicyRule, group, resource, verb string, names []string) bool {
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, group) || !slices.Contains(r.Resources, resource) || !slices.Contains(r.Verbs, verb) {
			continue
		}
		if len(r.ResourceNames) == 0 {
			return true
		}
		if len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(r.ResourceNames, n) }) {
			return true
		}
	}
	return false
}

// missing lists the declared rules' grants that the rendered roles lack. names are the values turned on (see
// turnOn); nil holds only the rules that depend on no value.
func missing(t *testing.T, objs []*unstructured.Unstructured, regs []declared, names map[string]string) []string {
	t.Helper()
	roles := map[chartsurface.Scope][]rbacv1.PolicyRule{
		chartsurface.Cluster:   roleRules(t, objs, "ClusterRole", "fabricmap-aggregator"),
		chartsurface.Namespace: roleRules(t, objs, "Role", "fabricmap-aggregator-leader"),
	}
	var out []string
	for _, d := range regs {
		for _, r := range d.surface.Rules {
			if names == nil && len(r.When)+len(r.NamesFrom) > 0 {
				continue
			}
			var want []string
			for _, key := range r.NamesFrom {
				want = append(want, names[key])
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						if !granted(roles[r.Scope], g, res, v, want) {
							out = append(out, fmt.Sprintf("%s: %s %q/%s %v", d.name, v, g, res, want))
						}
					}
				}
			}
		}
	}
	return out
}

// TestAggregatorRBACGrantsTheRegistries: the aggregator's rendered ClusterRole and Role grant every rule the
// sources and outputs declare (their Chart): those that depend on no value with the chart's defaults, and
// every one with the values they depend on turned on, resourceNames included. A rule declared but missing
// from the chart (a stale _surface.tpl, a template edited by hand) fails here rather than on a control plane.
func TestAggregatorRBACGrantsTheRegistries(t *testing.T) {
	regs := registrySurfaces()
	on, names := turnOn(t, regs)
	for _, tc := range []struct {
		name  string
		args  []string
		names map[string]string
	}{
		{name: "defaults"},
		// NFD's output hands the node labels to NFD: the chart refuses it beside the node labels
		{name: "every output on", args: append(on, "--set", "aggregator.nodeLabels.enabled=false"), names: names},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderRelease(t, "fabricmap", tc.args...)
			if diff := cmp.Diff([]string(nil), missing(t, objs, regs, tc.names)); diff != "" {
				t.Errorf("rules the registries declare that the chart does not grant (-want +missing):\n%s", diff)
			}
		})
	}
}

// TestAggregatorPoliciesAreTheRegistries: the aggregator's rendered admission policies are exactly those the
// sources and outputs declare, each with its binding, and every unnamed create a declared rule grants in the
// release's namespace, where its entry names the objects for its other verbs (RBAC cannot pin a create to a
// name, and the namespace holds the agents' Leases and other ConfigMaps), is matched by one of the policies
// the entry declares.
func TestAggregatorPoliciesAreTheRegistries(t *testing.T) {
	regs := registrySurfaces()
	on, _ := turnOn(t, regs)
	objs := renderRelease(t, "fabricmap", append(on, "--set", "aggregator.nodeLabels.enabled=false")...)
	const prefix = "fabricmap-aggregator-"
	policies := map[string]*unstructured.Unstructured{}
	var bound []string
	for _, o := range objs {
		if !strings.HasPrefix(o.GetName(), prefix) {
			continue
		}
		switch o.GetKind() {
		case "ValidatingAdmissionPolicy":
			policies[strings.TrimPrefix(o.GetName(), prefix)] = o
		case "ValidatingAdmissionPolicyBinding":
			name, _, _ := unstructured.NestedString(o.Object, "spec", "policyName")
			bound = append(bound, strings.TrimPrefix(name, prefix))
		}
	}
	var want []string
	for _, d := range regs {
		want = append(want, d.surface.Policies...)
		for _, r := range d.surface.Rules {
			if r.Scope != chartsurface.Namespace || len(r.NamesFrom) > 0 || !slices.Contains(r.Verbs, "create") {
				continue
			}
			for _, res := range r.Resources {
				if !namesSome(d.surface, r.APIGroups, res) {
					continue // it creates objects of any name (a NodeFeature per node)
				}
				if !slices.ContainsFunc(d.surface.Policies, func(p string) bool { return matches(policies[p], res, "CREATE") }) {
					t.Errorf("%s: creates %s unnamed in RBAC, but none of its policies %v matches that create", d.name, res, d.surface.Policies)
				}
			}
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	got := slices.Sorted(func(yield func(string) bool) {
		for p := range policies {
			if !yield(p) {
				return
			}
		}
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the aggregator's admission policies (-registries +chart):\n%s", diff)
	}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(bound))); diff != "" {
		t.Errorf("the aggregator's policy bindings (-registries +chart):\n%s", diff)
	}
}

// namesSome tells whether s has a rule on resource of groups that names its objects (NamesFrom).
func namesSome(s chartsurface.Surface, groups []string, resource string) bool {
	return slices.ContainsFunc(s.Rules, func(r chartsurface.Rule) bool {
		return len(r.NamesFrom) > 0 && slices.Equal(r.APIGroups, groups) && slices.Contains(r.Resources, resource)
	})
}

// matches tells whether policy's matchConstraints take op on resource.
func matches(policy *unstructured.Unstructured, resource, op string) bool {
	if policy == nil {
		return false
	}
	rules, _, _ := unstructured.NestedSlice(policy.Object, "spec", "matchConstraints", "resourceRules")
	for _, r := range rules {
		m, _ := r.(map[string]any)
		res, _, _ := unstructured.NestedStringSlice(m, "resources")
		ops, _, _ := unstructured.NestedStringSlice(m, "operations")
		if slices.Contains(res, resource) && slices.Contains(ops, op) {
			return true
		}
	}
	return false
}

// TestDeclaredValuesAreTheCharts: every values key a source or output declares is in values.yaml, so that
// a renamed value cannot leave a declaration (and the rules behind it) pointing at nothing; a key of a block of
// free keys (aggregator.config, keyed by flag name) is one too.
func TestDeclaredValuesAreTheCharts(t *testing.T) {
	defaults := chartValues(t)
	for _, d := range registrySurfaces() {
		for _, key := range d.surface.Values {
			if _, ok := lookup(defaults, key); !ok && !freeKey(defaults, key) {
				t.Errorf("%s declares the value %s, which values.yaml lacks", d.name, key)
			}
		}
	}
}

// TestCleanupRBACRemovesEveryOutput: the uninstall hook's rendered ClusterRole and Role let it list and delete
// the objects of every output (their Owned kinds), where `fabricmap cleanup` looks for them, so that an output
// added to the registry is not left behind at uninstall for want of a rule.
func TestCleanupRBACRemovesEveryOutput(t *testing.T) {
	objs := renderRelease(t, "fabricmap")
	roles := map[bool][]rbacv1.PolicyRule{
		false: roleRules(t, objs, "ClusterRole", "fabricmap-cleanup"),
		true:  roleRules(t, objs, "Role", "fabricmap-cleanup"),
	}
	var oo outputs.Options
	var lacking []string
	for _, k := range oo.Kinds() {
		if k.Owned == nil {
			continue
		}
		for _, verb := range []string{"list", "delete"} {
			if !granted(roles[k.Owned.Namespaced], k.Owned.GroupKind.Group, k.Owned.Resource, verb, nil) {
				lacking = append(lacking, fmt.Sprintf("output %s: %s %q/%s", k.Name, verb, k.Owned.GroupKind.Group, k.Owned.Resource))
			}
		}
	}
	if diff := cmp.Diff([]string(nil), lacking); diff != "" {
		t.Errorf("what the cleanup hook may not remove (-want +lacking):\n%s", diff)
	}
}
