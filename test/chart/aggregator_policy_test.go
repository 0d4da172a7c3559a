package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/wellknown"
)

const aggregatorSA = "fabricmap-aggregator" // the chart's aggregator service account for release "fabricmap"

// The chart's default node-label keys (aggregator.nodeLabels).
const (
	blockKey       = "fabric.topograph.run/tier-0"
	acceleratorKey = "accelerator.topograph.run/domain"
	subDomainKey   = "accelerator.topograph.run/sub-domain"
	// oldTierKey is under the prefix of another style's keys, but not among the keys: one an older configuration wrote.
	oldTierKey = "network.topology.nvidia.com/old-tier"
)

// applyNodeLabels has writer server-side-apply labels on node as the aggregator does (its field manager,
// forced): the keys it applied before and leaves out now are removed.
func applyNodeLabels(ctx context.Context, writer client.Client, node string, labels map[string]any, dry bool) error {
	return applyNodeMetadata(ctx, writer, node, labels, nil, dry)
}

// applyNodeMetadata is applyNodeLabels with annotations too (nil: none), as the aggregator writes a lost uplink or
// lost switches with the labels.
func applyNodeMetadata(ctx context.Context, writer client.Client, node string, labels, annotations map[string]any, dry bool) error {
	meta := map[string]any{"name": node, "labels": labels}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": meta}}
	opts := []client.ApplyOption{client.FieldOwner(wellknown.LabelFieldManager), client.ForceOwnership}
	if dry {
		opts = append(opts, client.DryRunAll)
	}
	return writer.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...)
}

// TestAggregatorWritesOnlyItsNodeLabels installs the aggregator's service account, RBAC and admission policy as
// the chart renders them by default and writes a Node as that account: its own label keys (tier keys, the
// accelerator key) may be set, changed and removed, and other keys under their prefix removed; any other key,
// an annotation or a taint is refused.
func TestAggregatorWritesOnlyItsNodeLabels(t *testing.T) {
	testenv.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := testenv.Shared.Client
	installAccess(t, ctx, admin, render(t, valuesFiles(t)[0]), "aggregator", map[string]int{"ServiceAccount": 1, "ClusterRole": 1,
		"ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "ValidatingAdmissionPolicy": 3, "ValidatingAdmissionPolicyBinding": 3})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "chart-aggregator-node", Labels: map[string]string{"team": "a", oldTierKey: "x"}}}
	if err := admin.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), node) })
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, aggregatorSA, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asAggregator := tokenClient(t, tr.Status.Token)

	// The policy takes effect a moment after its binding exists: wait until a foreign key is refused.
	eventually(t, time.Minute, "the admission policy refusing the aggregator's write of a foreign label", func() (bool, string) {
		err := applyNodeLabels(ctx, asAggregator, node.Name, map[string]any{"example.com/rack": "r1"}, true)
		return strings.Contains(fmt.Sprint(err), "refused to change example.com/rack"), fmt.Sprint(err)
	})

	for _, tc := range []struct {
		name   string
		labels map[string]any // applied as the aggregator does, for real when admitted
		// annotations are applied with labels (nil: none)
		annotations map[string]any
		patch       func(*corev1.Node) // else a merge patch, as a dry run
		refuse      string             // "" when admitted
		want        map[string]string  // the node's labels afterwards
	}{
		{name: "its own keys", labels: map[string]any{blockKey: "leaf-1", acceleratorKey: "nvl-1", subDomainKey: "rack-1"},
			want: map[string]string{"team": "a", oldTierKey: "x", blockKey: "leaf-1", acceleratorKey: "nvl-1", subDomainKey: "rack-1"}},
		{name: "its own key changed, another dropped", labels: map[string]any{blockKey: "leaf-2"},
			want: map[string]string{"team": "a", oldTierKey: "x", blockKey: "leaf-2"}},
		{name: "a foreign key added", labels: map[string]any{blockKey: "leaf-2", "example.com/rack": "r1"},
			refuse: "may change only the node labels " + blockKey, want: map[string]string{"team": "a", oldTierKey: "x", blockKey: "leaf-2"}},
		{name: "a key it wrote before under its prefix removed", patch: func(n *corev1.Node) { delete(n.Labels, oldTierKey) }},
		{name: "a key under its prefix set", patch: func(n *corev1.Node) { n.Labels[oldTierKey] = "forged" },
			refuse: "refused to change " + oldTierKey},
		{name: "a foreign key changed", patch: func(n *corev1.Node) { n.Labels["team"] = "b" }, refuse: "refused to change team on Node chart-aggregator-node"},
		{name: "a foreign key removed", patch: func(n *corev1.Node) { delete(n.Labels, "team") }, refuse: "refused to change team"},
		{name: "an annotation", patch: func(n *corev1.Node) { n.Annotations["example.com/note"] = "x" }, refuse: "may change only its node labels"},
		{name: "its annotations of a lost uplink and lost switches, with its labels",
			labels: map[string]any{blockKey: "leaf-2"},
			annotations: map[string]any{wellknown.UplinkLostAnnotation: `{"leaf":"leaf-2","since":"2026-11-28T10:00:00Z"}`,
				wellknown.SwitchLostAnnotation: `{"switches":[{"id":"guid:0x1","name":"su0-leaf-r3"}],"since":"2026-11-28T10:00:00Z"}`},
			want: map[string]string{"team": "a", oldTierKey: "x", blockKey: "leaf-2"}},
		{name: "its annotations removed", labels: map[string]any{blockKey: "leaf-2"}, annotations: map[string]any{},
			want: map[string]string{"team": "a", oldTierKey: "x", blockKey: "leaf-2"}},
		{name: "a foreign annotation with its own", labels: map[string]any{blockKey: "leaf-2"},
			annotations: map[string]any{wellknown.SwitchLostAnnotation: "{}", "example.com/note": "x"},
			refuse:      "not other annotations", want: map[string]string{"team": "a", oldTierKey: "x", blockKey: "leaf-2"}},
		{name: "a taint", patch: func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "example.com/broken", Effect: corev1.TaintEffectNoSchedule})
		}, refuse: "may change only its node labels"},
		{name: "its own keys removed", labels: map[string]any{}, want: map[string]string{"team": "a", oldTierKey: "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.patch != nil {
				assertAdmission(t, patchAs(ctx, admin, asAggregator, client.ObjectKeyFromObject(node), &corev1.Node{},
					func(o client.Object) { tc.patch(o.(*corev1.Node)) }), tc.refuse)
				return
			}
			assertAdmission(t, applyNodeMetadata(ctx, asAggregator, node.Name, tc.labels, tc.annotations, false), tc.refuse)
			var n corev1.Node
			if err := admin.Get(ctx, client.ObjectKeyFromObject(node), &n); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, n.Labels); diff != "" {
				t.Errorf("node labels (-want +got):\n%s", diff)
			}
		})
	}
}

// The chart's admission policy lists, for each label style, the keys the aggregator writes with that style:
// the template's fabricmap.nodeLabelKeys reads hypernodegen.StyleKeys through the generated _labelstyles.tpl
// (hack/tools/chartstyles), and this keeps the two alike.
func TestAggregatorPolicyKeysFollowTheLabelStyle(t *testing.T) {
	for _, style := range []string{wellknown.LabelStyleTopographV1, wellknown.LabelStyleNVIDIAV0} {
		t.Run(style, func(t *testing.T) {
			keys, err := hypernodegen.StyleKeys(style)
			if err != nil {
				t.Fatal(err)
			}
			want := append(keys.All(), wellknown.LinkHealthLabel)
			var got []string
			for _, o := range renderRelease(t, "fabricmap", "--set", "aggregator.nodeLabels.style="+style) {
				if o.GetKind() != "ValidatingAdmissionPolicy" || !strings.HasSuffix(o.GetName(), "-aggregator-own-labels") {
					continue
				}
				vars, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
				for _, v := range vars {
					if m := v.(map[string]any); m["name"] == "own" {
						if err := json.Unmarshal([]byte(m["expression"].(string)), &got); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the policy's own keys for style %s (-hypernodegen +chart):\n%s", style, diff)
			}
		})
	}
}

// TestAggregatorPolicyPrefixes: the policy lets the aggregator remove keys under the prefixes of every named
// style's keys (so that switching styles removes the keys written before), and of a custom style's own keys.
func TestAggregatorPolicyPrefixes(t *testing.T) {
	var styles []string
	for _, style := range wellknown.LabelStyles {
		if style != wellknown.LabelStyleCustom {
			styles = append(styles, style)
		}
	}
	base := map[string]bool{}
	for _, style := range styles {
		keys, err := hypernodegen.StyleKeys(style)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys.All() {
			base[strings.SplitN(k, "/", 2)[0]+"/"] = true
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		more []string
	}{
		{name: "the default style", more: []string{"fabricmap.io/"}},
		{name: "a custom style", args: []string{"--set", "aggregator.nodeLabels.style=custom", "--set", "aggregator.nodeLabels.tierKeys={example.com/leaf}"},
			more: []string{"example.com/", "fabricmap.io/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Collect(maps.Keys(base))
			want = append(want, tc.more...)
			var got []string
			for _, o := range renderRelease(t, "fabricmap", tc.args...) {
				if o.GetKind() != "ValidatingAdmissionPolicy" || !strings.HasSuffix(o.GetName(), "-aggregator-own-labels") {
					continue
				}
				vars, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
				for _, v := range vars {
					if m := v.(map[string]any); m["name"] == "ownPrefixes" {
						if err := json.Unmarshal([]byte(m["expression"].(string)), &got); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			slices.Sort(want)
			want = slices.Compact(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the policy's removable prefixes (-want +chart):\n%s", diff)
			}
		})
	}
}

// The chart's admission policy lets the aggregator set and remove exactly the Node annotations it writes
// (wellknown.NodeAnnotations).
func TestAggregatorPolicyAnnotationsAreTheAggregators(t *testing.T) {
	for _, o := range render(t, valuesFiles(t)[0]) {
		if o.GetKind() != "ValidatingAdmissionPolicy" || !strings.HasSuffix(o.GetName(), "-own-labels") {
			continue
		}
		vars, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
		for _, v := range vars {
			m := v.(map[string]any)
			if m["name"] != "ownAnnotations" {
				continue
			}
			var got []string
			if err := json.Unmarshal([]byte(m["expression"].(string)), &got); err != nil {
				t.Fatalf("ownAnnotations %q: %v", m["expression"], err)
			}
			if diff := cmp.Diff(wellknown.NodeAnnotations, got); diff != "" {
				t.Errorf("the policy's annotations (-wellknown +chart):\n%s", diff)
			}
			return
		}
	}
	t.Fatal("no ownAnnotations variable in the aggregator's Node policy")
}
