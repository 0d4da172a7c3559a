package volcano

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
)

// poolLabel puts a node in the pool of one job case: each case's pods select their pool, so the cases share
// fabricmap's tree but not capacity, and run side by side.
const poolLabel = "fabricmap.test/pool"

// gpusPerNode is every node's nvidia.com/gpu; every pod of the jobs asks for all of them (a job of 4 pods is
// 4 × 8 GPUs), so a node holds one pod.
const gpusPerNode = 8

// leaf is one InfiniBand leaf switch of the simulated fabric: the nodes below it and their NVLink domains.
type leaf struct {
	pool, name, guid string
	// nvlink is each node's NVLink domain, in order; its length is the number of nodes.
	nvlink []string
}

// nvl names an NVLink domain (clusterUUID.cliqueId, as the NVML probe reports it) of the given clique.
func nvl(clique int) string { return fmt.Sprintf("3f0c7d1a-2f4b-4c8e-9a61-b7d3e2f14c09.%d", clique) }

// fabric is the simulated fabric, with NVLink domains as the lowest tier (--accelerator-domains): NVLink
// domains are tier 1, leaves tier 2, the root tier 3. Every NVLink domain holds two nodes, so no tier-1
// domain holds a job of four.
var fabric = []leaf{
	// tier1: four pods that must share a tier-1 domain fit nowhere (NVLink domains of two).
	{pool: "tier1", name: "ib-leaf-a1", guid: "0xb83fd20300c0a101", nvlink: []string{nvl(1), nvl(1), nvl(2), nvl(2)}},
	// tier2, tiername, soft: a leaf of three and a leaf of four: four pods that must share a leaf fit only
	// below the second.
	{pool: "tier2", name: "ib-leaf-b1", guid: "0xb83fd20300c0b101", nvlink: []string{nvl(3), nvl(3), nvl(4)}},
	{pool: "tier2", name: "ib-leaf-b2", guid: "0xb83fd20300c0b102", nvlink: []string{nvl(5), nvl(5), nvl(6), nvl(6)}},
	{pool: "tiername", name: "ib-leaf-c1", guid: "0xb83fd20300c0c101", nvlink: []string{nvl(7), nvl(7), nvl(8)}},
	{pool: "tiername", name: "ib-leaf-c2", guid: "0xb83fd20300c0c102", nvlink: []string{nvl(9), nvl(9), nvl(10), nvl(10)}},
	{pool: "soft", name: "ib-leaf-d1", guid: "0xb83fd20300c0d101", nvlink: []string{nvl(11), nvl(11), nvl(12)}},
	{pool: "soft", name: "ib-leaf-d2", guid: "0xb83fd20300c0d102", nvlink: []string{nvl(13), nvl(13), nvl(14), nvl(14)}},
	// nvlink: two NVLink domains of two below one leaf, and a lone node: two pods that must share a tier-1
	// domain land in one of the two.
	{pool: "nvlink", name: "ib-leaf-e1", guid: "0xb83fd20300c0e101", nvlink: []string{nvl(15), nvl(15), nvl(16), nvl(17), nvl(17)}},
	// span: two leaves of three: five pods fit only across both, inside the tier-3 root.
	{pool: "span", name: "ib-leaf-f1", guid: "0xb83fd20300c0f101", nvlink: []string{nvl(18), nvl(18), nvl(19)}},
	{pool: "span", name: "ib-leaf-f2", guid: "0xb83fd20300c0f102", nvlink: []string{nvl(20), nvl(20), nvl(21)}},
}

// nodeName names the i-th node (from 1) below l.
func nodeName(l leaf, i int) string { return fmt.Sprintf("%s-node-%d", l.name, i) }

func objectKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// createFabric creates, for every node of the fabric, a Ready, untainted Node with 8 GPUs and the
// NodeFabricReport its agent would publish (its InfiniBand leaf and NVLink domain).
func createFabric(t *testing.T, ctx context.Context) {
	t.Helper()
	c := testenv.Shared.Client
	for _, l := range fabric {
		for i := 1; i <= len(l.nvlink); i++ {
			name := nodeName(l, i)
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, poolLabel: l.pool}}}
			must(t, "creating Node "+name, c.Create(ctx, n))
			// A new Node is tainted not-ready on admission, and with no kubelet nothing would lift it.
			n.Spec.Taints = nil
			must(t, "removing the not-ready taint of "+name, c.Update(ctx, n))
			capacity := corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("64"),
				corev1.ResourceMemory: resource.MustParse("512Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
				"nvidia.com/gpu":      resource.MustParse(fmt.Sprint(gpusPerNode)),
			}
			n.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
			}}}
			must(t, "setting Node "+name+" Ready with 8 GPUs", c.Status().Update(ctx, n))
			must(t, "creating the report of "+name, c.Create(ctx, fabricReport(l, i)))
		}
	}
}

// fabricReport is the i-th node of l's report: one InfiniBand uplink to l, its NVLink domain.
func fabricReport(l leaf, i int) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: nodeName(l, i)}}
	r.Spec.Neighbors = []v1alpha1.LinkNeighbor{{
		Source: v1alpha1.SourceIBNetDiscover, Interface: "mlx5_0/1", ChassisID: l.guid, ChassisIDSubtype: "guid",
		PortID: fmt.Sprint(i), SystemName: l.name,
	}}
	r.Spec.NVLinkDomain = l.nvlink[i-1]
	return r
}

// leaseName is the aggregator's leader-election Lease, which its Events about the whole fabric are on.
var leaseName = types.NamespacedName{Namespace: "default", Name: "fabricmap-aggregator"}

// startAggregator runs fabricmap's aggregator (its controller manager, in this process, elected through its
// Lease as in the chart) with node labels and NVLink domains as the lowest tier, until the test ends, and
// returns its metrics registry.
func startAggregator(t *testing.T) *prometheus.Registry {
	t.Helper()
	conf := aggregator.Config{
		Inference:         pipeline.Inference{RootName: "fabric", AcceleratorDomains: true},
		NodeLabels:        true,
		LabelKeys:         hypernodegen.DefaultLabelKeys(),
		DeleteGracePeriod: time.Hour,
		DeletionGuard:     &aggregator.DeletionGuard{MaxShare: 0.5, MinCount: 3, Lease: leaseName},
	}
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mgr, err := aggregator.NewManager(testenv.Shared.Config, aggregator.ManagerConfig{
		MetricsAddr: "0", HealthAddr: "0", Registry: reg,
		LeaderElection: true, LeaderElectionNamespace: leaseName.Namespace, LeaderElectionID: leaseName.Name,
	}, conf, nil, log)
	if err != nil {
		t.Fatalf("creating the aggregator: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("aggregator: %v", err)
		}
	})
	return reg
}

// hyperNodeState is what a HyperNode is now: its resourceVersion and the nodes at or below it.
type hyperNodeState struct {
	version string
	tier    int
	owned   bool
	nodes   []string
}

// readHyperNodes returns every HyperNode's state, the nodes below each resolved through the HyperNodes
// made of HyperNodes (members chosen by exact name, as fabricmap writes them by default).
func readHyperNodes(t *testing.T, ctx context.Context) map[string]hyperNodeState {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	must(t, "listing HyperNodes", testenv.Shared.Client.List(ctx, &list))
	byName := map[string]*topologyv1alpha1.HyperNode{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	var below func(name string) []string
	below = func(name string) []string {
		hn := byName[name]
		var out []string
		for _, m := range hn.Spec.Members {
			if m.Selector.ExactMatch == nil {
				continue
			}
			if m.Type == topologyv1alpha1.MemberTypeHyperNode {
				if byName[m.Selector.ExactMatch.Name] != nil {
					out = append(out, below(m.Selector.ExactMatch.Name)...)
				}
				continue
			}
			out = append(out, m.Selector.ExactMatch.Name)
		}
		return out
	}
	out := map[string]hyperNodeState{}
	for name, hn := range byName {
		nodes := below(name)
		slices.Sort(nodes)
		out[name] = hyperNodeState{version: hn.ResourceVersion, tier: hn.Spec.Tier,
			owned: hn.Labels[hypernodeOwnedKey] == hypernodegen.OwnedSelector()[hypernodeOwnedKey], nodes: nodes}
	}
	return out
}

// hypernodeOwnedKey is the label that marks fabricmap's HyperNodes.
var hypernodeOwnedKey = func() string {
	for k := range hypernodegen.OwnedSelector() {
		return k
	}
	return ""
}()

// leaseEvents returns the messages of the Events with reason on the aggregator's Lease.
func leaseEvents(t *testing.T, ctx context.Context, reason string) []string {
	t.Helper()
	var list corev1.EventList
	must(t, "listing Events", testenv.Shared.Client.List(ctx, &list, client.InNamespace(leaseName.Namespace)))
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Lease" && e.InvolvedObject.Name == leaseName.Name && e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}
