package fabricplacement

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/hypernodegen"
)

// TestTreeFromLabels reads trees from node labels and compares each domain's tier and members (child domains
// or nodes) and each key's tier, or the error of labels that form no tree.
func TestTreeFromLabels(t *testing.T) {
	leaf, spine, nvl := keys.Tiers[0], keys.Tiers[1], keys.Accelerator
	for _, tc := range []struct {
		name    string
		labels  map[string]map[string]string
		given   *hypernodegen.LabelKeys // the aggregator's keys; nil: detected
		domains map[string]string       // domain → "tier: members"
		keyTier map[string]int
		wantErr string
	}{
		{name: "leaves under a spine; a node without labels left out",
			labels: map[string]map[string]string{
				"n1": {leaf: "l1", spine: "s1"}, "n2": {leaf: "l1", spine: "s1"}, "n3": {leaf: "l2", spine: "s1"}, "bare": {},
			},
			domains: map[string]string{"s1": "2: l1 l2", "l1": "1: n1 n2", "l2": "1: n3"},
			keyTier: map[string]int{leaf: 1, spine: 2}},
		{name: "NVLink domains below the leaves; a node without one is its own",
			labels: map[string]map[string]string{
				"n1": {leaf: "l1", spine: "s1", nvl: "x"}, "n2": {leaf: "l1", spine: "s1", nvl: "x"}, "n3": {leaf: "l1", spine: "s1"},
			},
			domains: map[string]string{"s1": "3: l1", "l1": "2: solo/n3 x", "x": "1: n1 n2", "solo/n3": "1: n3"},
			keyTier: map[string]int{nvl: 1, leaf: 2, spine: 3}},
		{name: "an NVLink domain across leaves: the switch tiers alone",
			labels: map[string]map[string]string{
				"n1": {leaf: "l1", spine: "s1", nvl: "x"}, "n2": {leaf: "l2", spine: "s1", nvl: "x"},
			},
			domains: map[string]string{"s1": "2: l1 l2", "l1": "1: n1", "l2": "1: n2"},
			keyTier: map[string]int{leaf: 1, spine: 2}},
		{name: "custom keys, as the aggregator's Lease states them",
			labels: map[string]map[string]string{
				"n1": {"example.com/rack": "r1", "example.com/row": "w1"}, "n2": {"example.com/rack": "r2", "example.com/row": "w1"},
			},
			given:   &hypernodegen.LabelKeys{Style: "custom", Tiers: []string{"example.com/rack", "example.com/row"}},
			domains: map[string]string{"w1": "2: r1 r2", "r1": "1: n1", "r2": "1: n2"},
			keyTier: map[string]int{"example.com/rack": 1, "example.com/row": 2}},
		{name: "custom keys not stated: not fabricmap's labels",
			labels:  map[string]map[string]string{"n1": {"example.com/rack": "r1", "example.com/row": "w1"}},
			wantErr: "no node carries fabricmap's topology labels"},
		{name: "no fabricmap labels", labels: map[string]map[string]string{"n1": {"zone": "a"}},
			wantErr: "no node carries fabricmap's topology labels"},
		{name: "a leaf under two spines",
			labels:  map[string]map[string]string{"n1": {leaf: "l1", spine: "s1"}, "n2": {leaf: "l1", spine: "s2"}},
			wantErr: `value "l1" sits under both`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lt, err := treeFromLabels(tc.labels, tc.given)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, d := range lt.tree.Domains {
				members := slices.Concat(d.Children, d.Nodes)
				slices.Sort(members)
				got[name] = strings.TrimSpace(strings.Join(append([]string{string(rune('0'+d.Tier)) + ":"}, members...), " "))
			}
			if diff := cmp.Diff(tc.domains, got); diff != "" {
				t.Errorf("domains (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.keyTier, lt.keyTier); diff != "" {
				t.Errorf("key tiers (-want +got):\n%s", diff)
			}
			if want := slices.Sorted(maps.Values(tc.keyTier)); !slices.Equal(lt.tiers(), want) {
				t.Errorf("tiers %v; want %v", lt.tiers(), want)
			}
		})
	}
}
