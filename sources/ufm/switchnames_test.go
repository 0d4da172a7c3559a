package ufm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/topology"
)

// Unmanaged switches keep the ASIC's default description for life, so that several switches of one fabric
// share it: it names none of them, and each is named after its GUID, however UFM orders them. A default
// description only one switch has, and a plain name several share, are names as before.
func TestEvidenceNamesDefaultDescribedSwitchesByGUID(t *testing.T) {
	const spine = "248a070300f20100"
	leafGUID := func(i int) string { return fmt.Sprintf("0002c90200a0b%d00", i) }
	// fabric has one leaf per name, each with one host (host-<i>), all cabled to one spine. A name
	// "link:<desc>" leaves the system unnamed and gives the description on the links only.
	fabric := func(names ...string) *Fabric {
		f := &Fabric{Systems: []System{{SystemGUID: spine, GUID: spine, SystemName: "MF0;ib-spine-01:MQM8700/U1", Type: "switch"}}}
		for i, name := range names {
			i++
			leaf, host := leafGUID(i), fmt.Sprintf("0002c90300a0%d100", i)
			sysName, linkDesc := name, ""
			if d, ok := strings.CutPrefix(name, "link:"); ok {
				sysName, linkDesc = "", d
			}
			f.Systems = append(f.Systems,
				System{SystemGUID: leaf, GUID: leaf, SystemName: sysName, Type: "switch"},
				System{SystemGUID: host, GUID: host, SystemName: fmt.Sprintf("host-%d", i), Type: "host"})
			f.Links = append(f.Links,
				Link{SourceGUID: leaf, SourcePort: "1", DestinationGUID: host, DestinationPort: "1", SourceNodeDescription: linkDesc + ":1"},
				Link{SourceGUID: leaf, SourcePort: "19", DestinationGUID: spine, DestinationPort: fmt.Sprint(i), SourceNodeDescription: linkDesc + ":19"})
		}
		return f
	}
	reversed := func(f *Fabric) *Fabric {
		slices.Reverse(f.Systems)
		slices.Reverse(f.Links)
		return f
	}
	byGUID := func(n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, "guid-"+leafGUID(i))
		}
		return out
	}
	const infiniscale = "Infiniscale-IV Mellanox Technologies"
	tests := []struct {
		name   string
		fabric *Fabric
		want   []string // the name UFM gives the switch of host-1, host-2, …
		leaves []string // the leaf domain host-1, host-2, … land in; nil: want
	}{{
		name:   "three switches share a default description",
		fabric: fabric(infiniscale, infiniscale, infiniscale),
		want:   byGUID(3),
	}, {
		name:   "the same, listed the other way round",
		fabric: reversed(fabric(infiniscale, infiniscale, infiniscale)),
		want:   byGUID(3),
	}, {
		name:   "the same description spelled in other case and spacing",
		fabric: fabric("Quantum Mellanox Technologies", "QUANTUM  Mellanox Technologies", "ib-leaf-03"),
		want:   append(byGUID(2), "ib-leaf-03"),
	}, {
		name:   "the default description only on the links, the systems unnamed",
		fabric: fabric("link:SwitchX -  Mellanox Technologies", "link:SwitchX -  Mellanox Technologies"),
		want:   byGUID(2),
	}, {
		name:   "one switch with a default description keeps it",
		fabric: fabric(infiniscale, "MF0;ib-leaf-02:MQM8700/U1"),
		want:   []string{infiniscale, "ib-leaf-02"},
		leaves: []string{"infiniscale-iv-mellanox-technologies", "ib-leaf-02"},
	}, {
		name:   "a plain name two switches share is given to both: the tree settles it",
		fabric: fabric("leaf", "leaf"),
		want:   []string{"leaf", "leaf"},
		leaves: []string{"leaf", "guid-" + leafGUID(2)},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, rep := Evidence(tc.fabric, Options{})
			if len(rep.Skipped) > 0 {
				t.Errorf("skipped: %q", rep.Skipped)
			}
			var got []string
			for _, n := range in.Nodes {
				for _, l := range n.Links {
					got = append(got, l.SwitchName)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("switch names (-want +got):\n%s", diff)
			}
			for _, e := range in.SwitchLinks {
				if i := slices.IndexFunc(in.Nodes, func(n topology.NodeEvidence) bool { return n.Links[0].SwitchID == e.A }); i >= 0 && e.AName != tc.want[i] {
					t.Errorf("switch link %+v: the leaf is named %q, want %q as its hosts' links say", e, e.AName, tc.want[i])
				}
			}
			tree, probs := topology.Build(in, topology.BuildOptions{})
			if err := tree.Validate(); err != nil {
				t.Fatal(err)
			}
			wantLeaves := tc.leaves
			if wantLeaves == nil {
				wantLeaves = tc.want
				if len(probs) > 0 {
					t.Errorf("problems: %v", probs)
				}
			}
			var leaves []string
			for _, n := range in.Nodes {
				leaves = append(leaves, tree.PathOf(n.Node)[0].Name)
			}
			if diff := cmp.Diff(wantLeaves, leaves); diff != "" {
				t.Errorf("leaf domains (-want +got):\n%s", diff)
			}
		})
	}
}
