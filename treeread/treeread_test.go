package treeread

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
	"github.com/fabricmap/fabricmap/wellknown"
)

const gpu = "nvidia.com/gpu"

// mkTree builds a tree from lines "name/tier[/tierName]: member member …" (topologytest.Tree).
func mkTree(t testing.TB, lines ...string) *topology.Tree { return topologytest.Tree(t, lines...) }

// mkCluster builds a cluster whose nodes each have gpus GPUs, with used[node] of them in use.
func mkCluster(t testing.TB, tr *topology.Tree, gpus int64, used map[string]int64) *placement.Cluster {
	t.Helper()
	f, err := placement.NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []placement.Node
	for _, n := range f.Nodes() {
		nodes = append(nodes, placement.Node{Name: n, Allocatable: placement.Resources{gpu: gpus}, Used: placement.Resources{gpu: used[n]}})
	}
	c, _, err := placement.NewCluster(f, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fabricTree is a valid fabricmap tree (DNS names, one root) to round-trip through every output form.
func fabricTree(t *testing.T) *topology.Tree {
	return mkTree(t,
		"fabric/3/fabric: spine-a spine-b",
		"spine-a/2/spine: leaf-a leaf-b", "spine-b/2/spine: leaf-c",
		"leaf-a/1/leaf: gpu-1 gpu-2", "leaf-b/1/leaf: gpu-3", "leaf-c/1/leaf: gpu-4 gpu-5")
}

// TestParseTreeForms reads the tree from each JSON form fabricmap writes and gets the same outline back.
func TestParseTreeForms(t *testing.T) {
	tr := fabricTree(t)
	entries, err := hypernodegen.TreeEntries(tr)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := hypernodegen.TreeConfigMap("ns", "tree", tr)
	if err != nil {
		t.Fatal(err)
	}
	hns, err := hypernodegen.HyperNodes(tr, hypernodegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := topologyv1alpha1.HyperNodeList{Items: hns}
	list.Kind = "List"
	forms := map[string]any{"configmap entries": entries, "configmap": cm, "hypernode list": list, "tree": tr}
	for name, v := range forms {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseTree(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Outline(), tr.Outline()) {
				t.Errorf("outline %v, want %v", got.Outline(), tr.Outline())
			}
			if _, err := placement.NewFabric(got); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestParseTreeBad names the field of malformed trees.
func TestParseTreeBad(t *testing.T) {
	cases := map[string]struct{ in, field string }{
		"two parents":     {`[{"layer":1,"name":"a","parents":["x","y"],"children":["n1"]}]`, "[a].parents"},
		"not a tree":      {`{"kind":"Pod"}`, "tree"},
		"configmap empty": {`{"kind":"ConfigMap","data":{}}`, "data[topology.json]"},
		"duplicate":       {`[{"layer":1,"name":"a"},{"layer":1,"name":"a"}]`, "[1].name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTree([]byte(tc.in), nil)
			var ie *placement.InputError
			if !errors.As(err, &ie) || ie.Field != tc.field {
				t.Fatalf("got %v, want an InputError on %s", err, tc.field)
			}
		})
	}
}

// TestTreeFromHyperNodesSelectors resolves regex and label members against the nodes, and refuses a HyperNode
// claimed twice.
func TestTreeFromHyperNodesSelectors(t *testing.T) {
	hn := func(name string, tier int, members ...topologyv1alpha1.MemberSpec) topologyv1alpha1.HyperNode {
		h := topologyv1alpha1.HyperNode{Spec: topologyv1alpha1.HyperNodeSpec{Tier: tier, Members: members}}
		h.Name = name
		return h
	}
	exact := func(typ topologyv1alpha1.MemberType, n string) topologyv1alpha1.MemberSpec {
		return topologyv1alpha1.MemberSpec{Type: typ, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: n}}}
	}
	regex := topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: "^a-"}}}
	byLabel := topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "b"}}}}
	nodes := map[string]map[string]string{"a-1": {}, "a-2": {}, "x-1": {"rack": "b"}, "x-2": {"rack": "c"}}
	hns := []topologyv1alpha1.HyperNode{
		hn("top", 2, exact(topologyv1alpha1.MemberTypeHyperNode, "ra"), exact(topologyv1alpha1.MemberTypeHyperNode, "rb")),
		hn("ra", 1, regex), hn("rb", 1, byLabel),
	}
	tr, err := TreeFromHyperNodes(hns, nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ra(1)a-1,a-2", "rb(1)x-1", "top(2)ra,rb"}
	if !slices.Equal(tr.Outline(), want) {
		t.Errorf("outline %v, want %v", tr.Outline(), want)
	}
	_, err = TreeFromHyperNodes(hns, nil)
	var ie *placement.InputError
	if !errors.As(err, &ie) || ie.Field != "hyperNodes[ra].spec.members[0].selector" {
		t.Fatalf("without the nodes: got %v, want an error on hyperNodes[ra].spec.members[0].selector", err)
	}
	hns = append(hns, hn("other", 2, exact(topologyv1alpha1.MemberTypeHyperNode, "rb")))
	_, err = TreeFromHyperNodes(hns, nodes)
	if !errors.As(err, &ie) || ie.Field != "hyperNodes[other].spec.members[0]" {
		t.Fatalf("got %v, want an error on hyperNodes[other].spec.members[0]", err)
	}
}

// TestTreeFromClusterNetworkTopology reads the layers fabricmap's ClusterNetworkTopology writes (and the seed's
// hierarchy form) and rebuilds the tree from the node labels fabricmap writes.
func TestTreeFromClusterNetworkTopology(t *testing.T) {
	tr := fabricTree(t)
	keys, err := hypernodegen.StyleKeys(wellknown.LabelStyleNVIDIAV0) // the seed's hierarchy below names these keys
	if err != nil {
		t.Fatal(err)
	}
	cnt, err := hypernodegen.ClusterNetworkTopology(keys, tr)
	if err != nil {
		t.Fatal(err)
	}
	data, err := cnt.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	seed := []byte(`{"spec":{"hierarchy":[
		{"layerName":"nodeLayer","parentTopologyLayer":"blockLayer"},
		{"layerName":"blockLayer","labelKey":"network.topology.nvidia.com/block","parentTopologyLayer":"spineLayer"},
		{"layerName":"spineLayer","labelKey":"network.topology.nvidia.com/spine","parentTopologyLayer":"datacenterLayer"},
		{"layerName":"datacenterLayer","labelKey":"network.topology.nvidia.com/datacenter"}]}}`)
	labels := hypernodegen.NodeLabels(tr, nil, keys)
	labels["stray"] = map[string]string{"network.topology.nvidia.com/block": "leaf-a"}
	for name, in := range map[string][]byte{"koordinator api": data, "seed hierarchy": seed} {
		t.Run(name, func(t *testing.T) {
			layers, err := ParseClusterNetworkTopology(in)
			if err != nil {
				t.Fatal(err)
			}
			got, left, err := TreeFromLabels(layers, labels)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Outline(), tr.Outline()) || !slices.Equal(left, []string{"stray"}) {
				t.Errorf("outline %v (left out %v), want %v (left out stray)", got.Outline(), left, tr.Outline())
			}
		})
	}
	labels["gpu-9"] = map[string]string{keys.Tiers[0]: "leaf-a", keys.Tiers[1]: "spine-b", keys.Tiers[2]: "fabric"}
	layers, _ := ParseClusterNetworkTopology(data)
	_, _, err = TreeFromLabels(layers, labels)
	var ie *placement.InputError
	if !errors.As(err, &ie) || ie.Field != "nodes[gpu-9].labels["+keys.Tiers[0]+"]" {
		t.Fatalf("got %v, want an error on gpu-9's block label", err)
	}
}

// TestSeedGatherStrategy is the seed's "submit jobs" story: a PodGroup that must gather in a spine layer
// and prefers a block, on a tree read from the seed's ClusterNetworkTopology hierarchy and topograph labels.
func TestSeedGatherStrategy(t *testing.T) {
	cnt := []byte(`{"spec":{"hierarchy":[
		{"layerName":"nodeLayer","parentTopologyLayer":"acceleratorLayer"},
		{"layerName":"acceleratorLayer","labelKey":"network.topology.nvidia.com/accelerator","parentTopologyLayer":"blockLayer"},
		{"layerName":"blockLayer","labelKey":"network.topology.nvidia.com/block","parentTopologyLayer":"spineLayer"},
		{"layerName":"spineLayer","labelKey":"network.topology.nvidia.com/spine","parentTopologyLayer":"datacenterLayer"},
		{"layerName":"datacenterLayer","labelKey":"network.topology.nvidia.com/datacenter"}]}}`)
	layers, err := ParseClusterNetworkTopology(cnt)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]map[string]string{}
	for i := range 8 {
		labels[fmt.Sprintf("node-%d", i)] = map[string]string{
			"network.topology.nvidia.com/accelerator": fmt.Sprintf("nvl%d", i/2),
			"network.topology.nvidia.com/block":       fmt.Sprintf("s1-%d", i/4),
			"network.topology.nvidia.com/spine":       fmt.Sprintf("s2-%d", i/8),
			"network.topology.nvidia.com/datacenter":  "s3",
		}
	}
	tr, left, err := TreeFromLabels(layers, labels)
	if err != nil || len(left) > 0 {
		t.Fatal(err, left)
	}
	busy := map[string]int64{"node-0": 1, "node-4": 1}
	c := mkCluster(t, tr, 1, busy)
	// MustGather spineLayer, PreferGather blockLayer: 3 pods fit in block s1-0 (node-1..3).
	p, err := c.Place(placement.Gang{Name: "g", Pods: 3, HardTierName: "spineLayer", Request: placement.Resources{gpu: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if p.GangTierName != "blockLayer" || p.GangDomain != "s1-0" {
		t.Errorf("got %s %s, want blockLayer s1-0: %s", p.GangTierName, p.GangDomain, p.Explanation)
	}
	// 7 pods need more than the spine's 6 free nodes: no placement within the hard limit.
	if _, err := c.Place(placement.Gang{Name: "g", Pods: 7, HardTierName: "spineLayer", Request: placement.Resources{gpu: 1}}); !errors.Is(err, placement.ErrNoPlacement) {
		t.Errorf("got %v, want ErrNoPlacement", err)
	}
	// MustGather acceleratorLayer for 2 pods: nvl1 (node-2, node-3) is the free NVLink domain.
	p, err = c.Place(placement.Gang{Name: "g", Pods: 2, HardTierName: "acceleratorLayer", Request: placement.Resources{gpu: 1}})
	if err != nil || p.GangDomain != "nvl1" {
		t.Errorf("got %v, %v; want nvl1", p, err)
	}
}

// TestParseTreeSelectors reads HyperNodes that select their nodes by regex or by label, as the aggregator's
// --member-selector writes them, resolving the members against the nodes' labels.
func TestParseTreeSelectors(t *testing.T) {
	tr := fabricTree(t)
	keys := hypernodegen.DefaultLabelKeys()
	labels := hypernodegen.NodeLabels(tr, nil, keys)
	for _, sel := range []string{hypernodegen.SelectorRegex, hypernodegen.SelectorLabel} {
		t.Run(sel, func(t *testing.T) {
			hns, err := hypernodegen.HyperNodes(tr, hypernodegen.Options{NodeSelector: sel, LabelKeys: keys})
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(topologyv1alpha1.HyperNodeList{Items: hns})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseTree(data, labels)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Outline(), tr.Outline()) {
				t.Errorf("outline %v, want %v", got.Outline(), tr.Outline())
			}
			if _, err := ParseTree(data, nil); err == nil {
				t.Error("without the nodes, a selector member should be an error")
			}
		})
	}
}

// TestHyperNodesRoundTrip writes trees as HyperNodes (every member selector) and reads them back, strictly and
// for viewers, into the same tree with its sources.
func TestHyperNodesRoundTrip(t *testing.T) {
	keys := hypernodegen.DefaultLabelKeys()
	trees := map[string]*topology.Tree{
		"fabric": fabricTree(t),
		"accelerators": mkTree(t, "fabric/3/fabric: leaf-a leaf-b", "leaf-a/2/leaf: nvl-1 nvl-2", "leaf-b/2/leaf: gpu-5",
			"nvl-1/1/"+topology.TierNameAccelerator+": gpu-1 gpu-2", "nvl-2/1/"+topology.TierNameAccelerator+": gpu-3"),
	}
	for name, tr := range trees {
		for _, d := range tr.Domains {
			d.Source = "reports"
		}
		for _, sel := range hypernodegen.Selectors {
			t.Run(name+"/"+sel, func(t *testing.T) {
				hns, err := hypernodegen.HyperNodes(tr, hypernodegen.Options{NodeSelector: sel, LabelKeys: keys})
				if err != nil {
					t.Fatal(err)
				}
				labels := hypernodegen.NodeLabels(tr, nil, keys)
				strict, err := TreeFromHyperNodes(hns, labels)
				if err != nil {
					t.Fatal(err)
				}
				viewed, warnings := ViewHyperNodes(hns, labels)
				if len(warnings) > 0 {
					t.Errorf("warnings %q", warnings)
				}
				for _, got := range []*topology.Tree{strict, viewed} {
					if diff := cmp.Diff(tr.Outline(), got.Outline()); diff != "" {
						t.Errorf("outline (-want +got):\n%s", diff)
					}
					if err := got.Validate(); err != nil {
						t.Error(err)
					}
					for n, d := range got.Domains {
						if d.Source != "reports" {
							t.Errorf("domain %s: source %q, want reports", n, d.Source)
						}
					}
				}
			})
		}
	}
}

// TestViewHyperNodesWarnings: what the strict reader refuses, a viewer reads as far as it can and warns about.
func TestViewHyperNodesWarnings(t *testing.T) {
	hn := func(name string, members ...topologyv1alpha1.MemberSpec) topologyv1alpha1.HyperNode {
		h := topologyv1alpha1.HyperNode{}
		h.Name, h.Spec.Tier, h.Spec.Members = name, 2, members
		return h
	}
	exact := func(typ topologyv1alpha1.MemberType, n string) topologyv1alpha1.MemberSpec {
		return topologyv1alpha1.MemberSpec{Type: typ, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: n}}}
	}
	regex := func(pattern string) topologyv1alpha1.MemberSpec {
		return topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: pattern}}}
	}
	cases := []struct {
		name       string
		hns        []topologyv1alpha1.HyperNode
		nodes      map[string]map[string]string
		wantTree   []string
		wantWarned []string
	}{{
		name:     "unknown member, selector without nodes",
		hns:      []topologyv1alpha1.HyperNode{hn("a", exact(topologyv1alpha1.MemberTypeHyperNode, "ghost"), regex("n.*"))},
		wantTree: []string{"a(2)ghost"},
		wantWarned: []string{
			`HyperNode "a" lists member HyperNode "ghost", which does not exist`,
			`HyperNode "a": a Node member selected by regex or label is not shown`,
		},
	}, {
		name:     "selector resolved against the nodes, a bad one left out",
		hns:      []topologyv1alpha1.HyperNode{hn("a", regex("^n"), regex("("))},
		nodes:    map[string]map[string]string{"n1": nil, "n2": nil, "x": nil},
		wantTree: []string{"a(2)n1,n2"},
		wantWarned: []string{
			"HyperNode \"a\": a Node member selected by regex or label is not shown: hyperNodes[a].spec.members[1].selector: regexMatch.pattern: error parsing regexp: missing closing ): `(`",
		},
	}, {
		name:       "claimed twice, named twice",
		hns:        []topologyv1alpha1.HyperNode{hn("a", exact(topologyv1alpha1.MemberTypeHyperNode, "c")), hn("b", exact(topologyv1alpha1.MemberTypeHyperNode, "c")), hn("c"), hn("c")},
		wantTree:   []string{"a(2)c", "b(2)c", "c(2)"},
		wantWarned: []string{`HyperNode "c" is a member of both "a" and "b"`, `domain "c" added twice`},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings := ViewHyperNodes(tc.hns, tc.nodes)
			if diff := cmp.Diff(tc.wantTree, got.Outline()); diff != "" {
				t.Errorf("outline (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarned, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if _, err := TreeFromHyperNodes(tc.hns, tc.nodes); err == nil {
				t.Error("the strict reader accepted it")
			}
		})
	}
}

// TestNeedsNodeLabels: only node members selected by regex or label need the nodes.
func TestNeedsNodeLabels(t *testing.T) {
	tr := fabricTree(t)
	for sel, want := range map[string]bool{hypernodegen.SelectorExact: false, hypernodegen.SelectorRegex: true, hypernodegen.SelectorLabel: true} {
		hns, err := hypernodegen.HyperNodes(tr, hypernodegen.Options{NodeSelector: sel, LabelKeys: hypernodegen.DefaultLabelKeys()})
		if err != nil {
			t.Fatal(err)
		}
		if got := NeedsNodeLabels(hns); got != want {
			t.Errorf("%s: NeedsNodeLabels = %v, want %v", sel, got, want)
		}
	}
}

// TestDegradedUplinksRoundTrip: a domain's degraded uplinks, written as a HyperNode annotation, read back into
// the tree by the strict reader, the viewer and ParseTree (a List of HyperNodes and the tree's own JSON).
func TestDegradedUplinksRoundTrip(t *testing.T) {
	tr := fabricTree(t)
	tr.Domains["leaf-b"].DegradedUplinks = 2
	tr.Domains["spine-a"].DegradedUplinks = 1
	want := map[string]int{"fabric": 0, "spine-a": 1, "spine-b": 0, "leaf-a": 0, "leaf-b": 2, "leaf-c": 0}
	hns, err := hypernodegen.HyperNodes(tr, hypernodegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := topologyv1alpha1.HyperNodeList{Items: hns}
	list.Kind = "List"
	listJSON, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	treeJSON, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]func() (*topology.Tree, error){
		"strict": func() (*topology.Tree, error) { return TreeFromHyperNodes(hns, nil) },
		"viewer": func() (*topology.Tree, error) {
			got, warnings := ViewHyperNodes(hns, nil)
			if len(warnings) > 0 {
				return nil, fmt.Errorf("warnings %q", warnings)
			}
			return got, nil
		},
		"ParseTree, HyperNode list": func() (*topology.Tree, error) { return ParseTree(listJSON, nil) },
		"ParseTree, tree":           func() (*topology.Tree, error) { return ParseTree(treeJSON, nil) },
	}
	for name, readTree := range read {
		t.Run(name, func(t *testing.T) {
			got, err := readTree()
			if err != nil {
				t.Fatal(err)
			}
			degraded := map[string]int{}
			for n, d := range got.Domains {
				degraded[n] = d.DegradedUplinks
			}
			if diff := cmp.Diff(want, degraded); diff != "" {
				t.Errorf("degraded uplinks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDegradedUplinksBad: an annotation that is no count is an InputError naming the HyperNode and the
// annotation for the strict reader, and a warning (the domain read as healthy) for viewers.
func TestDegradedUplinksBad(t *testing.T) {
	for _, v := range []string{"two", "-1", ""} {
		t.Run(v, func(t *testing.T) {
			hns, err := hypernodegen.HyperNodes(fabricTree(t), hypernodegen.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range hns {
				if hns[i].Name == "leaf-b" {
					hns[i].Annotations = map[string]string{wellknown.DegradedUplinksAnnotation: v}
				}
			}
			_, err = TreeFromHyperNodes(hns, nil)
			var ie *placement.InputError
			wantField := "hyperNodes[leaf-b].metadata.annotations[" + wellknown.DegradedUplinksAnnotation + "]"
			if !errors.As(err, &ie) || ie.Field != wantField {
				t.Errorf("strict reader: %v, want an InputError on %s", err, wantField)
			}
			got, warnings := ViewHyperNodes(hns, nil)
			wantWarned := []string{fmt.Sprintf("HyperNode \"leaf-b\": annotation %s=%q is not a count of uplinks; read as none",
				wellknown.DegradedUplinksAnnotation, v)}
			if diff := cmp.Diff(wantWarned, warnings); diff != "" {
				t.Errorf("viewer warnings (-want +got):\n%s", diff)
			}
			if n := got.Domains["leaf-b"].DegradedUplinks; n != 0 {
				t.Errorf("viewer: leaf-b has %d degraded uplinks, want 0", n)
			}
		})
	}
}

// TestTreeFromLabelsSkippedTier: where a node's branch skips a tier, fabricmap's labels name the domain below at
// that tier too; the domain stays at its own tier, under the next distinct value.
func TestTreeFromLabelsSkippedTier(t *testing.T) {
	layers := []Layer{{Name: "core", LabelKey: "k/core"}, {Name: "spine", LabelKey: "k/spine"}, {Name: "leaf", LabelKey: "k/leaf"}}
	nodes := map[string]map[string]string{
		"a": {"k/core": "root", "k/spine": "sp-1", "k/leaf": "leaf-1"},
		"b": {"k/core": "root", "k/spine": "leaf-2", "k/leaf": "leaf-2"}, // leaf-2 sits right under the root
	}
	tr, leftOut, err := TreeFromLabels(layers, nodes)
	if err != nil || len(leftOut) > 0 {
		t.Fatalf("TreeFromLabels: %v, left out %v", err, leftOut)
	}
	if d := tr.Domains["leaf-2"]; d == nil || d.Tier != 1 || d.Parent != "root" || len(d.Nodes) != 1 {
		t.Errorf("leaf-2 = %+v, want tier 1 under root holding b", d)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
}
