package hypernodegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

func TestKueueTopology(t *testing.T) {
	const hostname = "kubernetes.io/hostname"
	tests := []struct {
		name string
		tree func(*testing.T) *topology.Tree
		keys LabelKeys
		want []string
	}{{
		name: "2-tier tree",
		tree: twoTierTree,
		keys: DefaultLabelKeys(),
		want: []string{DefaultTierKeys[1], DefaultTierKeys[0], hostname},
	}, {
		name: "3 switch tiers with accelerator domains",
		tree: acceleratorTree,
		keys: DefaultLabelKeys(),
		want: []string{DefaultTierKeys[2], DefaultTierKeys[1], DefaultTierKeys[0], DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey, hostname},
	}, {
		name: "nvidia-v0 keys, no accelerator key",
		tree: acceleratorTree,
		keys: nvidiaV0Tiers,
		want: []string{wellknown.NVIDIAV0TierKeys[2], wellknown.NVIDIAV0TierKeys[1], wellknown.NVIDIAV0TierKeys[0], hostname},
	}, {
		name: "a tree Build made with accelerator domains",
		tree: func(t *testing.T) *topology.Tree { return nvlinkTree(t, true) },
		keys: DefaultLabelKeys(),
		want: []string{DefaultTierKeys[2], DefaultTierKeys[1], DefaultTierKeys[0], DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey, hostname},
	}, {
		name: "fewer keys than tiers: the top tier is left out",
		tree: acceleratorTree,
		keys: LabelKeys{Tiers: DefaultTierKeys[:2]},
		want: []string{DefaultTierKeys[1], DefaultTierKeys[0], hostname},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := KueueTopology("fabric", tc.keys, tc.tree(t))
			if err != nil {
				t.Fatal(err)
			}
			if topo.APIVersion != "kueue.x-k8s.io/v1beta2" || topo.Kind != "Topology" {
				t.Errorf("TypeMeta = %+v", topo.TypeMeta)
			}
			if topo.Name != "fabric" || topo.Namespace != "" || topo.Labels[wellknown.ManagedByLabel] != wellknown.ManagedByValue {
				t.Errorf("ObjectMeta = %+v", topo.ObjectMeta)
			}
			var got []string
			for _, l := range topo.Spec.Levels {
				got = append(got, l.NodeLabel)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("levels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKueueTopologyErrors(t *testing.T) {
	tests := []struct {
		name, topoName string
		tree           func(*testing.T) *topology.Tree
		keys           LabelKeys
		want           string
	}{
		{name: "empty tree", topoName: "fabric", tree: func(*testing.T) *topology.Tree { return topology.NewTree() }, keys: DefaultLabelKeys(), want: "no domains"},
		{name: "bad name", topoName: "Fabric!", tree: twoTierTree, keys: DefaultLabelKeys(), want: "invalid"},
		{name: "hostname as a tier key", topoName: "fabric", tree: twoTierTree, keys: LabelKeys{Tiers: []string{"kubernetes.io/hostname"}}, want: "reserved for the node level"},
		{name: "too many levels", topoName: "fabric", tree: tallTree, keys: tallKeys(), want: "17 levels, Kueue accepts at most 16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := KueueTopology(tc.topoName, tc.keys, tc.tree(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q (object %v)", err, tc.want, topo)
			}
		})
	}
}

// tallTree is a chain of 16 switch tiers: with tallKeys and the hostname level, one level more than Kueue and
// KAI take.
func tallTree(t *testing.T) *topology.Tree {
	var ds []dom
	for tier := 1; tier <= 16; tier++ {
		d := dom{name: fmt.Sprintf("t%d", tier), tier: tier}
		if tier < 16 {
			d.parent = fmt.Sprintf("t%d", tier+1)
		}
		if tier == 1 {
			d.nodes = []string{"n1"}
		}
		ds = append(ds, d)
	}
	return buildTree(t, ds...)
}

// tallKeys are a label key for each of tallTree's 16 tiers.
func tallKeys() LabelKeys {
	var keys LabelKeys
	for i := 1; i <= 16; i++ {
		keys.Tiers = append(keys.Tiers, fmt.Sprintf("example.com/tier-%d", i))
	}
	return keys
}
