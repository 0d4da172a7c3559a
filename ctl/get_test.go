package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/view"
)

const blockKey, spineKey = "network.topology.nvidia.com/block", "network.topology.nvidia.com/spine"

// fixtureKeys are the node-label keys of clusterObjects' labels, given as the aggregator's flags would give them.
var fixtureKeys = hypernodegen.LabelKeys{Tiers: []string{blockKey, spineKey}}

// cluster is a fake API server holding clusterObjects.
func cluster(t *testing.T) client.Client {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(kube.Scheme()).WithObjects(clusterObjects()...).Build()
}

// clusterObjects are a two-leaf fabric: leaf-a selects its nodes by regex, leaf-b by label; gpu-b1's spine
// label is stale, gpu-lonely has no topology, ghost is in a HyperNode but has no Node, and someone-elses is a
// HyperNode fabricmap did not make.
func clusterObjects() []client.Object {
	hns := []topologyv1alpha1.HyperNode{
		hyperNode("fabric", 2, exact(topologyv1alpha1.MemberTypeHyperNode, "leaf-a"), exact(topologyv1alpha1.MemberTypeHyperNode, "leaf-b")),
		hyperNode("leaf-a", 1, regex("^(?:gpu-a1|gpu-a2)$"), exact(topologyv1alpha1.MemberTypeNode, "ghost")),
		hyperNode("leaf-b", 1, label(blockKey, "leaf-b")),
	}
	foreign := hyperNode("someone-elses", 1, exact(topologyv1alpha1.MemberTypeNode, "gpu-a1"))
	foreign.Labels = nil
	node := func(name string, labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	objs := []client.Object{
		node("gpu-a1", map[string]string{blockKey: "leaf-a", spineKey: "fabric", "kubernetes.io/os": "linux"}),
		node("gpu-a2", map[string]string{blockKey: "leaf-a", spineKey: "fabric"}),
		node("gpu-b1", map[string]string{blockKey: "leaf-b", spineKey: "old-spine"}),
		node("gpu-lonely", nil),
		&foreign,
	}
	for i := range hns {
		objs = append(objs, &hns[i])
	}
	return objs
}

// nodesOutput are the options of `get nodes -o output`.
func nodesOutput(output string) nodesOptions {
	return nodesOptions{getOptions: getOptions{output: &outputFlag{value: output}}}
}

func TestRenderNodes(t *testing.T) {
	for _, tc := range []struct {
		output string
		want   []string
	}{
		{"tree", []string{
			"ghost: leaf-a (tier 1) → fabric (tier 2)  [no Node object]\n",
			"gpu-a1: leaf-a (tier 1) → fabric (tier 2)\n    network.topology.nvidia.com/block=leaf-a\n    network.topology.nvidia.com/spine=fabric\n",
			"gpu-b1: leaf-b (tier 1) → fabric (tier 2)\n    network.topology.nvidia.com/block=leaf-b\n    network.topology.nvidia.com/spine=old-spine  (tree says fabric)\n",
			"gpu-lonely: no topology\n    (no fabricmap labels)\n",
			"nodes without topology (1): gpu-lonely\n",
		}},
		{"dot", []string{`"leaf-a" -> "node/gpu-a2";`, `"node/gpu-lonely" [shape=ellipse, style=dashed`}},
		{"yaml", []string{"- noTopology: true\n  node: gpu-lonely", "- expected:\n    network.topology.nvidia.com/spine: fabric"}},
	} {
		t.Run(tc.output, func(t *testing.T) {
			var out, errw bytes.Buffer
			if err := renderNodes(context.Background(), cluster(t), &out, &errw, nodesOutput(tc.output), fixtureKeys); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String(), "kubernetes.io/os") || strings.Contains(out.String(), "someone-elses") {
				t.Errorf("output shows a label or HyperNode that is not fabricmap's:\n%s", out.String())
			}
			if errw.Len() > 0 {
				t.Errorf("warnings: %s", errw.String())
			}
		})
	}
}

func TestRenderNodesJSON(t *testing.T) {
	var out, errw bytes.Buffer
	if err := renderNodes(context.Background(), cluster(t), &out, &errw, nodesOutput("json"), fixtureKeys); err != nil {
		t.Fatal(err)
	}
	var got struct{ Nodes []view.NodePlace }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	byName := map[string]view.NodePlace{}
	for _, p := range got.Nodes {
		byName[p.Node] = p
	}
	if len(got.Nodes) != 5 || len(byName["gpu-b1"].Path) != 2 || byName["gpu-b1"].Path[1].Name != "fabric" ||
		!byName["gpu-lonely"].NoTopology || !byName["ghost"].NoNodeObject {
		t.Errorf("nodes: %+v", got.Nodes)
	}
}

func TestGetHyperNodesResolvesMembers(t *testing.T) {
	c := cluster(t)
	items, err := listHyperNodes(context.Background(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := listNodeLabels(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	if err := printResolvedHyperNodes(&out, &errw, items, nodes, "tree", treeShape{}); err != nil {
		t.Fatal(err)
	}
	want := `fabric  (tier 2, 4 nodes, source reports)
├── leaf-a  (tier 1, 3 nodes, source reports)
│   ├── ghost
│   ├── gpu-a1
│   └── gpu-a2
└── leaf-b  (tier 1, 1 nodes, source reports)
    └── gpu-b1
`
	if out.String() != want || errw.Len() > 0 {
		t.Errorf("got\n%s\nwant\n%s\nwarnings: %s", out.String(), want, errw.String())
	}
}

// HyperNodes are anyone's to write, and a tier name is free text: one with a terminal escape and a newline
// is printed escaped, on its line.
func TestGetHyperNodesEscapesControlCharacters(t *testing.T) {
	hn := hyperNode("rack-b", 1, exact(topologyv1alpha1.MemberTypeNode, "gpu-b1"))
	hn.Spec.TierName = "\x1b[31mrack\nB"
	var out, errw bytes.Buffer
	if err := printHyperNodes(&out, &errw, []topologyv1alpha1.HyperNode{hn}, "tree"); err != nil {
		t.Fatal(err)
	}
	want := "rack-b  (tier 1, \\x1b[31mrack\\nB, 1 nodes, source reports)\n└── gpu-b1\n"
	if diff := cmp.Diff(want, out.String()); diff != "" || errw.Len() > 0 {
		t.Errorf("output (-want +got):\n%s\nwarnings: %s", diff, errw.String())
	}
}
