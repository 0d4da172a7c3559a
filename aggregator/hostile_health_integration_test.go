package aggregator

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
)

// hostileReportFile is a report within the CRD's limits that lists twenty HCAs of rail 5 cabled to the rail-1
// leaf of its unit (its comment says more).
const hostileReportFile = "testdata/hostile/report.yaml"

// hrLeaf is the GUID of rail i's leaf in the unit of hostileReportFile, as the reports give it.
func hrLeaf(i int) string { return fmt.Sprintf("0xb83fd20300c1000%d", i) }

// hrHost is an honest report of that unit: GPUs 0 … 7 and the HCA nearest GPU i (mlx5_i) cabled to rail i's
// leaf at 400 Gb/s, healthy.
func hrHost(node string) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for i := range 8 {
		gpu := v1alpha1.GPU{Index: int32(i), UUID: fmt.Sprintf("GPU-%s-%d", node, i)}
		r.Spec.GPUs = append(r.Spec.GPUs, gpu)
		dev := fmt.Sprintf("mlx5_%d", i)
		r.Spec.RDMADevices = append(r.Spec.RDMADevices, v1alpha1.RDMADevice{Name: dev, NearestGPU: gpu.UUID, Ports: []v1alpha1.RDMAPort{{
			Number: 1, LinkLayer: "InfiniBand", State: "ACTIVE", Class: v1alpha1.PortClassCompute, RateGbps: 400, Width: "4X",
			Health: &v1alpha1.LinkHealth{Condition: v1alpha1.LinkHealthy}}}})
		r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{Source: v1alpha1.SourceIBNetDiscover, Interface: dev + "/1",
			ChassisID: hrLeaf(i), ChassisIDSubtype: "guid", PortID: fmt.Sprint(10 + i), PortIDSubtype: "number",
			SystemName: fmt.Sprintf("hr-leaf-r%d", i)})
	}
	r.Spec.GPUCount = int32(len(r.Spec.GPUs))
	return r
}

// readHostileReport reads hostileReportFile, refusing a field the API does not have.
func readHostileReport(t *testing.T) *v1alpha1.NodeFabricReport {
	t.Helper()
	b, err := os.ReadFile(hostileReportFile)
	if err != nil {
		t.Fatal(err)
	}
	var r v1alpha1.NodeFabricReport
	if err := yaml.UnmarshalStrict(b, &r); err != nil {
		t.Fatalf("reading %s: %v", hostileReportFile, err)
	}
	return &r
}

// TestHostileReportDegradesOnlyItsNode applies nine honest reports of an eight-rail unit and one hostile report,
// which the API server takes (it is within the CRD's limits), to the real API server and runs the reconciler: the
// hostile node's twenty HCAs of rail 5 on the rail-1 leaf do not make that leaf rail 5's. Only the hostile node
// is labelled fabricmap.io/link-health=degraded and gets MiscabledRail Events; no honest node gets either.
func TestHostileReportDegradesOnlyItsNode(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hostile := readHostileReport(t)
	var honest []string
	for i := 1; i <= 9; i++ {
		honest = append(honest, fmt.Sprintf("hr-%02d", i))
	}
	all := append(slices.Clone(honest), hostile.Name)
	nodes := map[string]*corev1.Node{}
	for _, n := range all {
		deleteNodeNamed(t, n)
		nodes[n] = createNode(t, n)
	}
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	recorder := &teeRecorder{next: broadcaster.NewRecorder(kube.Scheme(), "fabricmap-aggregator")}

	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	r.Events = recorder
	r.Snapshot = &TreeSnapshot{}
	for _, n := range honest {
		upsertReport(t, hrHost(n))
	}
	upsertReport(t, hostile) // fails the test if the API server refuses it
	reconcileOnce(t, r)

	tree, _, _ := r.Snapshot.Get()
	unit := ""
	for name, d := range tree.Domains {
		if len(d.Switches) == 8 {
			unit = name
		}
	}
	if unit == "" {
		t.Fatalf("no domain stands for the eight rail leaves: %v", tree.Outline())
	}
	wantLabels := map[string]string{hostile.Name: "degraded"}
	for _, n := range honest {
		wantLabels[n] = ""
	}
	var wantEvents []string
	for range 20 {
		wantEvents = append(wantEvents, "Node/"+hostile.Name+" Warning MiscabledRail")
	}
	for _, tc := range []struct {
		what      string
		got, want any
	}{
		{"the unit's nodes", inDomain(tree, unit, all), all},
		{"findings by kind", findingsGauge(t, r), map[health.Kind]float64{health.KindMiscabledRail: 20, health.KindDegradedLink: 0,
			health.KindErroringLink: 0, health.KindFlappingLink: 0, health.KindLinkDown: 0, health.KindUplinkLost: 0, health.KindSwitchLost: 0, health.KindDrift: 0}},
		{"link-health labels", linkHealthLabels(t, all...), wantLabels},
		{"Events", recorder.take(), wantEvents},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.what, diff)
		}
	}

	// The Events reach the API server for the hostile node, and none for an honest one.
	waitForNodeEvent(t, nodes[hostile.Name], "MiscabledRail")
	var list eventsv1.EventList
	if err := testenv.Shared.Client.List(ctx, &list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "Node" && slices.Contains(honest, e.Regarding.Name) && e.Reason == pipeline.EventReason(health.KindMiscabledRail) {
			t.Errorf("an honest node has a MiscabledRail Event: %s", e.Note)
		}
	}
}

// inDomain returns those of nodes that the tree places at or below the domain called name.
func inDomain(tree *topology.Tree, name string, nodes []string) []string {
	var out []string
	for _, n := range nodes {
		if slices.ContainsFunc(tree.PathOf(n), func(d *topology.Domain) bool { return d.Name == name }) {
			out = append(out, n)
		}
	}
	return out
}
