package aggregator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
)

// A capture whose HCAs carry the adapter's default description: the aggregator names each after the node
// whose report lists its GUID, and the others after their GUID, never one fake node for all.
func TestCaptureHostsNamedAfterTheReportsGUIDs(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	file := filepath.Join(t.TempDir(), "fabric.txt")
	capture, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "sources/ibfabric/testdata/defaultdesc.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	reported := &sources.ReportedGUIDs{}
	c := ibfabric.NewCapture(file)
	rules := ib.DefaultHostRules()
	c.Options.Hosts, c.Options.ReportedNode = &rules, reported.Node
	r.Sources = []sources.Spec{{Source: c}}
	r.Config.ReportedGUIDs = reported
	var events eventLog
	r.Events = &events
	r.Config.DeletionGuard = &DeletionGuard{Lease: types.NamespacedName{Namespace: "default", Name: "fabricmap-aggregator"}}
	node := createNode(t, "dgx-01")
	t.Cleanup(func() { deleteNode(t, node) })

	// dgx-01's agent lists the first ConnectX-7 and, like the capture, sees it cabled to ib-leaf-01 port 1.
	// Without the reports' GUIDs the capture's copy of that host would be a second node, guid-a088…0001.
	rep := &v1alpha1.NodeFabricReport{}
	rep.Name = "dgx-01"
	rep.Spec.RDMADevices = []v1alpha1.RDMADevice{{Name: "mlx5_0", NodeGUID: "0xa088c20300f10001"}}
	rep.Spec.Neighbors = []v1alpha1.LinkNeighbor{{Source: v1alpha1.SourceIBNetDiscover, Interface: "mlx5_0/1",
		ChassisID: "0xB83FD20300B30011", ChassisIDSubtype: "guid", PortID: "1", SystemName: "ib-leaf-01"}}
	upsertReport(t, rep)
	reconcileOnce(t, r)

	var members []string
	for _, m := range hyperNodes(t) {
		members = append(members, m...)
	}
	for _, want := range []string{"dgx-01", "guid-a088c20300f10002"} {
		if !contains(members, want) {
			t.Errorf("HyperNode members %v lack %s", members, want)
		}
	}
	for _, never := range []string{"mt4129", "guid-a088c20300f10001", "localhost", "ufm-01"} {
		if contains(members, never) {
			t.Errorf("HyperNode members %v hold %s", members, never)
		}
	}

	// Each host not taken by its name is said where an operator looks: the re-identified one on its Node,
	// those left out (the generic and the management host) on the aggregator's Lease, with the reason; and
	// once, not at every pass.
	reconcileOnce(t, r)
	var onNode, onLease []string
	for _, e := range events {
		switch {
		case strings.HasPrefix(e, "Node/dgx-01 Warning "+ReasonHostReidentified+": "):
			onNode = append(onNode, e)
		case strings.HasPrefix(e, "Lease/fabricmap-aggregator Warning "+ReasonHostsLeftOut+": "):
			onLease = append(onLease, e)
		default:
			t.Errorf("unexpected Event %q", e)
		}
	}
	if len(onNode) != 1 || !strings.Contains(onNode[0], "a088c20300f10001") || !strings.Contains(onNode[0], "default node description") {
		t.Errorf("Events on dgx-01 = %q, want one naming its GUID and the default description", onNode)
	}
	if len(onLease) != 1 || !strings.Contains(onLease[0], `"localhost"`) || !strings.Contains(onLease[0], `"ufm-01"`) ||
		!strings.Contains(onLease[0], "management") {
		t.Errorf("Events on the Lease = %q, want one listing localhost and ufm-01 with the reasons", onLease)
	}
	for outcome, want := range map[string]float64{"reidentified": 4, "left-out": 2} {
		if got := testutil.ToFloat64(r.Metrics.sourceHostsNoted.WithLabelValues(ibfabric.Name, outcome)); got != want {
			t.Errorf("fabricmap_aggregator_source_hosts_noted{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
