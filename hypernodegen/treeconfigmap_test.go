package hypernodegen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

func TestTreeConfigMap(t *testing.T) {
	tests := []struct {
		name string
		tree func(*testing.T) *topology.Tree
		want string
	}{{
		name: "2-tier tree: root without parents, leaves list their nodes sorted",
		tree: twoTierTree,
		want: `[{"layer":2,"name":"fabric","children":["leaf-a","leaf-b"]},` +
			`{"layer":1,"name":"leaf-a","parents":["fabric"],"children":["n1","n2"]},` +
			`{"layer":1,"name":"leaf-b","parents":["fabric"],"children":["n3"]}]`,
	}, {
		name: "accelerator domains are entries of their own",
		tree: acceleratorTree,
		want: `[{"layer":4,"name":"fabric","children":["spine-1","spine-2"]},` +
			`{"layer":3,"name":"spine-1","parents":["fabric"],"children":["leaf-a"]},` +
			`{"layer":3,"name":"spine-2","parents":["fabric"],"children":["leaf-b","leaf-c"]},` +
			`{"layer":2,"name":"leaf-a","parents":["spine-1"],"children":["nvl-1","nvl-2"]},` +
			`{"layer":2,"name":"leaf-b","parents":["spine-2"],"children":["nvl-3"]},` +
			`{"layer":2,"name":"leaf-c","parents":["spine-2"],"children":["n6"]},` +
			`{"layer":1,"name":"nvl-1","parents":["leaf-a"],"children":["n1","n2"]},` +
			`{"layer":1,"name":"nvl-2","parents":["leaf-a"],"children":["n3"]},` +
			`{"layer":1,"name":"nvl-3","parents":["leaf-b"],"children":["n4","n5"]}]`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cm, err := TreeConfigMap("fabricmap-system", "fabricmap-topology", tc.tree(t))
			if err != nil {
				t.Fatal(err)
			}
			if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Namespace != "fabricmap-system" ||
				cm.Name != "fabricmap-topology" || cm.Labels[wellknown.ManagedByLabel] != wellknown.ManagedByValue {
				t.Errorf("object = %+v %+v", cm.TypeMeta, cm.ObjectMeta)
			}
			if len(cm.Data) != 1 || cm.Data[TreeConfigMapKey] != tc.want {
				t.Errorf("data =\n%v\nwant %s =\n%s", cm.Data, TreeConfigMapKey, tc.want)
			}
			var back []TreeConfigMapEntry
			if err := json.Unmarshal([]byte(cm.Data[TreeConfigMapKey]), &back); err != nil || len(back) != len(tc.tree(t).Domains) {
				t.Errorf("decoding back: %d entries, %v", len(back), err)
			}
		})
	}
}

// The same tree, however its maps and slices are ordered, gives the same bytes.
func TestTreeConfigMapDeterministic(t *testing.T) {
	first, err := TreeConfigMap("ns", "topo", acceleratorTree(t))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		tree := acceleratorTree(t)
		leaf := tree.Domains["leaf-a"]
		leaf.Children = []string{"nvl-2", "nvl-1"}
		tree.Domains["nvl-1"].Nodes = []string{"n2", "n1"}
		again, err := TreeConfigMap("ns", "topo", tree)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("output changed (-want +got):\n%s", diff)
		}
	}
}

func TestTreeConfigMapErrors(t *testing.T) {
	huge := func(t *testing.T) *topology.Tree {
		nodes := make([]string, 0, 40000)
		for i := range cap(nodes) {
			nodes = append(nodes, fmt.Sprintf("gpu-node-with-a-long-name-%06d", i))
		}
		return buildTree(t, dom{name: "leaf", tier: 1, nodes: nodes})
	}
	tests := []struct {
		name, ns, cm string
		tree         func(*testing.T) *topology.Tree
		want         string
	}{
		{name: "empty tree", ns: "ns", cm: "topo", tree: func(*testing.T) *topology.Tree { return topology.NewTree() }, want: "no domains"},
		{name: "nil tree", ns: "ns", cm: "topo", tree: func(*testing.T) *topology.Tree { return nil }, want: "no domains"},
		{name: "no namespace", ns: "", cm: "topo", tree: twoTierTree, want: "invalid namespace or name"},
		{name: "bad name", ns: "ns", cm: "Topo_1", tree: twoTierTree, want: "invalid namespace or name"},
		{name: "too large for a ConfigMap", ns: "ns", cm: "topo", tree: huge, want: "at most 1048576"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cm, err := TreeConfigMap(tc.ns, tc.cm, tc.tree(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q (object %v)", err, tc.want, cm != nil)
			}
		})
	}
}
