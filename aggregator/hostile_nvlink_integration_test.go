package aggregator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/topology"
)

// NVLink domains of the hostile-claims test: A, C and the single-node S behind leaf sw-61, B behind sw-62.
const (
	hostileA = "5d2c7e1a-3b4f-4c6d-8e9f-0a1b2c3d4e5f.1"
	hostileC = "5d2c7e1a-3b4f-4c6d-8e9f-0a1b2c3d4e5f.2"
	hostileS = "5d2c7e1a-3b4f-4c6d-8e9f-0a1b2c3d4e5f.3"
	hostileB = "6e3d8f2b-4c5a-4d7e-9fa0-1b2c3d4e5f60.1"
)

// nvlReport is node's report of one link to leaf switch sw, in NVLink domain nvl.
func nvlReport(node, sw, nvl string) *v1alpha1.NodeFabricReport {
	r := report(node, sw)
	r.Spec.NVLinkDomain = nvl
	return r
}

// namedReport is node's report of LLDP links to switches with chassis MACs 02:00:00:00:00:<s>, each announcing
// the system name names[s].
func namedReport(node string, names map[string]string) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{}
	r.Name = node
	for i, s := range slices.Sorted(maps.Keys(names)) {
		r.Spec.Neighbors = append(r.Spec.Neighbors, v1alpha1.LinkNeighbor{
			Source: v1alpha1.SourceLLDP, Interface: fmt.Sprintf("eth%d", i),
			ChassisID: "02:00:00:00:00:" + s, ChassisIDSubtype: "mac", PortID: "Ethernet1/" + node, PortIDSubtype: "ifName",
			SystemName: names[s],
		})
	}
	return r
}

// hyperNodeShapes returns name -> "tier tierName: members" of every HyperNode on the API server.
func hyperNodeShapes(t *testing.T) map[string]string {
	t.Helper()
	var list topologyv1alpha1.HyperNodeList
	if err := testenv.Shared.Client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, members := range memberNames(list.Items) {
		i := slices.IndexFunc(list.Items, func(hn topologyv1alpha1.HyperNode) bool { return hn.Name == name })
		out[name] = fmt.Sprintf("%d %s: %s", list.Items[i].Spec.Tier, list.Items[i].Spec.TierName, strings.Join(members, ","))
	}
	return out
}

// pick returns the entries of m under keys.
func pick(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

// TestHostileNVLinkClaimsKeepHonestHyperNodes: on the real API server, reports that claim the NVLink domains of
// another leaf (in another spelling too), and a node without an NVLink domain joining the leaf, leave the
// honest leaf's HyperNode and its NVLink HyperNodes with their names, tiers and members, also across a restart;
// the claimants get parts of their own in their own leaf, the node without a domain one named after it.
func TestHostileNVLinkClaimsKeepHonestHyperNodes(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	newR := func() *Reconciler {
		r := newReconciler(t, time.Minute, clock)
		r.Config.AcceleratorDomains = true
		return r
	}
	for i := 1; i <= 8; i++ {
		upsertReport(t, nvlReport(fmt.Sprintf("hn-a%d", i), "61", hostileA))
		upsertReport(t, nvlReport(fmt.Sprintf("hn-b%d", i), "62", hostileB))
	}
	for i := 1; i <= 4; i++ {
		upsertReport(t, nvlReport(fmt.Sprintf("hn-c%d", i), "61", hostileC))
	}
	upsertReport(t, nvlReport("hn-s1", "61", hostileS))
	r := newR()
	reconcileOnce(t, r)
	nvlA, nvlC, nvlS := "nvl-"+topology.SafeName(hostileA), "nvl-"+topology.SafeName(hostileC), "nvl-"+topology.SafeName(hostileS)
	honest := []string{"sw-61", nvlA, nvlC, nvlS}
	before := pick(hyperNodeShapes(t), honest...)
	want := map[string]string{
		"sw-61": fmt.Sprintf("2 leaf: %s,%s,%s", nvlA, nvlC, nvlS),
		nvlA:    "1 accelerator: hn-a1,hn-a2,hn-a3,hn-a4,hn-a5,hn-a6,hn-a7,hn-a8",
		nvlC:    "1 accelerator: hn-c1,hn-c2,hn-c3,hn-c4",
		nvlS:    "1 accelerator: hn-s1",
	}
	if diff := cmp.Diff(want, before); diff != "" {
		t.Fatalf("honest HyperNodes (-want +got):\n%s", diff)
	}

	// Three nodes of the other leaf claim A (one in capitals), one claims the single-node domain S.
	upsertReport(t, nvlReport("hn-b1", "62", hostileA))
	upsertReport(t, nvlReport("hn-b2", "62", hostileA))
	upsertReport(t, nvlReport("hn-b3", "62", strings.ToUpper(hostileA)))
	upsertReport(t, nvlReport("hn-b4", "62", hostileS))
	reconcileOnce(t, r)
	after := hyperNodeShapes(t)
	if diff := cmp.Diff(before, pick(after, honest...)); diff != "" {
		t.Errorf("honest HyperNodes after the claims (-before +after):\n%s", diff)
	}
	wantClaims := map[string]string{
		nvlA + "-sw-62": "1 accelerator: hn-b1,hn-b2,hn-b3",
		nvlS + "-sw-62": "1 accelerator: hn-b4",
	}
	if diff := cmp.Diff(wantClaims, pick(after, slices.Collect(maps.Keys(wantClaims))...)); diff != "" {
		t.Errorf("the claimants' HyperNodes (-want +got):\n%s", diff)
	}

	t.Run("a restart keeps them", func(t *testing.T) {
		reconcileOnce(t, newR())
		if diff := cmp.Diff(after, hyperNodeShapes(t)); diff != "" {
			t.Errorf("HyperNodes after a restart (-before +after):\n%s", diff)
		}
	})

	t.Run("a node without an NVLink domain joins the leaf: it stands alone, nothing else moves", func(t *testing.T) {
		upsertReport(t, nvlReport("hn-x", "61", ""))
		reconcileOnce(t, r)
		got := hyperNodeShapes(t)
		wantNow := maps.Clone(before)
		wantNow["sw-61"] = fmt.Sprintf("2 leaf: hn-x,%s,%s,%s", nvlA, nvlC, nvlS)
		wantNow["hn-x"] = "1 accelerator: hn-x"
		if diff := cmp.Diff(wantNow, pick(got, append(honest, "hn-x")...)); diff != "" {
			t.Errorf("honest HyperNodes (-want +got):\n%s", diff)
		}
		if got["sw-62"] != after["sw-62"] || got["fabric"] != after["fabric"] {
			t.Errorf("the other leaf or the root moved: %q, %q; was %q, %q", got["sw-62"], got["fabric"], after["sw-62"], after["fabric"])
		}
	})
}

// TestFirstReporterDoesNotNameTheLeaf: on the real API server, one node alone names its rail leaves "0wned";
// five honest reports follow, and the leaf's HyperNode and all six nodes' labels take the honest name, which
// survives three restarts of the reconciler; the old HyperNode goes after its grace period.
func TestFirstReporterDoesNotNameTheLeaf(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	nodes := []string{"owner-x", "owner-h1", "owner-h2", "owner-h3", "owner-h4", "owner-h5"}
	for _, n := range nodes {
		createNode(t, n)
	}
	leafKey := hypernodegen.DefaultTierKeys[0]
	check := func(t *testing.T, when, leaf string, members []string) {
		t.Helper()
		got := hyperNodes(t)
		if diff := cmp.Diff(slices.Sorted(slices.Values(members)), got[leaf]); diff != "" {
			t.Errorf("%s: HyperNode %s members (-want +got):\n%s\nall: %v", when, leaf, diff, got)
		}
		for _, n := range members {
			if v := fabricLabels(t, n)[leafKey]; v != leaf {
				t.Errorf("%s: node %s label %s = %q, want %q", when, n, leafKey, v, leaf)
			}
		}
	}

	upsertReport(t, namedReport("owner-x", map[string]string{"71": "0wned", "72": "0wned"}))
	r := newReconciler(t, time.Minute, clock)
	reconcileOnce(t, r)
	check(t, "the first reporter alone", "0wned-rails", []string{"owner-x"})

	for _, n := range nodes[1:] {
		upsertReport(t, namedReport(n, map[string]string{"71": "leaf-a", "72": "leaf-b"}))
	}
	reconcileOnce(t, r)
	check(t, "five honest reports follow", "leaf-a-rails", nodes)
	for i := range 3 {
		clock.t = clock.t.Add(10 * time.Second)
		reconcileOnce(t, newReconciler(t, time.Minute, clock))
		check(t, fmt.Sprintf("restart %d", i+1), "leaf-a-rails", nodes)
	}
	clock.t = clock.t.Add(2 * time.Minute)
	r = newReconciler(t, time.Minute, clock)
	reconcileOnce(t, r)
	clock.t = clock.t.Add(2 * time.Minute)
	reconcileOnce(t, r)
	if got := hyperNodes(t); slices.Contains(slices.Collect(maps.Keys(got)), "0wned-rails") {
		t.Errorf("HyperNode 0wned-rails still there after its grace period: %v", got)
	}
	check(t, "after the grace period", "leaf-a-rails", nodes)
}
