package kueue

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
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// topologyName is the Kueue Topology the aggregator writes (its --kueue-topology).
const topologyName = "fabricmap"

// poolLabel puts a node in the pool of one test case; each case's ResourceFlavor selects its pool, so the
// cases share fabricmap's tree and Topology but not capacity.
const poolLabel = "fabricmap.test/pool"

// nodeCPU is every node's CPU; every pod of the cases asks for all of it, so a node holds one pod.
const nodeCPU = "8"

// leaf is one leaf switch of the simulated fabric and how many nodes hang below it.
type leaf struct {
	pool  string
	name  string
	guid  string
	nodes int
	// nvlink gives the NVLink domain of each node below the leaf, in order; empty: none has one.
	nvlink []string
}

// The NVLink domains of the nvlink pools: each spans both leaves of its pool (3 + 3 nodes, a multi-rack
// domain), beside a one-node domain on each leaf.
const (
	nvlinkDomainA = "5e0c7d1a-2f4b-4c8e-9a61-b7d3e2f14c09.1"
	nvlinkDomainB = "5e0c7d1a-2f4b-4c8e-9a61-b7d3e2f14c09.2"
	nvlinkDomainC = "5e0c7d1a-2f4b-4c8e-9a61-b7d3e2f14c09.3"
	nvlinkDomainD = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d.1"
	nvlinkDomainE = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d.2"
	nvlinkDomainF = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d.3"
)

// fabric is the simulated InfiniBand fabric: the leaves of each case's pool.
var fabric = []leaf{
	// required: one leaf of 4, one of 2: three pods that must share a leaf fit only below r1.
	{pool: "required", name: "ib-leaf-r1", guid: "0xb83fd20300c00101", nodes: 4},
	{pool: "required", name: "ib-leaf-r2", guid: "0xb83fd20300c00102", nodes: 2},
	// toolarge: leaves of 2: three pods that must share a leaf fit nowhere.
	{pool: "toolarge", name: "ib-leaf-t1", guid: "0xb83fd20300c00201", nodes: 2},
	{pool: "toolarge", name: "ib-leaf-t2", guid: "0xb83fd20300c00202", nodes: 2},
	// preferred: leaves of 3, 2 and 2: five pods fit in two leaves at best (p1 and one of the others).
	{pool: "preferred", name: "ib-leaf-p1", guid: "0xb83fd20300c00301", nodes: 3},
	{pool: "preferred", name: "ib-leaf-p2", guid: "0xb83fd20300c00302", nodes: 2},
	{pool: "preferred", name: "ib-leaf-p3", guid: "0xb83fd20300c00303", nodes: 2},
	// nvl-domain: NVLink domain A spans both leaves (3 + 3); Kueue's NVLink level lies below the leaf, so
	// three pods that must share one NVLink domain land in one part of A, inside one leaf.
	{pool: "nvl-domain", name: "ib-leaf-nd1", guid: "0xb83fd20300c00401", nodes: 4,
		nvlink: []string{nvlinkDomainA, nvlinkDomainA, nvlinkDomainA, nvlinkDomainB}},
	{pool: "nvl-domain", name: "ib-leaf-nd2", guid: "0xb83fd20300c00402", nodes: 4,
		nvlink: []string{nvlinkDomainA, nvlinkDomainA, nvlinkDomainA, nvlinkDomainC}},
	// nvl-leaf: the same shape; four pods that must share a leaf fill one leaf, across its NVLink domains.
	{pool: "nvl-leaf", name: "ib-leaf-nl1", guid: "0xb83fd20300c00501", nodes: 4,
		nvlink: []string{nvlinkDomainD, nvlinkDomainD, nvlinkDomainD, nvlinkDomainE}},
	{pool: "nvl-leaf", name: "ib-leaf-nl2", guid: "0xb83fd20300c00502", nodes: 4,
		nvlink: []string{nvlinkDomainD, nvlinkDomainD, nvlinkDomainD, nvlinkDomainF}},
}

// nodeName names the i-th node (from 1) below l.
func nodeName(l leaf, i int) string { return fmt.Sprintf("%s-node-%d", l.name, i) }

// createFabric creates a Ready, untainted Node with CPU capacity and a NodeFabricReport of its one InfiniBand uplink for
// every node of the fabric, as the agents would publish them.
func createFabric(t *testing.T, ctx context.Context) {
	t.Helper()
	c := testenv.Shared.Client
	for _, l := range fabric {
		for i := 1; i <= l.nodes; i++ {
			name := nodeName(l, i)
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelHostname: name,
				poolLabel:            l.pool,
			}}}
			if err := c.Create(ctx, n); err != nil {
				t.Fatalf("creating Node %s: %v", name, err)
			}
			// The API server's TaintNodesByCondition admission taints a new Node not-ready; with no kubelet
			// nor node controller, nothing would lift it, and Kueue (like kube-scheduler) keeps off tainted nodes.
			n.Spec.Taints = nil
			if err := c.Update(ctx, n); err != nil {
				t.Fatalf("removing the not-ready taint of Node %s: %v", name, err)
			}
			capacity := corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(nodeCPU),
				corev1.ResourceMemory: resource.MustParse("32Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			}
			n.Status = corev1.NodeStatus{
				Capacity:    capacity,
				Allocatable: capacity,
				// Kueue's Topology Aware Scheduling counts only Ready nodes; no kubelet will ever say otherwise.
				Conditions: []corev1.NodeCondition{{
					Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
					LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
				}},
			}
			if err := c.Status().Update(ctx, n); err != nil {
				t.Fatalf("setting Node %s Ready with capacity: %v", name, err)
			}
			r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: name}}
			r.Spec.Neighbors = []v1alpha1.LinkNeighbor{{
				Source: v1alpha1.SourceIBNetDiscover, Interface: "mlx5_0/1", ChassisID: l.guid, ChassisIDSubtype: "guid",
				PortID: fmt.Sprint(i), SystemName: l.name,
			}}
			if len(l.nvlink) > 0 {
				r.Spec.NVLinkDomain = l.nvlink[i-1]
			}
			if err := c.Create(ctx, r); err != nil {
				t.Fatalf("creating NodeFabricReport %s: %v", name, err)
			}
		}
	}
}

// startAggregator runs fabricmap's aggregator (its controller manager, in this process) with node labels on,
// NVLink domains as accelerator domains and the Kueue Topology output named topologyName, until the test ends.
func startAggregator(t *testing.T) {
	t.Helper()
	conf := aggregator.Config{
		Inference:         pipeline.Inference{RootName: "fabric", AcceleratorDomains: true},
		NodeLabels:        true,
		LabelKeys:         hypernodegen.DefaultLabelKeys(),
		Outputs:           outputs.Options{KueueTopology: topologyName},
		DeleteGracePeriod: time.Hour,
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mgr, err := aggregator.NewManager(testenv.Shared.Config, aggregator.ManagerConfig{
		MetricsAddr: "0", HealthAddr: "0", Registry: prometheus.NewRegistry(),
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
}

// leafKey is the node label of a node's leaf: topograph v1's fabric.topograph.run/tier-0, the default;
// nvlinkKey the node label of its NVLink domain, accelerator.topograph.run/domain.
var (
	leafKey   = hypernodegen.DefaultLabelKeys().Tiers[0]
	nvlinkKey = hypernodegen.DefaultLabelKeys().Accelerator
)

// waitForFabricmapOutputs waits until the aggregator has labelled every node with the leaf it reported and
// written the Kueue Topology, and returns that Topology.
func waitForFabricmapOutputs(t *testing.T, ctx context.Context) *kueuev1beta2.Topology {
	t.Helper()
	c := kueueClient(t)
	topo := &kueuev1beta2.Topology{}
	testenv.Eventually(t, 2*time.Minute, "the aggregator's node labels and Kueue Topology", func() (bool, string) {
		for _, l := range fabric {
			for i := 1; i <= l.nodes; i++ {
				var n corev1.Node
				if err := c.Get(ctx, objectKey(nodeName(l, i)), &n); err != nil {
					return false, err.Error()
				}
				if n.Labels[leafKey] == "" {
					return false, fmt.Sprintf("node %s has no %s label yet: %v", n.Name, leafKey, n.Labels)
				}
			}
		}
		if err := c.Get(ctx, objectKey(topologyName), topo); err != nil {
			return false, fmt.Sprintf("Topology %s: %v", topologyName, err)
		}
		return true, ""
	})
	return topo
}

// checkNVLinkHyperNodes waits until the aggregator's HyperNodes (on the API server, under Volcano's CRD) show
// the nvl-domain pool as the NVLink shape promises: NVLink domain A, which spans both leaves, is one tier-1
// accelerator HyperNode per leaf, each below its leaf HyperNode, marked as a part and labelled with A.
func checkNVLinkHyperNodes(t *testing.T, ctx context.Context) {
	t.Helper()
	c := testenv.Shared.Client
	testenv.Eventually(t, time.Minute, "the NVLink HyperNodes of the nvl-domain pool", func() (bool, string) {
		for _, l := range fabric {
			if l.pool != "nvl-domain" {
				continue
			}
			var leafHN, part topologyv1alpha1.HyperNode
			name := topology.SafeName("nvl-" + nvlinkDomainA + "." + l.name)
			if err := c.Get(ctx, client.ObjectKey{Name: l.name}, &leafHN); err != nil {
				return false, err.Error()
			}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &part); err != nil {
				return false, err.Error()
			}
			var members []string
			for _, m := range leafHN.Spec.Members {
				if m.Selector.ExactMatch != nil {
					members = append(members, m.Selector.ExactMatch.Name)
				}
			}
			if !slices.Contains(members, name) || leafHN.Spec.Tier != 2 {
				return false, fmt.Sprintf("leaf HyperNode %s: tier %d, members %v; want tier 2 holding %s", l.name, leafHN.Spec.Tier, members, name)
			}
			if part.Spec.Tier != 1 || part.Spec.TierName != topology.TierNameAccelerator ||
				part.Annotations[wellknown.NVLinkPartAnnotation] != "true" ||
				part.Labels[wellknown.NVLinkDomainLabel] != hypernodegen.LabelValue(nvlinkDomainA) ||
				len(part.Spec.Members) != 3 {
				return false, fmt.Sprintf("accelerator HyperNode %s: %+v %v %v", name, part.Spec, part.Labels, part.Annotations)
			}
		}
		return true, ""
	})
}
