package treeread

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/hypernodegen"
)

// TestReadLabelTree reads trees from fabricmap's node labels with each option and compares every domain's tier
// name, tier and members, the key tiers and the domains' source, or the error.
func TestReadLabelTree(t *testing.T) {
	keys := hypernodegen.DefaultLabelKeys()
	leaf, spine, nvl := keys.Tiers[0], keys.Tiers[1], keys.Accelerator
	twoSpines := map[string]map[string]string{
		"n1": {leaf: "l1", spine: "s1", nvl: "x"}, "n2": {leaf: "l1", spine: "s1", nvl: "x"}, "n3": {leaf: "l2", spine: "s2"}, "bare": {},
	}
	for _, tc := range []struct {
		name    string
		labels  map[string]map[string]string
		opts    LabelTreeOptions
		domains map[string]string // domain → "tier name tier: members"
		keyTier map[string]int
		wantErr string
	}{
		{name: "switch tiers only; a node without labels left out", labels: twoSpines,
			domains: map[string]string{"s1": "spine 2: l1", "s2": "spine 2: l2", "l1": "leaf 1: n1 n2", "l2": "leaf 1: n3"},
			keyTier: map[string]int{leaf: 1, spine: 2}},
		{name: "NVLink layer; a node without one is its own domain", labels: twoSpines, opts: LabelTreeOptions{Accelerator: true},
			domains: map[string]string{"s1": "spine 3: l1", "s2": "spine 3: l2", "l1": "leaf 2: x", "l2": "leaf 2: solo/n3",
				"x": "accelerator 1: n1 n2", "solo/n3": "accelerator 1: n3"},
			keyTier: map[string]int{nvl: 1, leaf: 2, spine: 3}},
		{name: "an NVLink domain across leaves: the switch tiers alone", opts: LabelTreeOptions{Accelerator: true},
			labels:  map[string]map[string]string{"n1": {leaf: "l1", spine: "s1", nvl: "x"}, "n2": {leaf: "l2", spine: "s1", nvl: "x"}},
			domains: map[string]string{"s1": "spine 2: l1 l2", "l1": "leaf 1: n1", "l2": "leaf 1: n2"},
			keyTier: map[string]int{leaf: 1, spine: 2}},
		{name: "one top domain is the root's when asked", opts: LabelTreeOptions{NameRoot: true, Source: "labels"},
			labels:  map[string]map[string]string{"n1": {leaf: "l1", spine: "s1"}, "n2": {leaf: "l2", spine: "s1"}},
			domains: map[string]string{"s1": "fabric 2: l1 l2", "l1": "leaf 1: n1", "l2": "leaf 1: n2"},
			keyTier: map[string]int{leaf: 1, spine: 2}},
		{name: "no fabricmap labels", labels: map[string]map[string]string{"n1": {"zone": "a"}}, wantErr: ErrNoTopologyLabels.Error()},
		{name: "a leaf under two spines", labels: map[string]map[string]string{"n1": {leaf: "l1", spine: "s1"}, "n2": {leaf: "l1", spine: "s2"}},
			wantErr: `value "l1" sits under both`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lt, err := ReadLabelTree(tc.labels, keys, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want one with %q", err, tc.wantErr)
				}
				if tc.wantErr == ErrNoTopologyLabels.Error() && !errors.Is(err, ErrNoTopologyLabels) {
					t.Errorf("error %v is not ErrNoTopologyLabels", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, d := range lt.Tree.Domains {
				members := slices.Sorted(slices.Values(slices.Concat(d.Children, d.Nodes)))
				got[name] = d.TierName + " " + strings.Join(append([]string{string(rune('0'+d.Tier)) + ":"}, members...), " ")
				if d.Source != tc.opts.Source {
					t.Errorf("domain %s: source %q, want %q", name, d.Source, tc.opts.Source)
				}
			}
			if diff := cmp.Diff(tc.domains, got); diff != "" {
				t.Errorf("domains (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.keyTier, lt.KeyTier); diff != "" {
				t.Errorf("key tiers (-want +got):\n%s", diff)
			}
		})
	}
}
