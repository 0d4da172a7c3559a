package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/internal/testsupport/fixture"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/view/web"
	"github.com/fabricmap/fabricmap/wellknown"
)

// The rail-optimised unit of the health tests: two rail leaves below one spine, hosts with one HCA per rail.
const (
	railLeaf0 = "0xb83fd20300b10000"
	railLeaf1 = "0xb83fd20300b10001"
	otherLeaf = "0xb83fd20300b10002"
)

// leafNames are the rail leaves' names, as the capture and the agents give them.
var leafNames = map[string]string{railLeaf0: "hl-leaf-r0", railLeaf1: "hl-leaf-r1", otherLeaf: "hl-leaf-b"}

// railUnitCapture is the unit's switches as a capture shows them, with another leaf below the spine: leaf 0
// and the other leaf have two NDR uplinks each, leaf 1 an NDR and an HDR one (slower than the tier's).
const railUnitCapture = `
switchguid=0xb83fd20300b100ff(b83fd20300b100ff)
Switch	65 "S-b83fd20300b100ff"		# "MF0;hl-spine:MQM9700/U1" enhanced port 0 lid 1 lmc 0
[1]	"S-b83fd20300b10000"[33]		# "MF0;hl-leaf-r0:MQM9700/U1" lid 2 4xNDR
[2]	"S-b83fd20300b10000"[34]		# "MF0;hl-leaf-r0:MQM9700/U1" lid 2 4xNDR
[3]	"S-b83fd20300b10001"[33]		# "MF0;hl-leaf-r1:MQM9700/U1" lid 3 4xNDR
[4]	"S-b83fd20300b10001"[34]		# "MF0;hl-leaf-r1:MQM9700/U1" lid 3 4xHDR
[5]	"S-b83fd20300b10002"[33]		# "MF0;hl-leaf-b:MQM9700/U1" lid 4 4xNDR
[6]	"S-b83fd20300b10002"[34]		# "MF0;hl-leaf-b:MQM9700/U1" lid 4 4xNDR
`

// railHost is a host's report: GPUs 0 and 1, the HCA nearest GPU i (mlx5_i) cabled to leaves[i] at rates[i]
// Gb/s, 4X wide, with the agent's conditions (nil: healthy).
func railHost(node string, leaves [2]string, rates [2]int32, conditions [2]*v1alpha1.LinkHealth) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for i := range 2 {
		gpu := v1alpha1.GPU{Index: int32(i), UUID: fmt.Sprintf("GPU-%s-%d", node, i)}
		r.Spec.GPUs = append(r.Spec.GPUs, gpu)
		r.Spec.GPUCount++
		dev := fmt.Sprintf("mlx5_%d", i)
		h := conditions[i]
		if h == nil {
			h = &v1alpha1.LinkHealth{Condition: v1alpha1.LinkHealthy}
		}
		r.Spec.RDMADevices = append(r.Spec.RDMADevices, v1alpha1.RDMADevice{Name: dev, NearestGPU: gpu.UUID, Ports: []v1alpha1.RDMAPort{{
			Number: 1, LinkLayer: "InfiniBand", State: "ACTIVE", Class: v1alpha1.PortClassCompute, RateGbps: rates[i], Width: "4X", Health: h}}})
		r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{Source: v1alpha1.SourceIBNetDiscover, Interface: dev + "/1",
			ChassisID: leaves[i], ChassisIDSubtype: "guid", PortID: fmt.Sprint(10 + i), PortIDSubtype: "number", SystemName: leafNames[leaves[i]]})
	}
	return r
}

// fabricStatic is a fixed source that gives its capture's fabric too, as the capture source does.
type fabricStatic struct {
	staticSource
	fabric *ib.Fabric
}

func (s *fabricStatic) Fabric() *ib.Fabric { return s.fabric }

// teeRecorder records every Event in a log and passes it on to the API server's recorder.
type teeRecorder struct {
	mu   sync.Mutex
	log  eventLog
	next EventRecorder
}

func (t *teeRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	t.mu.Lock()
	t.log.Eventf(regarding, related, eventtype, reason, action, note, args...)
	t.mu.Unlock()
	t.next.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// take returns the Events recorded since the last take, as "Node/<name> <type> <reason>".
func (t *teeRecorder) take() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.log))
	for _, e := range t.log {
		out = append(out, e[:strings.Index(e, ":")])
	}
	t.log = nil
	return out
}

// linkHealthLabels returns each named node's wellknown.LinkHealthLabel ("" when it has none).
func linkHealthLabels(t *testing.T, nodes ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range nodes {
		var n corev1.Node
		if err := testenv.Shared.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
			t.Fatal(err)
		}
		out[name] = n.Labels[wellknown.LinkHealthLabel]
	}
	return out
}

// findingsGauge returns fabricmap_aggregator_link_findings by kind.
func findingsGauge(t *testing.T, r *Reconciler) map[health.Kind]float64 {
	t.Helper()
	out := map[health.Kind]float64{}
	for _, k := range health.Kinds {
		out[k] = gaugeValue(t, r.Metrics.linkFindings.WithLabelValues(string(k)))
	}
	return out
}

// pageFindings returns the kind, node and port of each finding /api/tree shows, in its order.
func pageFindings(t *testing.T, r *Reconciler) []string {
	t.Helper()
	rec := httptest.NewRecorder()
	web.Handler(r.Snapshot.WebState).ServeHTTP(rec, httptest.NewRequest("GET", "/api/tree", nil))
	var got web.TreeJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	out := []string{}
	for _, f := range got.Health.Findings {
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s", f.Kind, f.Node, f.Port)))
	}
	return out
}

// waitForNodeEvent waits for an Event with reason on the Node (and its UID) in the API server.
func waitForNodeEvent(t *testing.T, node *corev1.Node, reason string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, reason+" Event on Node "+node.Name, func() (bool, string) {
		var list eventsv1.EventList
		if err := testenv.Shared.Client.List(context.Background(), &list, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Node" && e.Regarding.Name == node.Name {
				if e.Reason == reason && e.Regarding.UID == node.UID && e.Type == corev1.EventTypeWarning {
					return true, ""
				}
				seen = append(seen, e.Reason+": "+e.Note)
			}
		}
		return false, fmt.Sprintf("Events on the Node: %q", seen)
	})
}

// TestLinkHealthIsReported runs a rail-optimised unit through the reconciler on the real API server: a host
// whose two HCAs are cabled to each other's rail leaf and a host with a slow port, below a leaf whose uplink
// is slower than its tier's. Each finding with a node is a Warning Event on that Node (once, not at every
// pass), the gauge counts them by kind, the nodes carry fabricmap.io/link-health, the unit's domain counts
// its degraded uplink and /api/tree lists the findings worst first. As the reports change, the Events follow
// the change only, and once they heal the label is removed.
func TestLinkHealthIsReported(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	names := []string{"hl-01", "hl-02", "hl-03", "hl-04", "hl-05"}
	nodes := map[string]*corev1.Node{}
	for _, n := range names {
		deleteNodeNamed(t, n)
		nodes[n] = createNode(t, n)
	}
	fab, _, err := ib.Parse(strings.NewReader(railUnitCapture))
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := ibfabric.Evidence(ctx, fab, ibfabric.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(testenv.Shared.Config)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	recorder := &teeRecorder{next: broadcaster.NewRecorder(kube.Scheme(), "fabricmap-aggregator")}

	r := newReconciler(t, time.Minute, &fakeClock{t: time.Unix(1_800_000_000, 0)})
	r.Sources = []sources.Spec{{Source: &fabricStatic{staticSource: staticSource{name: ibfabric.Name, in: in}, fabric: fab}}}
	r.Events = recorder
	r.Snapshot = &TreeSnapshot{}

	straight, crossed := [2]string{railLeaf0, railLeaf1}, [2]string{railLeaf1, railLeaf0}
	ndr, slow := [2]int32{400, 400}, [2]int32{400, 200}
	healthy := [2]*v1alpha1.LinkHealth{}
	for _, rep := range []*v1alpha1.NodeFabricReport{
		railHost("hl-01", straight, ndr, healthy),
		railHost("hl-02", straight, slow, healthy),
		railHost("hl-03", straight, ndr, healthy),
		railHost("hl-04", crossed, ndr, healthy),
		railHost("hl-05", [2]string{otherLeaf, otherLeaf}, ndr, healthy),
	} {
		upsertReport(t, rep)
	}
	reconcileOnce(t, r)

	for _, tc := range []struct {
		what      string
		got, want any
	}{
		{"findings by kind", findingsGauge(t, r), map[health.Kind]float64{health.KindMiscabledRail: 2, health.KindDegradedLink: 2,
			health.KindErroringLink: 0, health.KindFlappingLink: 0, health.KindLinkDown: 0, health.KindUplinkLost: 0, health.KindSwitchLost: 0, health.KindDrift: 0}},
		{"link-health labels", linkHealthLabels(t, names...), map[string]string{"hl-01": "", "hl-02": "degraded", "hl-03": "", "hl-04": "degraded", "hl-05": ""}},
		{"Events", recorder.take(), []string{"Node/hl-02 Warning DegradedLink", "Node/hl-04 Warning MiscabledRail", "Node/hl-04 Warning MiscabledRail"}},
		{"the page's findings, worst first", pageFindings(t, r), []string{"miscabled-rail hl-04 mlx5_0/1", "miscabled-rail hl-04 mlx5_1/1",
			"degraded-link", "degraded-link hl-02 mlx5_1/1"}},
		{"degraded uplinks", degradedUplinks(r), map[string]int{unitDomain(t, r): 1}},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.what, diff)
		}
	}
	waitForNodeEvent(t, nodes["hl-04"], "MiscabledRail")
	waitForNodeEvent(t, nodes["hl-02"], "DegradedLink")

	t.Run("unchanged findings record no Event again", func(t *testing.T) {
		reconcileOnce(t, r)
		if got := recorder.take(); len(got) != 0 {
			t.Errorf("a pass with the same findings recorded %q", got)
		}
	})

	t.Run("a node whose findings change gets Events for them; the others none", func(t *testing.T) {
		upsertReport(t, railHost("hl-02", straight, slow, [2]*v1alpha1.LinkHealth{nil, {Condition: v1alpha1.LinkDown, Reason: "PortDown", Message: "the port is down"}}))
		reconcileOnce(t, r)
		var want []string // one Event per finding of hl-02, whatever the others'
		for _, f := range r.health.fabricHealth.last.Findings {
			if f.Node == "hl-02" {
				want = append(want, "Node/hl-02 Warning "+pipeline.EventReason(f.Kind))
			}
		}
		if got := recorder.take(); !slices.Contains(got, "Node/hl-02 Warning LinkDown") || !cmp.Equal(want, got) {
			t.Errorf("Events %q, want one LinkDown among those of hl-02's findings, %q", got, want)
		}
		if got := linkHealthLabels(t, "hl-02")["hl-02"]; got != "down" {
			t.Errorf("hl-02's link-health label is %q, want down", got)
		}
		waitForNodeEvent(t, nodes["hl-02"], "LinkDown")
	})

	t.Run("drift from the expected topology, which is read again when it changes", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "plan.json")
		at := time.Unix(1_800_000_000, 0)
		planFrom(t, r, path, "hl-01", "hl-leaf-b", at) // the plan has hl-01 beside hl-05
		r.Config.ExpectedTopology = &pipeline.ExpectedTopology{Path: path}
		defer func() { r.Config.ExpectedTopology = nil }()
		drift := func() float64 { return findingsGauge(t, r)[health.KindDrift] }
		if requeue := reconcileOnce(t, r); drift() == 0 || requeue <= 0 || requeue > planRecheck {
			t.Errorf("drift findings %v with hl-01 planned elsewhere, requeue after %v; want some, and a look at the plan within %v", drift(), requeue, planRecheck)
		}
		if got := recorder.take(); !slices.Contains(got, "Node/hl-01 Warning Drift") {
			t.Errorf("Events %q, want a Drift Event on hl-01", got)
		}
		fixture.WriteFileAt(t, path, "{not a plan", at.Add(time.Minute))
		reconcileOnce(t, r)
		if drift() == 0 {
			t.Error("a bad plan file dropped the last good plan")
		}
		planFrom(t, r, path, "", "", at.Add(2*time.Minute)) // the plan approves the tree as it is
		reconcileOnce(t, r)
		if drift() != 0 {
			t.Errorf("drift findings %v once the plan is the tree: %v", drift(), r.health.fabricHealth.last.Findings)
		}
		recorder.take()
	})

	t.Run("healed reports lose the label", func(t *testing.T) {
		for _, n := range names[:4] {
			upsertReport(t, railHost(n, straight, ndr, healthy))
		}
		reconcileOnce(t, r)
		for _, tc := range []struct {
			what      string
			got, want any
		}{
			{"findings by kind", findingsGauge(t, r), map[health.Kind]float64{health.KindMiscabledRail: 0, health.KindDegradedLink: 1,
				health.KindErroringLink: 0, health.KindFlappingLink: 0, health.KindLinkDown: 0, health.KindUplinkLost: 0, health.KindSwitchLost: 0, health.KindDrift: 0}},
			{"link-health labels", linkHealthLabels(t, names...), map[string]string{"hl-01": "", "hl-02": "", "hl-03": "", "hl-04": "", "hl-05": ""}},
			{"Events", recorder.take(), []string{}},
			{"the page's findings", pageFindings(t, r), []string{"degraded-link"}},
		} {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.what, diff)
			}
		}
		if got := fabricLabels(t, "hl-04"); len(got) == 0 {
			t.Errorf("removing the link-health label took the node's tier labels too: %v", got)
		}
	})
}

// planFrom writes the tree the snapshot holds as a plan file, with node moved to the leaf domain leaf (when
// set), and a modification time of its own.
func planFrom(t *testing.T, r *Reconciler, path, node, leaf string, at time.Time) {
	t.Helper()
	tree, _, _ := r.Snapshot.Get()
	plan := copyTree(tree)
	if node != "" {
		for _, d := range plan.Domains {
			d.Nodes = slices.DeleteFunc(d.Nodes, func(n string) bool { return n == node })
		}
		plan.Domains[leaf].Nodes = append(plan.Domains[leaf].Nodes, node)
		slices.Sort(plan.Domains[leaf].Nodes)
	}
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	fixture.WriteFileAt(t, path, string(b), at)
}

// degradedUplinks returns the domains of the last tree the snapshot holds that count degraded uplinks.
func degradedUplinks(r *Reconciler) map[string]int {
	tree, _, _ := r.Snapshot.Get()
	out := map[string]int{}
	for name, d := range tree.Domains {
		if d.DegradedUplinks > 0 {
			out[name] = d.DegradedUplinks
		}
	}
	return out
}

// unitDomain is the name of the domain that stands for both rail leaves.
func unitDomain(t *testing.T, r *Reconciler) string {
	t.Helper()
	tree, _, _ := r.Snapshot.Get()
	for name, d := range tree.Domains {
		if len(d.Switches) == 2 && strings.Contains(strings.Join(d.Switches, ","), "b83fd20300b10000") {
			return name
		}
	}
	t.Fatalf("no domain stands for the two rail leaves: %v", tree.Outline())
	return ""
}
