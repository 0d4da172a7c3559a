package aggregator

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// ibReport is a node's report of one InfiniBand uplink to the leaf with the given GUID, and its NVLink domain.
func ibReport(node, leafGUID, leafName, nvlink string) *v1alpha1.NodeFabricReport {
	r := &v1alpha1.NodeFabricReport{}
	r.Name = node
	r.Spec.NVLinkDomain = nvlink
	r.Spec.Neighbors = []v1alpha1.LinkNeighbor{{
		Source: v1alpha1.SourceIBNetDiscover, Interface: "mlx5_0/1", ChassisID: leafGUID, ChassisIDSubtype: "guid",
		PortID: "1", SystemName: leafName,
	}}
	return r
}

// switchLinksOnly is a fabric-wide source that knows the cables between switches and no host.
func switchLinksOnly(t *testing.T, fixture string) *staticSource {
	t.Helper()
	f, err := ufm.LoadDump(filepath.Join(testenv.RepoRoot(), "sources", "ufm", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := ufm.Evidence(f, ufm.Options{})
	return &staticSource{name: ufm.Name, in: topology.Input{SwitchLinks: in.SwitchLinks}}
}

// TestFourTierFabricFromReports: eight nodes report their InfiniBand leaf (GUIDs spelled as ibnetdiscover
// prints them) and their NVLink domain; a fabric-wide source knows the leaf–spine–core cables. On the real
// API server this gives NVLink domains (tier 1) below the leaves (2), the pods' spines (3) and the cores'
// root (4); every output agrees with it: HyperNodes, node labels, Koordinator's ClusterNetworkTopology and
// Kueue's Topology. Switching the member selector to labelMatch rewrites exactly the HyperNodes that hold nodes.
func TestFourTierFabricFromReports(t *testing.T) {
	testenv.Require(t)
	deleteAll(t)
	ctx := context.Background()
	c := testenv.Shared.Client
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	r := newReconciler(t, time.Minute, clock)
	r.Config.AcceleratorDomains = true
	r.Config.Outputs = outputs.Options{ClusterNetworkTopology: true, KueueTopology: "fabricmap-4tier"}
	r.Sources = []sources.Spec{{Source: switchLinksOnly(t, "threetier")}}

	nvlink := map[string]string{}
	for p := 1; p <= 2; p++ {
		for l := 1; l <= 2; l++ {
			domain := fmt.Sprintf("5e0b1c2d-0000-4000-8000-0000000000%d%d.0", p, l)
			for h := 1; h <= 2; h++ {
				node := fmt.Sprintf("tt-p%d-l%d-%d", p, l, h)
				n := createNode(t, node)
				t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
				// Leaf GUIDs as the threetier fixture has them, written with 0x and upper case as ibnetdiscover may.
				upsertReport(t, ibReport(node, fmt.Sprintf("0xB83FD20300C0%d%d20", p, l), fmt.Sprintf("ib-p%d-leaf-%d", p, l), domain))
				nvlink[node] = domain
			}
		}
	}
	reconcileOnce(t, r)

	var list topologyv1alpha1.HyperNodeList
	if err := c.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // name → "tier:members"
	for _, hn := range list.Items {
		var members []string
		for _, m := range hn.Spec.Members {
			members = append(members, m.Selector.ExactMatch.Name)
		}
		got[hn.Name] = fmt.Sprintf("%d:%s", hn.Spec.Tier, strings.Join(members, ","))
	}
	// An accelerator domain is named after its NVLink domain, made a DNS label ("." becomes "-").
	nvl := func(p, l int) string { return fmt.Sprintf("nvl-5e0b1c2d-0000-4000-8000-0000000000%d%d-0", p, l) }
	want := map[string]string{
		"fabric":               "4:ib-p1-spine-1-spines,ib-p2-spine-1-spines",
		"ib-p1-spine-1-spines": "3:ib-p1-leaf-1,ib-p1-leaf-2",
		"ib-p2-spine-1-spines": "3:ib-p2-leaf-1,ib-p2-leaf-2",
	}
	for p := 1; p <= 2; p++ {
		for l := 1; l <= 2; l++ {
			want[fmt.Sprintf("ib-p%d-leaf-%d", p, l)] = "2:" + nvl(p, l)
			want[nvl(p, l)] = fmt.Sprintf("1:tt-p%d-l%d-1,tt-p%d-l%d-2", p, l, p, l)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("HyperNodes (-want +got):\n%s", diff)
	}

	keys := hypernodegen.DefaultLabelKeys()
	block, spine, dc := keys.Tiers[0], keys.Tiers[1], keys.Tiers[2]
	if got, want := fabricLabels(t, "tt-p2-l1-2"), map[string]string{
		keys.Accelerator: nvlink["tt-p2-l1-2"], keys.AcceleratorSubDomain: nvlink["tt-p2-l1-2"], // one rack: the domain is its own sub-domain
		block: "ib-p2-leaf-1", spine: "ib-p2-spine-1-spines", dc: "fabric",
	}; !cmp.Equal(got, want) {
		t.Errorf("labels of tt-p2-l1-2 (-want +got):\n%s", cmp.Diff(want, got))
	}

	cnt := getUnstructured(t, hypernodegen.ClusterNetworkTopologyGVK.GroupVersion().String(), "ClusterNetworkTopology", "", hypernodegen.ClusterNetworkTopologyName)
	layers, _, _ := unstructured.NestedSlice(cnt.Object, "spec", "networkTopologySpec")
	var gotLayers []string
	for _, l := range layers {
		m := l.(map[string]any)
		key := ""
		if k, ok := m["labelKey"].([]any); ok {
			key = k[0].(string)
		}
		gotLayers = append(gotLayers, fmt.Sprintf("%v<%v>%s", m["topologyLayer"], m["parentTopologyLayer"], key))
	}
	wantLayers := []string{
		"DatacenterLayer<<nil>>" + dc, "SpineLayer<DatacenterLayer>" + spine, "BlockLayer<SpineLayer>" + block,
		"AcceleratorLayer<BlockLayer>" + keys.Accelerator, "AcceleratorSubDomainLayer<AcceleratorLayer>" + keys.AcceleratorSubDomain,
		"NodeTopologyLayer<AcceleratorSubDomainLayer>",
	}
	if diff := cmp.Diff(wantLayers, gotLayers); diff != "" {
		t.Errorf("ClusterNetworkTopology layers (-want +got):\n%s", diff)
	}
	kt := getUnstructured(t, "kueue.x-k8s.io/v1beta2", "Topology", "", "fabricmap-4tier")
	levels, _, _ := unstructured.NestedSlice(kt.Object, "spec", "levels")
	var gotLevels []string
	for _, l := range levels {
		gotLevels = append(gotLevels, l.(map[string]any)["nodeLabel"].(string))
	}
	if diff := cmp.Diff([]string{dc, spine, block, keys.Accelerator, keys.AcceleratorSubDomain, corev1.LabelHostname}, gotLevels); diff != "" {
		t.Errorf("Kueue Topology levels (-want +got):\n%s", diff)
	}

	t.Run("labelMatch members select the same nodes", func(t *testing.T) {
		before := counterValue(r.Metrics.writes.WithLabelValues("apply"))
		r.Config.MemberSelector = hypernodegen.SelectorLabel
		reconcileOnce(t, r)
		if n := counterValue(r.Metrics.writes.WithLabelValues("apply")) - before; n != 4 {
			t.Errorf("%v HyperNodes rewritten, want the 4 that hold nodes", n)
		}
		var hn topologyv1alpha1.HyperNode
		if err := c.Get(ctx, client.ObjectKey{Name: nvl(1, 2)}, &hn); err != nil {
			t.Fatal(err)
		}
		var nodes corev1.NodeList
		sel := hn.Spec.Members[0].Selector.LabelMatch
		if len(hn.Spec.Members) != 1 || sel == nil {
			t.Fatalf("members = %+v, want one label selector", hn.Spec.Members)
		}
		if err := c.List(ctx, &nodes, client.MatchingLabels(sel.MatchLabels)); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, n := range nodes.Items {
			names = append(names, n.Name)
		}
		if diff := cmp.Diff([]string{"tt-p1-l2-1", "tt-p1-l2-2"}, names); diff != "" {
			t.Errorf("%s selects (-want +got):\n%s", hn.Name, diff)
		}
	})
}
