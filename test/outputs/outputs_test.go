// Package outputs checks the objects hypernodegen writes for other schedulers against the real API server:
// the ClusterNetworkTopology and Kueue Topology CRDs the chart carries are installed, the generated objects are
// accepted by server-side apply and stored unpruned, a second apply of the same objects changes nothing, and
// objects the schemas forbid are refused.
package outputs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	namespace    = "fabricmap-outputs"
	fieldManager = "fabricmap-outputs-test"
)

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// tree is a small fabric: two NVLink domains and a plain node below two leaves, one spine, the root.
func tree(t *testing.T) *topology.Tree {
	t.Helper()
	tr := topology.NewTree()
	for _, d := range []*topology.Domain{
		{Name: "fabric", Tier: 4, TierName: topology.TierNameRoot, Children: []string{"spine-1"}},
		{Name: "spine-1", Tier: 3, TierName: topology.TierNameSpine, Parent: "fabric", Children: []string{"leaf-a", "leaf-b"}},
		{Name: "leaf-a", Tier: 2, TierName: topology.TierNameLeaf, Parent: "spine-1", Children: []string{"nvl-1", "nvl-2"}},
		{Name: "leaf-b", Tier: 2, TierName: topology.TierNameLeaf, Parent: "spine-1", Nodes: []string{"gpu-5"}},
		{Name: "nvl-1", Tier: 1, TierName: topology.TierNameAccelerator, Parent: "leaf-a", Nodes: []string{"gpu-1", "gpu-2"}},
		{Name: "nvl-2", Tier: 1, TierName: topology.TierNameAccelerator, Parent: "leaf-a", Nodes: []string{"gpu-3", "gpu-4"}},
	} {
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// TestCRDsInstalled proves the two CRD files under charts/fabricmap/files/crds are what the server serves.
func TestCRDsInstalled(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	dir := filepath.Join(testenv.RepoRoot(), "charts", "fabricmap", "files", "crds")
	for _, file := range []string{"scheduling.koordinator.sh_clusternetworktopologies.yaml", "kueue.x-k8s.io_topologies.yaml"} {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		want := &unstructured.Unstructured{}
		err = yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&want.Object)
		_ = f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(crdGVK)
		if err := testenv.Shared.Client.Get(ctx, client.ObjectKey{Name: want.GetName()}, got); err != nil {
			t.Fatalf("%s: CRD %s not installed: %v", file, want.GetName(), err)
		}
		if !established(got) {
			t.Errorf("%s: CRD %s is not established", file, want.GetName())
		}
	}
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// TestGeneratedObjectsAccepted applies each generated object, reads it back unchanged (nothing pruned by the
// schema), and applies it again without a new resourceVersion.
func TestGeneratedObjectsAccepted(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	ensureNamespace(t, ctx, c)
	tr := tree(t)
	keys := hypernodegen.DefaultLabelKeys()

	cnt, err := hypernodegen.ClusterNetworkTopology(keys, tr)
	if err != nil {
		t.Fatal(err)
	}
	kueueTopo, err := hypernodegen.KueueTopology("fabricmap", keys, tr)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := hypernodegen.TreeConfigMap(namespace, "fabricmap-topology", tr)
	if err != nil {
		t.Fatal(err)
	}
	// leaf-b's HyperNode with its node selected by a regular expression, then by the node label.
	leafB := func(opts hypernodegen.Options) runtime.Object {
		hns, err := hypernodegen.HyperNodes(tr, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range hns {
			if hns[i].Name == "leaf-b" {
				return &hns[i]
			}
		}
		t.Fatal("no HyperNode leaf-b")
		return nil
	}
	for _, tc := range []struct {
		name  string
		obj   runtime.Object
		field string // the top-level field that must come back as sent
	}{
		{name: "HyperNode regexMatch", obj: leafB(hypernodegen.Options{NodeSelector: hypernodegen.SelectorRegex}), field: "spec"},
		{name: "HyperNode labelMatch", obj: leafB(hypernodegen.Options{NodeSelector: hypernodegen.SelectorLabel, LabelKeys: keys}), field: "spec"},
		{name: "ClusterNetworkTopology", obj: cnt, field: "spec"},
		{name: "KueueTopology", obj: kueueTopo, field: "spec"},
		{name: "TreeConfigMap", obj: cm, field: "data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := toUnstructured(t, tc.obj)
			if err := apply(ctx, c, u); err != nil {
				t.Fatalf("refused: %v", err)
			}
			stored := get(t, ctx, c, u)
			if diff := cmp.Diff(u.Object[tc.field], stored.Object[tc.field]); diff != "" {
				t.Errorf("stored %s differs from the one sent, pruned or defaulted (-want sent +got stored):\n%s", tc.field, diff)
			}
			if stored.GetLabels()[wellknown.ManagedByLabel] != wellknown.ManagedByValue {
				t.Errorf("labels = %v", stored.GetLabels())
			}
			if err := apply(ctx, c, toUnstructured(t, tc.obj)); err != nil {
				t.Fatalf("second apply: %v", err)
			}
			if again := get(t, ctx, c, u); again.GetResourceVersion() != stored.GetResourceVersion() {
				t.Errorf("reapplying the same object wrote it again: resourceVersion %s -> %s", stored.GetResourceVersion(), again.GetResourceVersion())
			}
		})
	}
}

// TestInvalidObjectsRefused sends objects the schemas forbid.
func TestInvalidObjectsRefused(t *testing.T) {
	testenv.Require(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	kueueTopo := func(name string, levels ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		u.SetAPIVersion("kueue.x-k8s.io/v1beta2")
		u.SetKind("Topology")
		u.SetName(name)
		var ls []any
		for _, l := range levels {
			ls = append(ls, map[string]any{"nodeLabel": l})
		}
		if ls != nil {
			u.Object["spec"] = map[string]any{"levels": ls}
		}
		return u
	}
	cnt := func(name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(hypernodegen.ClusterNetworkTopologyGVK)
		u.SetName(name)
		return u
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{name: "Kueue Topology without levels", obj: kueueTopo("no-levels")},
		{name: "Kueue Topology with hostname above another level",
			obj: kueueTopo("hostname-first", "kubernetes.io/hostname", "network.topology.nvidia.com/block")},
		{name: "Kueue Topology with a level twice",
			obj: kueueTopo("twice", "network.topology.nvidia.com/block", "network.topology.nvidia.com/block")},
		{name: "ClusterNetworkTopology without networkTopologySpec", obj: cnt("no-layers", map[string]any{})},
		{name: "ClusterNetworkTopology entry without topologyLayer", obj: cnt("no-layer-name", map[string]any{
			"networkTopologySpec": []any{map[string]any{"labelKey": []any{"network.topology.nvidia.com/block"}}},
		})},
		{name: "ClusterNetworkTopology with a string for labelKey", obj: cnt("scalar-key", map[string]any{
			"networkTopologySpec": []any{map[string]any{"topologyLayer": "BlockLayer", "labelKey": "network.topology.nvidia.com/block"}},
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Validation proper answers a create with 422 Invalid; server-side apply refuses the same object too
			// (a value of the wrong type already fails while the server builds the typed patch, with a 500).
			err := c.Create(ctx, tc.obj.DeepCopy(), client.DryRunAll)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: err = %v, want the server to refuse it as invalid", err)
			}
			if err := apply(ctx, c, tc.obj); err == nil {
				t.Fatal("server-side apply accepted it")
			}
			t.Logf("refused as expected: %v", err)
		})
	}
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy()
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u
}

func apply(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldManager), client.ForceOwnership)
}

func get(t *testing.T, ctx context.Context, c client.Client, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(u.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(u), out); err != nil {
		t.Fatalf("reading back %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

func ensureNamespace(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
