package hypernodegen

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

// dom is a domain of a test tree: name, tier, tier name, parent and the nodes it holds directly.
type dom struct {
	name, tierName, parent string
	tier                   int
	nodes                  []string
}

// buildTree makes a valid tree from ds, deriving every domain's children from the parents.
func buildTree(t *testing.T, ds ...dom) *topology.Tree {
	t.Helper()
	tree := topology.NewTree()
	for _, d := range ds {
		if err := tree.Add(&topology.Domain{Name: d.name, Tier: d.tier, TierName: d.tierName, Parent: d.parent, Nodes: d.nodes}); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range ds {
		if d.parent != "" {
			p := tree.Domains[d.parent]
			p.Children = append(p.Children, d.name)
			slices.Sort(p.Children)
		}
	}
	if err := tree.Validate(); err != nil {
		t.Fatalf("test tree is invalid: %v", err)
	}
	return tree
}

// twoTierTree: two leaves below the root.
func twoTierTree(t *testing.T) *topology.Tree {
	return buildTree(t,
		dom{name: "fabric", tier: 2, tierName: topology.TierNameRoot},
		dom{name: "leaf-b", tier: 1, tierName: topology.TierNameLeaf, parent: "fabric", nodes: []string{"n3"}},
		dom{name: "leaf-a", tier: 1, tierName: topology.TierNameLeaf, parent: "fabric", nodes: []string{"n2", "n1"}},
	)
}

// acceleratorTree: NVLink domains (tier 1) below three switch tiers: leaves (2), spines (3) and the root (4).
// leaf-c holds a node without an NVLink domain directly.
func acceleratorTree(t *testing.T) *topology.Tree {
	return buildTree(t,
		dom{name: "fabric", tier: 4, tierName: topology.TierNameRoot},
		dom{name: "spine-1", tier: 3, tierName: topology.TierNameSpine, parent: "fabric"},
		dom{name: "spine-2", tier: 3, tierName: topology.TierNameSpine, parent: "fabric"},
		dom{name: "leaf-a", tier: 2, tierName: topology.TierNameLeaf, parent: "spine-1"},
		dom{name: "leaf-b", tier: 2, tierName: topology.TierNameLeaf, parent: "spine-2"},
		dom{name: "leaf-c", tier: 2, tierName: topology.TierNameLeaf, parent: "spine-2", nodes: []string{"n6"}},
		dom{name: "nvl-1", tier: 1, tierName: topology.TierNameAccelerator, parent: "leaf-a", nodes: []string{"n1", "n2"}},
		dom{name: "nvl-2", tier: 1, tierName: topology.TierNameAccelerator, parent: "leaf-a", nodes: []string{"n3"}},
		dom{name: "nvl-3", tier: 1, tierName: topology.TierNameAccelerator, parent: "leaf-b", nodes: []string{"n4", "n5"}},
	)
}

// nvidiaV0Tiers are LabelStyleNVIDIAV0's tier keys alone, without an accelerator key.
var nvidiaV0Tiers = LabelKeys{Tiers: wellknown.NVIDIAV0TierKeys}

// layer is one expected spec.networkTopologySpec entry.
type layer struct{ name, parent, key string }

func TestClusterNetworkTopology(t *testing.T) {
	node := func(parent string) layer { return layer{name: KoordinatorNodeLayer, parent: parent} }
	tests := []struct {
		name string
		tree func(*testing.T) *topology.Tree
		keys LabelKeys
		opts []ClusterNetworkTopologyOption
		want []layer
	}{{
		name: "2-tier tree: block and spine, no datacenter layer",
		tree: twoTierTree,
		keys: DefaultLabelKeys(),
		want: []layer{
			{name: "SpineLayer", key: DefaultTierKeys[1]},
			{name: "BlockLayer", parent: "SpineLayer", key: DefaultTierKeys[0]},
			node("BlockLayer"),
		},
	}, {
		name: "3 switch tiers with accelerator domains: accelerator and sub-domain layers right above the nodes",
		tree: acceleratorTree,
		keys: DefaultLabelKeys(),
		want: []layer{
			{name: "DatacenterLayer", key: DefaultTierKeys[2]},
			{name: "SpineLayer", parent: "DatacenterLayer", key: DefaultTierKeys[1]},
			{name: "BlockLayer", parent: "SpineLayer", key: DefaultTierKeys[0]},
			{name: "AcceleratorLayer", parent: "BlockLayer", key: DefaultAcceleratorKey},
			{name: "AcceleratorSubDomainLayer", parent: "AcceleratorLayer", key: DefaultAcceleratorSubDomainKey},
			node("AcceleratorSubDomainLayer"),
		},
	}, {
		name: "accelerator domains but no accelerator key: no accelerator layer",
		tree: acceleratorTree,
		keys: nvidiaV0Tiers,
		want: []layer{
			{name: "DatacenterLayer", key: wellknown.NVIDIAV0TierKeys[2]},
			{name: "SpineLayer", parent: "DatacenterLayer", key: wellknown.NVIDIAV0TierKeys[1]},
			{name: "BlockLayer", parent: "SpineLayer", key: wellknown.NVIDIAV0TierKeys[0]},
			node("BlockLayer"),
		},
	}, {
		name: "nvidia-v0 keys, custom layer names, a tier without a name",
		tree: acceleratorTree,
		keys: LabelKeys{Accelerator: wellknown.NVIDIAV0AcceleratorKey, Tiers: wellknown.NVIDIAV0TierKeys},
		opts: []ClusterNetworkTopologyOption{WithLayerNames(LayerNames{Accelerator: "NVLink", Tiers: []string{"Leaf", ""}})},
		want: []layer{
			{name: "Tier3Layer", key: wellknown.NVIDIAV0TierKeys[2]},
			{name: "Tier2Layer", parent: "Tier3Layer", key: wellknown.NVIDIAV0TierKeys[1]},
			{name: "Leaf", parent: "Tier2Layer", key: wellknown.NVIDIAV0TierKeys[0]},
			{name: "NVLink", parent: "Leaf", key: wellknown.NVIDIAV0AcceleratorKey},
			node("NVLink"),
		},
	}, {
		name: "a tree Build made with accelerator domains",
		tree: func(t *testing.T) *topology.Tree { return nvlinkTree(t, true) },
		keys: DefaultLabelKeys(),
		want: []layer{
			{name: "DatacenterLayer", key: DefaultTierKeys[2]},
			{name: "SpineLayer", parent: "DatacenterLayer", key: DefaultTierKeys[1]},
			{name: "BlockLayer", parent: "SpineLayer", key: DefaultTierKeys[0]},
			{name: "AcceleratorLayer", parent: "BlockLayer", key: DefaultAcceleratorKey},
			{name: "AcceleratorSubDomainLayer", parent: "AcceleratorLayer", key: DefaultAcceleratorSubDomainKey},
			node("AcceleratorSubDomainLayer"),
		},
	}, {
		name: "a tree Build made from the same evidence without accelerator domains",
		tree: func(t *testing.T) *topology.Tree { return nvlinkTree(t, false) },
		keys: DefaultLabelKeys(),
		want: []layer{
			{name: "DatacenterLayer", key: DefaultTierKeys[2]},
			{name: "SpineLayer", parent: "DatacenterLayer", key: DefaultTierKeys[1]},
			{name: "BlockLayer", parent: "SpineLayer", key: DefaultTierKeys[0]},
			node("BlockLayer"),
		},
	}, {
		name: "a tier without a key is left out",
		tree: acceleratorTree,
		keys: LabelKeys{Tiers: []string{"example.com/leaf", "", "example.com/top"}},
		want: []layer{
			{name: "DatacenterLayer", key: "example.com/top"},
			{name: "BlockLayer", parent: "DatacenterLayer", key: "example.com/leaf"},
			node("BlockLayer"),
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ClusterNetworkTopology(tc.keys, tc.tree(t), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if gvk := u.GroupVersionKind(); gvk != ClusterNetworkTopologyGVK {
				t.Errorf("GVK = %v", gvk)
			}
			if u.GetName() != ClusterNetworkTopologyName || u.GetNamespace() != "" || u.GetLabels()[wellknown.ManagedByLabel] != wellknown.ManagedByValue {
				t.Errorf("metadata = %s/%s %v", u.GetNamespace(), u.GetName(), u.GetLabels())
			}
			if _, has := u.Object["status"]; has {
				t.Error("status is koord-scheduler's to write")
			}
			if diff := cmp.Diff(tc.want, layers(t, u.Object), cmp.AllowUnexported(layer{})); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
		})
	}
}

// layers reads spec.networkTopologySpec back, checking that every value has a JSON type.
func layers(t *testing.T, obj map[string]any) []layer {
	t.Helper()
	spec, _ := obj["spec"].(map[string]any)
	items, ok := spec["networkTopologySpec"].([]any)
	if !ok {
		t.Fatalf("spec.networkTopologySpec is %T", spec["networkTopologySpec"])
	}
	var out []layer
	for _, it := range items {
		e := it.(map[string]any)
		l := layer{name: e["topologyLayer"].(string)}
		if p, ok := e["parentTopologyLayer"]; ok {
			l.parent = p.(string)
		}
		if k, ok := e["labelKey"]; ok {
			keys := k.([]any)
			if len(keys) != 1 {
				t.Fatalf("labelKey = %v, want one key", keys)
			}
			l.key = keys[0].(string)
		}
		out = append(out, l)
	}
	return out
}

func TestClusterNetworkTopologyErrors(t *testing.T) {
	misplaced := func(t *testing.T) *topology.Tree {
		return buildTree(t,
			dom{name: "leaf", tier: 2, tierName: topology.TierNameLeaf},
			dom{name: "nvl", tier: 1, tierName: topology.TierNameAccelerator, parent: "leaf", nodes: []string{"n1"}},
			dom{name: "low-leaf", tier: 1, tierName: topology.TierNameLeaf, parent: "leaf", nodes: []string{"n2"}},
		)
	}
	tests := []struct {
		name string
		tree func(*testing.T) *topology.Tree
		keys LabelKeys
		opts []ClusterNetworkTopologyOption
		want string
	}{
		{name: "empty tree", tree: func(*testing.T) *topology.Tree { return topology.NewTree() }, keys: DefaultLabelKeys(), want: "no domains"},
		{name: "nil tree", tree: func(*testing.T) *topology.Tree { return nil }, keys: DefaultLabelKeys(), want: "no domains"},
		{name: "invalid tree", tree: func(*testing.T) *topology.Tree {
			tree := topology.NewTree()
			_ = tree.Add(&topology.Domain{Name: "leaf", Tier: 1, Parent: "gone", Nodes: []string{"n1"}})
			return tree
		}, keys: DefaultLabelKeys(), want: "invalid topology tree"},
		{name: "bad label key", tree: twoTierTree, keys: LabelKeys{Tiers: []string{"not a key"}}, want: "not a key"},
		{name: "no key for any tier", tree: twoTierTree, keys: LabelKeys{Accelerator: DefaultAcceleratorKey}, want: "no tier of the tree has a node-label key"},
		{name: "one key for two tiers", tree: twoTierTree, keys: LabelKeys{Tiers: []string{"example.com/x", "example.com/x"}}, want: "two levels"},
		{name: "accelerator domains not at the bottom", tree: misplaced, keys: DefaultLabelKeys(), want: "not below every switch domain"},
		{name: "bad object name", tree: twoTierTree, keys: DefaultLabelKeys(), opts: []ClusterNetworkTopologyOption{WithClusterNetworkTopologyName("Not_A_Name")}, want: "invalid"},
		{name: "reserved layer name", tree: twoTierTree, keys: DefaultLabelKeys(),
			opts: []ClusterNetworkTopologyOption{WithLayerNames(LayerNames{Tiers: []string{KoordinatorNodeLayer}})}, want: "reserved or used twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ClusterNetworkTopology(tc.keys, tc.tree(t), tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q (object %v)", err, tc.want, u)
			}
		})
	}
}

func TestClusterNetworkTopologyName(t *testing.T) {
	u, err := ClusterNetworkTopology(DefaultLabelKeys(), twoTierTree(t), WithClusterNetworkTopologyName("lab"))
	if err != nil || u.GetName() != "lab" {
		t.Fatalf("name = %v, err = %v", u, err)
	}
}
