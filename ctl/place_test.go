package ctl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/topology"
)

// placeFixture writes, into a temporary folder, the HyperNodes of a two-leaf tree (as `fabricmap topology -o
// yaml` prints them), its ClusterNetworkTopology, and dumps of its Nodes (8 GPUs each, labelled) and of Pods:
// gpu-a1 is full (a preemptible gang "low"), gpu-b1 is half used by an unlabelled pod.
func placeFixture(t *testing.T) (dir string) {
	t.Helper()
	tr := topology.NewTree()
	for _, d := range []*topology.Domain{
		{Name: "fabric", Tier: 2, TierName: "spine", Children: []string{"leaf-a", "leaf-b"}},
		{Name: "leaf-a", Tier: 1, TierName: "leaf", Parent: "fabric", Nodes: []string{"gpu-a1", "gpu-a2", "gpu-a3"}},
		{Name: "leaf-b", Tier: 1, TierName: "leaf", Parent: "fabric", Nodes: []string{"gpu-b1", "gpu-b2"}},
	} {
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	hns, err := hypernodegen.HyperNodes(tr, hypernodegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := topologyv1alpha1.HyperNodeList{Items: hns}
	list.APIVersion, list.Kind = "v1", "List"
	cnt, err := hypernodegen.ClusterNetworkTopology(hypernodegen.DefaultLabelKeys(), tr)
	if err != nil {
		t.Fatal(err)
	}
	labels := hypernodegen.NodeLabels(tr, nil, hypernodegen.DefaultLabelKeys())
	nodes := corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, n := range []string{"gpu-a1", "gpu-a2", "gpu-a3", "gpu-b1", "gpu-b2"} {
		node := corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels[n]}}
		node.Status.Allocatable = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("96")}
		nodes.Items = append(nodes.Items, node)
	}
	pod := func(name, node, gpus string, lbls map[string]string) corev1.Pod {
		p := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", Labels: lbls}}
		p.Spec.NodeName = node
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}}}}
		return p
	}
	pods := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: []corev1.Pod{
		pod("low-0", "gpu-a1", "8", map[string]string{gangLabel: "low", preemptibleLabel: "true"}),
		pod("other", "gpu-b1", "4", nil),
	}}
	dir = t.TempDir()
	for name, v := range map[string]any{"tree.yaml": list, "cnt.yaml": cnt, "nodes.yaml": nodes, "pods.yaml": pods} {
		data, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPlace runs `fabricmap place` on files, in text and JSON.
func TestPlace(t *testing.T) {
	dir := placeFixture(t)
	in := func(name string) string { return filepath.Join(dir, name) }
	cases := []struct {
		name    string
		args    []string
		want    []string // substrings of stdout
		wantErr string
	}{
		{"uniform nodes", []string{"--topology", in("tree.yaml"), "--gang", "pods=3,nvidia.com/gpu=8"},
			[]string{"gang gang: 3 pods in leaf leaf-a (tier 1)", "RANK", "gpu-a3"}, ""},
		{"usage from the pods dump", []string{"--topology", in("tree.yaml"), "--nodes", in("nodes.yaml"), "--pods", in("pods.yaml"), "--gang", "name=train,pods=2,pp=2,nvidia.com/gpu=8"},
			[]string{"gang train: 2 pods in leaf leaf-a (tier 1)", "gpu-a2", "gpu-a3"}, ""},
		{"ClusterNetworkTopology and labels", []string{"--topology", in("cnt.yaml"), "--nodes", in("nodes.yaml"), "--gang", "pods=2,nvidia.com/gpu=8,hard-tier=1"},
			[]string{"gang gang: 2 pods in"}, ""},
		{"ClusterNetworkTopology without nodes", []string{"--topology", in("cnt.yaml"), "--gang", "pods=2,nvidia.com/gpu=8"}, nil, "give --nodes"},
		{"preemption", []string{"--topology", in("tree.yaml"), "--nodes", in("nodes.yaml"), "--pods", in("pods.yaml"), "--preempt", "--gang", "pods=3,nvidia.com/gpu=8,hard-tier=leaf,priority=5"},
			[]string{"preempts: ml/low", "gpu-a1"}, ""},
		{"too big for the hard limit", []string{"--topology", in("tree.yaml"), "--gang", "pods=4,nvidia.com/gpu=8,hard-tier=leaf"}, nil, "no placement"},
		{"DP x PP is not M", []string{"--topology", in("tree.yaml"), "--gang", "pods=4,dp=3,pp=2,nvidia.com/gpu=8"}, nil, "gang.dp"},
		{"unknown resource", []string{"--topology", in("tree.yaml"), "--gang", "pods=1,amd.com/gpu=1"}, nil, "gang.request[amd.com/gpu]"},
		{"unknown tier", []string{"--topology", in("tree.yaml"), "--gang", "pods=1,nvidia.com/gpu=1,hard-tier=rack"}, nil, "gang.hardTierName"},
		{"bad spec", []string{"--topology", in("tree.yaml"), "--gang", "pods=x,nvidia.com/gpu=1"}, nil, "--gang pods"},
		{"no gang", []string{"--topology", in("tree.yaml")}, nil, "give --gang"},
		{"roles", []string{"--topology", in("tree.yaml"), "--nodes", in("nodes.yaml"), "--gang", "role=launcher:1:nvidia.com/gpu=1,role=worker:2:nvidia.com/gpu=8+cpu=8"},
			[]string{"gang gang: 3 pods in leaf leaf-a (tier 1)", "launcher", "worker"}, ""},
		{"bad role", []string{"--topology", in("tree.yaml"), "--gang", "role=worker:two:nvidia.com/gpu=8"}, nil, "role worker pods"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"place"}, tc.args...)...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	out, _, err := run(t, "place", "--topology", in("tree.yaml"), "--gang", "pods=4,pp=2,nvidia.com/gpu=8", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var p placement.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Ranks) != 4 || p.GangTier != 2 || p.GroupTier != 1 {
		t.Errorf("plan %+v: want 4 ranks, gang tier 2, groups within leaves", p)
	}
}
