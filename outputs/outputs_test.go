package outputs

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestRegistry holds the registry's rules: names and -o formats unique, every output the aggregator writes
// through the registry owned (cleanup finds it), and every output printable.
func TestRegistry(t *testing.T) {
	var o Options
	names, formats := map[string]bool{}, map[string]bool{}
	for _, k := range o.Kinds() {
		if names[k.Name] {
			t.Errorf("output %s listed twice", k.Name)
		}
		names[k.Name] = true
		for _, f := range k.Formats {
			if formats[f] {
				t.Errorf("-o %s given by two outputs", f)
			}
			formats[f] = true
		}
		if k.Build != nil && k.Owned == nil {
			t.Errorf("output %s is written but not owned: cleanup would leave it", k.Name)
		}
		if k.Doc == "" {
			t.Errorf("output %s has no Doc", k.Name)
		}
	}
	if got := Formats(); got[0] != "yaml" || !slices.Contains(got, "slurm") || !slices.Contains(got, "nfd") {
		t.Errorf("Formats() = %v: want yaml first, slurm and nfd among them", got)
	}
}

func TestGiven(t *testing.T) {
	o := Options{KueueTopology: "k", KAITopology: "kai", Slurm: SlurmOptions{ConfigMap: "ns/s"}, NodeFeatures: true}
	var given []string
	for _, k := range o.Kinds() {
		if k.Given {
			given = append(given, k.Name)
		}
	}
	if diff := cmp.Diff([]string{NameKueueTopology, NameKAITopology, NameSlurmConfigMap, NameNodeFeatures}, given); diff != "" {
		t.Errorf("outputs turned on (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	keys := func(tree, block, yaml string) SlurmOptions {
		return SlurmOptions{ConfigMap: "ns/slurm", TreeKey: tree, BlockKey: block, YAMLKey: yaml}
	}
	for _, tc := range []struct {
		name string
		o    Options
		err  string
	}{
		{name: "nothing", o: Options{}},
		{name: "all", o: Options{TreeConfigMap: "ns/tree", KAITopology: "fabricmap", Slurm: keys("topology.conf", "block.conf", "topology.yaml")}},
		{name: "KAI Topology name not an object name", o: Options{KAITopology: "KAI_Topology"}, err: `--kai-topology: "KAI_Topology" is not a valid object name`},
		{name: "tree ConfigMap without namespace", o: Options{TreeConfigMap: "tree"}, err: "--tree-configmap"},
		{name: "Slurm ConfigMap without namespace", o: Options{Slurm: SlurmOptions{ConfigMap: "slurm", TreeKey: "t"}}, err: "--slurm-configmap"},
		{name: "a key twice", o: Options{Slurm: keys("topology.conf", "topology.conf", "")}, err: "given for two files"},
		{name: "a bad key", o: Options{Slurm: keys("topo/conf", "", "")}, err: `key "topo/conf"`},
		{name: "no key", o: Options{Slurm: keys("", "", "")}, err: "every key"},
		{name: "block sizes not doubling", o: Options{Slurm: SlurmOptions{BlockSizes: []int{18, 30}}}, err: "--slurm-block-sizes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.err)
			}
		})
	}
}

func fatTree(t *testing.T) *topology.Tree {
	return topologytest.Tree(t,
		"fabric/3/fabric: spine-1",
		"spine-1/2/spine: leaf-a leaf-b",
		"leaf-a/1/leaf: gpu-001 gpu-002",
		"leaf-b/1/leaf: gpu-003",
	)
}

func TestNodeFeatures(t *testing.T) {
	keys := hypernodegen.DefaultLabelKeys()
	objs, err := NodeFeatures(fatTree(t), Env{LabelKeys: keys, Namespace: "fabricmap"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		u := o.Object.(*unstructured.Unstructured)
		names = append(names, u.GetNamespace()+"/"+u.GetName())
		node := strings.TrimPrefix(u.GetName(), NodeFeatureNamePrefix)
		if u.GetLabels()[NodeFeatureNodeLabel] != node || u.GetLabels()[wellknown.ManagedByLabel] != wellknown.ManagedByValue {
			t.Errorf("%s: labels %v", u.GetName(), u.GetLabels())
		}
		labels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "labels")
		want := hypernodegen.DesiredNodeLabels(fatTree(t), nil, keys)[node]
		if diff := cmp.Diff(want, labels); diff != "" {
			t.Errorf("%s: spec.labels (-want +got):\n%s", u.GetName(), diff)
		}
	}
	if diff := cmp.Diff([]string{"fabricmap/fabricmap-gpu-001", "fabricmap/fabricmap-gpu-002", "fabricmap/fabricmap-gpu-003"}, names); diff != "" {
		t.Errorf("NodeFeatures (-want +got):\n%s", diff)
	}
	if _, err := NodeFeatures(topology.NewTree(), Env{LabelKeys: keys}); err == nil {
		t.Error("an empty tree gave NodeFeatures: every one written would be pruned")
	}
}

// TestText prints each format of the registry from one tree: every one gives text naming the tree's nodes,
// domains or label keys.
func TestText(t *testing.T) {
	o := Options{KueueTopology: "default", KAITopology: "default"}
	env := Env{LabelKeys: hypernodegen.DefaultLabelKeys(), Namespace: "default"}
	for _, f := range Formats() {
		k, ok := o.ByFormat(f)
		if !ok {
			t.Fatalf("no output prints -o %s", f)
		}
		if k.Name == NameHyperNodes {
			continue // the CLI draws them
		}
		text, err := k.Text(fatTree(t), env, f)
		if err != nil {
			t.Errorf("-o %s: %v", f, err)
			continue
		}
		if !strings.Contains(string(text), "leaf-a") && !strings.Contains(string(text), "gpu-001") && !strings.Contains(string(text), env.LabelKeys.Tiers[0]) {
			t.Errorf("-o %s names neither leaf-a, gpu-001 nor %s:\n%s", f, env.LabelKeys.Tiers[0], text)
		}
	}
}

// TestKAITopologyKind: the KAI output writes the one Topology named, replaced rather than changed (KAI's schema
// refuses changed levels), pruned (a renamed or turned-off one goes), and owned by its own group, apart from
// Kueue's Topology.
func TestKAITopologyKind(t *testing.T) {
	o := Options{KAITopology: "fabric"}
	k, ok := o.ByFormat("kai")
	if !ok || k.Name != NameKAITopology {
		t.Fatalf("-o kai is printed by %q (found %v), want %s", k.Name, ok, NameKAITopology)
	}
	if !k.Given || !k.Prune || k.Owned == nil || k.Owned.Namespaced {
		t.Errorf("kind = %+v: want given, pruned, owned cluster-wide", k)
	}
	if diff := cmp.Diff(hypernodegen.KAITopologyGVK.GroupKind(), k.Owned.GroupKind); diff != "" {
		t.Errorf("owned kind (-want +got):\n%s", diff)
	}
	objs, err := k.Build(fatTree(t), Env{LabelKeys: hypernodegen.DefaultLabelKeys()})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Field != "spec" || !objs[0].Immutable {
		t.Fatalf("objects = %+v: want one, its spec immutable", objs)
	}
	u := objs[0].Object.(*unstructured.Unstructured)
	keys := hypernodegen.DefaultLabelKeys()
	levels, _, _ := unstructured.NestedSlice(u.Object, "spec", "levels")
	want := []any{map[string]any{"nodeLabel": keys.Tiers[2]}, map[string]any{"nodeLabel": keys.Tiers[1]}, map[string]any{"nodeLabel": keys.Tiers[0]},
		map[string]any{"nodeLabel": "kubernetes.io/hostname"}}
	if diff := cmp.Diff(want, levels); diff != "" || u.GetName() != "fabric" {
		t.Errorf("Topology %s levels (-want +got):\n%s", u.GetName(), diff)
	}
	if (&Options{}).kaiTopology().Given {
		t.Error("the KAI output is on without --kai-topology")
	}
}

// TestNodeFeaturesSayWhomTheyLeaveOut: a node whose name is longer than a label value (63 characters: NFD
// finds the node by its nfd.node.kubernetes.io/node-name label) gets no NodeFeature, and Env.Unwritable is told
// which node and why; the others are written.
func TestNodeFeaturesSayWhomTheyLeaveOut(t *testing.T) {
	long := "gpu-" + strings.Repeat("a", 60) // 64 characters: a valid node name, no valid label value
	tree := topologytest.Tree(t,
		"fabric/2/fabric: leaf-a",
		"leaf-a/1/leaf: gpu-001 "+long,
	)
	type leftOut struct{ Output, Node string }
	var got []leftOut
	env := Env{LabelKeys: hypernodegen.DefaultLabelKeys(), Namespace: "fabricmap",
		Unwritable: func(output, node, why string) {
			if !strings.Contains(why, NodeFeatureNodeLabel) {
				t.Errorf("why %q does not name the label", why)
			}
			got = append(got, leftOut{output, node})
		}}
	objs, err := NodeFeatures(tree, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Object.(*unstructured.Unstructured).GetName() != NodeFeatureNamePrefix+"gpu-001" {
		t.Errorf("NodeFeatures = %v, want only gpu-001's", objs)
	}
	if diff := cmp.Diff([]leftOut{{NameNodeFeatures, long}}, got); diff != "" {
		t.Errorf("nodes said to be left out (-want +got):\n%s", diff)
	}
}
