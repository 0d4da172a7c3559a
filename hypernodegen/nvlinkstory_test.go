package hypernodegen

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/topology/topologytest"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestOneNVLinkStory: with and without accelerator domains, the outputs tell one story of NVLink. The label
// keys every node carries are the Kueue levels (hostname aside) and Koordinator's layers, no more and no less;
// NVLink labels are written exactly when the tree has NVLink HyperNodes (and then the sub-domain with the
// domain, whenever the keys name both); a labelMatch HyperNode selects exactly its nodes by those labels; and
// NVLinkLeftOut counts the nodes whose reported NVLink domain no output states.
func TestOneNVLinkStory(t *testing.T) {
	topographV1, nvidiaV0 := mustStyleKeys(t, wellknown.LabelStyleTopographV1), mustStyleKeys(t, wellknown.LabelStyleNVIDIAV0)
	accelOnly := LabelKeys{Style: wellknown.LabelStyleCustom, Accelerator: "example.com/nvlink", Tiers: []string{"example.com/leaf", "example.com/spine", "example.com/top"}}
	noNVLink := func() topology.Input {
		in := nvlinkEvidence()
		for i := range in.Nodes {
			in.Nodes[i].NVLinkDomain = ""
		}
		return in
	}
	tests := []struct {
		name         string
		in           topology.Input
		accelerators bool
		keys         LabelKeys
		// wantNVLinkKeys are the NVLink label keys every node carries; none when the tree has no NVLink level.
		wantNVLinkKeys []string
		// wantLeftOut is NVLinkLeftOut: the nodes that report an NVLink domain no output states.
		wantLeftOut int
	}{{
		name: "one-rack NVLink domains without accelerator domains: no NVLink anywhere, 5 nodes' domains left out",
		in:   nvlinkEvidence(), keys: topographV1, wantLeftOut: 5,
	}, {
		name: "one-rack NVLink domains with accelerator domains: domain and sub-domain on every node",
		in:   nvlinkEvidence(), accelerators: true, keys: topographV1,
		wantNVLinkKeys: []string{DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey},
	}, {
		name: "nvidia-v0 keys without accelerator domains",
		in:   nvlinkEvidence(), keys: nvidiaV0, wantLeftOut: 5,
	}, {
		name: "nvidia-v0 keys with accelerator domains",
		in:   nvlinkEvidence(), accelerators: true, keys: nvidiaV0,
		wantNVLinkKeys: []string{wellknown.NVIDIAV0AcceleratorKey, nvidiaV0.AcceleratorSubDomain},
	}, {
		name: "custom keys without a sub-domain key, with accelerator domains: the domain alone",
		in:   nvlinkEvidence(), accelerators: true, keys: accelOnly,
		wantNVLinkKeys: []string{"example.com/nvlink"},
	}, {
		name: "an NVLink domain over six racks without accelerator domains",
		in:   topologytest.SpanInput(), keys: topographV1, wantLeftOut: 48,
	}, {
		name: "an NVLink domain over six racks with accelerator domains: racks as sub-domains",
		in:   topologytest.SpanInput(), accelerators: true, keys: topographV1,
		wantNVLinkKeys: []string{DefaultAcceleratorKey, DefaultAcceleratorSubDomainKey},
	}, {
		name: "no node reports NVLink, without accelerator domains: nothing left out",
		in:   noNVLink(), keys: topographV1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, _ := topology.Build(tc.in, topology.BuildOptions{AcceleratorDomains: tc.accelerators})
			labels := DesiredNodeLabels(tree, tc.in.Nodes, tc.keys)
			if len(labels) == 0 {
				t.Fatal("no node labelled")
			}

			topo, err := KueueTopology("fabric", tc.keys, tree)
			if err != nil {
				t.Fatal(err)
			}
			var levels []string
			for _, l := range topo.Spec.Levels {
				if l.NodeLabel != corev1.LabelHostname {
					levels = append(levels, l.NodeLabel)
				}
			}
			cnt, err := ClusterNetworkTopology(tc.keys, tree)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(levels, cntLabelKeys(t, cnt.Object)); diff != "" {
				t.Errorf("ClusterNetworkTopology layers differ from the Kueue levels (-kueue +cnt):\n%s", diff)
			}
			nvlinkKeys := map[string]bool{tc.keys.Accelerator: true, tc.keys.AcceleratorSubDomain: true}
			var wantLevels []string
			for _, l := range levels {
				if !nvlinkKeys[l] {
					wantLevels = append(wantLevels, l)
				}
			}
			wantLevels = append(wantLevels, tc.wantNVLinkKeys...)
			if diff := cmp.Diff(wantLevels, levels); diff != "" {
				t.Errorf("Kueue levels (-want +got):\n%s", diff)
			}
			for node, l := range labels {
				if diff := cmp.Diff(slices.Sorted(slices.Values(levels)), slices.Sorted(maps.Keys(l))); diff != "" {
					t.Errorf("node %s: label keys differ from the Kueue levels (-levels +labels):\n%s", node, diff)
				}
			}

			hns, err := HyperNodes(tree, Options{NodeSelector: SelectorLabel, LabelKeys: tc.keys})
			if err != nil {
				t.Fatal(err)
			}
			nvlinkHyperNodes := 0
			for _, hn := range hns {
				if hn.Spec.TierName == topology.TierNameAccelerator || hn.Spec.TierName == topology.TierNameAcceleratorSubDomain {
					nvlinkHyperNodes++
				}
				for _, m := range hn.Spec.Members {
					if m.Selector.LabelMatch == nil {
						continue
					}
					var selected []string
					for node, l := range labels {
						if matches(l, m.Selector.LabelMatch.MatchLabels) {
							selected = append(selected, node)
						}
					}
					if diff := cmp.Diff(slices.Sorted(slices.Values(tree.Domains[hn.Name].Nodes)), slices.Sorted(slices.Values(selected))); diff != "" {
						t.Errorf("HyperNode %s selects by %v other nodes than its own (-own +selected):\n%s", hn.Name, m.Selector.LabelMatch.MatchLabels, diff)
					}
				}
			}
			if (nvlinkHyperNodes > 0) != (len(tc.wantNVLinkKeys) > 0) {
				t.Errorf("%d NVLink HyperNodes, NVLink label keys %v: they must exist together", nvlinkHyperNodes, tc.wantNVLinkKeys)
			}

			if got := NVLinkLeftOut(tree, tc.in.Nodes); got != tc.wantLeftOut {
				t.Errorf("NVLinkLeftOut = %d, want %d", got, tc.wantLeftOut)
			}
		})
	}
}

// matches reports whether labels carry every key and value of selector.
func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
