package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placer"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
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
		p.Spec.Containers = []corev1.Container{gpuContainer(gpus)}
		return p
	}
	pods := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: []corev1.Pod{
		pod("low-0", "gpu-a1", "8", map[string]string{wellknown.PodGroupLabelLegacy: "low", wellknown.KoordinatorPreemptibleLabel: "true"}),
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

// gpuContainer is a valid container asking for gpus GPUs (an extended resource: its limit equals its request).
func gpuContainer(gpus string) corev1.Container {
	rl := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
	return corev1.Container{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}
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

// TestPlaceMatchesPlacer gives `fabricmap place` (dumps) and the placer (the cluster's objects, read as its
// controller reads them) the same cluster and expects the same plan: nodes tainted or reserved for another
// gang are not used, pods pinned but not bound count, and running gangs of every form can be preempted.
func TestPlaceMatchesPlacer(t *testing.T) {
	dir := placeFixture(t)
	in := func(name string) string { return filepath.Join(dir, name) }
	var hns []topologyv1alpha1.HyperNode
	var nodes []corev1.Node
	var pods []corev1.Pod
	for _, err := range []error{readObjects(in("tree.yaml"), "HyperNode", &hns), readObjects(in("nodes.yaml"), "Node", &nodes), readObjects(in("pods.yaml"), "Pod", &pods)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// gpu-a2 is tainted, gpu-a3 reserved for ml/later (which still waits), gpu-b2 holds a pod pinned there by the
	// placer and a Koordinator gang; gpu-a1 runs the scheduler-plugins gang "low" already.
	nodes[1].Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
	nodes[2].Spec.Taints = []corev1.Taint{{Key: wellknown.ReservedTaint, Value: placer.TaintValue("ml/later"), Effect: corev1.TaintEffectNoSchedule}}
	nodes[2].Annotations = map[string]string{wellknown.ReservedForAnnotation: "ml/later",
		wellknown.ReservedUntilAnnotation: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	gpuPod := func(name, node, gpus string, labels, annotations map[string]string) corev1.Pod {
		p := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", Labels: labels, Annotations: annotations}}
		p.Spec.NodeName = node
		p.Spec.Containers = []corev1.Container{gpuContainer(gpus)}
		return p
	}
	pinned := gpuPod("pinned", "", "2", map[string]string{wellknown.GangLabel: "pinned"}, map[string]string{wellknown.PlacementAnnotation: `{"gang":"ml/pinned","node":"gpu-b2","rank":0}`})
	pods = append(pods, pinned,
		gpuPod("koord-0", "gpu-b2", "2", map[string]string{wellknown.PreemptibleLabel: "true"}, map[string]string{wellknown.KoordinatorGangName: "koord"}),
		gpuPod("later-0", "", "8", map[string]string{wellknown.GangLabel: "later"}, nil))
	for name, v := range map[string]any{"nodes.yaml": corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: nodes},
		"pods.yaml": corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: pods}} {
		data, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in(name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var objs []client.Object
	for i := range hns {
		objs = append(objs, &hns[i])
	}
	for i := range nodes {
		objs = append(objs, &nodes[i])
	}
	for i := range pods {
		objs = append(objs, &pods[i])
	}
	c := clusterWith(t, objs)

	cases := []struct {
		name, gang string
		preempt    bool
		noRoom     bool // no plan on either path
	}{
		{"free capacity", "name=train,pods=2,nvidia.com/gpu=4", false, false},
		{"pinned pod counts", "name=train,pods=1,nvidia.com/gpu=5", false, true},
		{"preempts a PodGroup gang", "name=train,pods=1,nvidia.com/gpu=8,priority=5", true, false},
		{"preempts a Koordinator gang", "name=train,pods=1,nvidia.com/gpu=6,priority=5", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"place", "--topology", in("tree.yaml"), "--nodes", in("nodes.yaml"), "--pods", in("pods.yaml"), "--gang", tc.gang, "-o", "json"}
			if tc.preempt {
				args = append(args, "--preempt")
			}
			out, _, cliErr := run(t, args...)
			g, err := parseGang(tc.gang)
			if err != nil {
				t.Fatal(err)
			}
			st, err := placer.ReadSnapshot(context.Background(), c, c, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			pc, _, err := st.Cluster(g.Name, nil, placer.Preemption{Enabled: true})
			if err != nil {
				t.Fatal(err)
			}
			want, err := pc.Place(g)
			if tc.preempt && errors.Is(err, placement.ErrNoPlacement) {
				want, err = pc.Preempt(g)
			}
			if tc.noRoom {
				if !errors.Is(err, placement.ErrNoPlacement) || !errors.Is(cliErr, placement.ErrNoPlacement) {
					t.Fatalf("placer: %v, fabricmap place: %v; want no placement from both", err, cliErr)
				}
				return
			}
			if err != nil || cliErr != nil {
				t.Fatalf("placer: %v, fabricmap place: %v", err, cliErr)
			}
			var cli placement.Plan
			if err := json.Unmarshal([]byte(out), &cli); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*want, cli); diff != "" {
				t.Errorf("fabricmap place's plan (-placer +cli):\n%s", diff)
			}
			for _, n := range cli.Ranks {
				if n == "gpu-a2" || n == "gpu-a3" {
					t.Errorf("plan %v uses tainted or reserved %s", cli.Ranks, n)
				}
			}
			if tc.preempt && len(cli.Victims) == 0 {
				t.Errorf("plan %v preempts nobody", cli.Ranks)
			}
		})
	}
}

// clusterWith starts a real API server (etcd + kube-apiserver, as the placer reads it in a cluster) holding
// objs, pods' status included; it skips when the control plane's binaries are missing, except under CI.
func clusterWith(t *testing.T, objs []client.Object) client.Client {
	t.Helper()
	env := testenv.StartForTest(t)
	ctx := context.Background()
	c := env.Client
	namespaces := map[string]bool{}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && !namespaces[ns] {
			namespaces[ns] = true
			if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, o := range objs {
		o = o.DeepCopyObject().(client.Object)
		// The API server ignores a Pod's or Node's status on create, and admission taints a new Node not-ready
		// until the node lifecycle controller sees its kubelet Ready (no such controller runs here): set both
		// afterwards, as the kubelet and that controller would.
		var after func() error
		switch x := o.(type) {
		case *corev1.Pod:
			status := x.Status
			after = func() error { x.Status = status; return c.Status().Update(ctx, x) }
		case *corev1.Node:
			status, taints := x.Status, x.Spec.Taints
			after = func() error {
				x.Spec.Taints = taints
				if err := c.Update(ctx, x); err != nil {
					return err
				}
				x.Status = status
				return c.Status().Update(ctx, x)
			}
		}
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		if after != nil {
			if err := after(); err != nil {
				t.Fatalf("setting the taints and status of %s: %v", o.GetName(), err)
			}
		}
	}
	return c
}
