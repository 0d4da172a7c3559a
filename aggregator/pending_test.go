package aggregator

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
)

// hn is a HyperNode of tier tier whose members are "node:N", "hn:N", "regex:RE" or "label:K=V".
func hn(name string, tier int, members ...string) topologyv1alpha1.HyperNode {
	h := topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: hypernodegen.OwnedSelector()},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: tier}}
	for _, m := range members {
		kind, value, ok := strings.Cut(m, ":")
		if !ok {
			panic("bad member " + m)
		}
		spec := topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode}
		switch kind {
		case "node":
			spec.Selector.ExactMatch = &topologyv1alpha1.ExactMatch{Name: value}
		case "hn":
			spec.Type = topologyv1alpha1.MemberTypeHyperNode
			spec.Selector.ExactMatch = &topologyv1alpha1.ExactMatch{Name: value}
		case "regex":
			spec.Selector.RegexMatch = &topologyv1alpha1.RegexMatch{Pattern: value}
		case "label":
			k, v, _ := strings.Cut(value, "=")
			spec.Selector.LabelMatch = &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
		default:
			panic("bad member " + m)
		}
		h.Spec.Members = append(h.Spec.Members, spec)
	}
	return h
}

// described is a HyperNode as the tests compare it: "tier N" then its members as hn writes them.
func described(hns []topologyv1alpha1.HyperNode) map[string][]string {
	out := map[string][]string{}
	for _, h := range hns {
		d := []string{fmt.Sprintf("tier %d", h.Spec.Tier)}
		for _, m := range h.Spec.Members {
			s := m.Selector
			switch {
			case m.Type == topologyv1alpha1.MemberTypeHyperNode:
				d = append(d, "hn:"+s.ExactMatch.Name)
			case s.ExactMatch != nil:
				d = append(d, "node:"+s.ExactMatch.Name)
			case s.RegexMatch != nil:
				d = append(d, "regex:"+s.RegexMatch.Pattern)
			case s.LabelMatch != nil:
				for k, v := range s.LabelMatch.MatchLabels {
					d = append(d, "label:"+k+"="+v)
				}
			}
		}
		out[h.Name] = d
	}
	return out
}

// rootsOf returns the HyperNodes no other one lists as a member, sorted: a valid set has one.
func rootsOf(hns []topologyv1alpha1.HyperNode) []string {
	child := map[string]bool{}
	for _, h := range hns {
		for _, m := range h.Spec.Members {
			if c := hyperNodeMember(m); c != "" {
				child[c] = true
			}
		}
	}
	var roots []string
	for _, h := range hns {
		if !child[h.Name] {
			roots = append(roots, h.Name)
		}
	}
	slices.Sort(roots)
	return roots
}

// TestAnchorPending: a HyperNode absent from the tree waits for its grace period below the tree, never as a
// second root: below its parent when the tree has it (which lists it again, where it did), or the nearest
// HyperNode of the tree of a higher tier above it, or its kept pending parent; holding only what the tree has
// not placed elsewhere. One with no HyperNode of the tree above it is unanchored (deleted at once, through the
// deletion guard); with no tree at all, every pending HyperNode stays as it is.
func TestAnchorPending(t *testing.T) {
	for _, tc := range []struct {
		name          string
		desired       []topologyv1alpha1.HyperNode
		existing      []topologyv1alpha1.HyperNode
		placed        []string
		nodes         []string
		going         []string
		want          map[string][]string // the desired and kept HyperNodes, described
		wantKept      []string
		wantUnanchor  []string
		wantNodeCount map[string]int64 // of kept HyperNodes
	}{{
		name:     "a leaf whose last node lost its uplinks stays below the root, holding it",
		desired:  []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:sw-02"), hn("sw-02", 1, "node:n3")},
		existing: []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:sw-01", "hn:sw-02"), hn("sw-01", 1, "node:n1"), hn("sw-02", 1, "node:n3")},
		placed:   []string{"n3"},
		want: map[string][]string{
			"fabric": {"tier 2", "hn:sw-01", "hn:sw-02"}, "sw-01": {"tier 1", "node:n1"}, "sw-02": {"tier 1", "node:n3"},
		},
		wantKept:      []string{"sw-01"},
		wantNodeCount: map[string]int64{"sw-01": 1},
	}, {
		name:     "a node placed elsewhere leaves the pending leaf, which stays empty below the root",
		desired:  []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:sw-01"), hn("sw-01", 1, "node:n1", "node:n3")},
		existing: []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:sw-01", "hn:sw-02"), hn("sw-01", 1, "node:n1"), hn("sw-02", 1, "node:n3")},
		placed:   []string{"n1", "n3"},
		want: map[string][]string{
			"fabric": {"tier 2", "hn:sw-01", "hn:sw-02"}, "sw-01": {"tier 1", "node:n1", "node:n3"}, "sw-02": {"tier 1"},
		},
		wantKept:      []string{"sw-02"},
		wantNodeCount: map[string]int64{"sw-02": 0},
	}, {
		name: "a spine that stood above two leaves, one of them gone: the spine goes at once, its lost leaf waits below the root",
		desired: []topologyv1alpha1.HyperNode{
			hn("fabric", 2, "hn:leaf-b"), hn("leaf-b", 1, "node:n2"),
		},
		existing: []topologyv1alpha1.HyperNode{
			hn("fabric", 3, "hn:spine"), hn("spine", 2, "hn:leaf-a", "hn:leaf-b"), hn("leaf-a", 1, "node:n1"), hn("leaf-b", 1, "node:n2"),
		},
		placed: []string{"n2"},
		want: map[string][]string{
			"fabric": {"tier 2", "hn:leaf-a", "hn:leaf-b"}, "leaf-a": {"tier 1", "node:n1"}, "leaf-b": {"tier 1", "node:n2"},
		},
		wantKept:      []string{"leaf-a"},
		wantUnanchor:  []string{"spine"},
		wantNodeCount: map[string]int64{"leaf-a": 1},
	}, {
		name: "a pending spine still below the root keeps its pending leaves, not the one the tree placed",
		desired: []topologyv1alpha1.HyperNode{
			hn("fabric", 3, "hn:spine-2"), hn("spine-2", 2, "hn:leaf-b", "hn:leaf-c"), hn("leaf-b", 1, "node:n2"), hn("leaf-c", 1, "node:n3"),
		},
		existing: []topologyv1alpha1.HyperNode{
			hn("fabric", 3, "hn:spine-1", "hn:spine-2"), hn("spine-1", 2, "hn:leaf-a", "hn:leaf-b"), hn("spine-2", 2, "hn:leaf-c"),
			hn("leaf-a", 1, "node:n1"), hn("leaf-b", 1, "node:n2"), hn("leaf-c", 1, "node:n3"),
		},
		placed: []string{"n2", "n3"},
		want: map[string][]string{
			"fabric": {"tier 3", "hn:spine-1", "hn:spine-2"}, "spine-1": {"tier 2", "hn:leaf-a"}, "spine-2": {"tier 2", "hn:leaf-b", "hn:leaf-c"},
			"leaf-a": {"tier 1", "node:n1"}, "leaf-b": {"tier 1", "node:n2"}, "leaf-c": {"tier 1", "node:n3"},
		},
		wantKept:      []string{"leaf-a", "spine-1"},
		wantNodeCount: map[string]int64{"leaf-a": 1, "spine-1": 7},
	}, {
		name: "a pending leaf below a spine deleted this pass waits below the root",
		desired: []topologyv1alpha1.HyperNode{
			hn("fabric", 3, "hn:spine-2"), hn("spine-2", 2, "hn:leaf-c"), hn("leaf-c", 1, "node:n3"),
		},
		existing: []topologyv1alpha1.HyperNode{
			hn("fabric", 3, "hn:spine-1", "hn:spine-2"), hn("spine-1", 2, "hn:leaf-a"), hn("spine-2", 2, "hn:leaf-c"),
			hn("leaf-a", 1, "node:n1"), hn("leaf-c", 1, "node:n3"),
		},
		placed: []string{"n3"},
		going:  []string{"spine-1"},
		want: map[string][]string{
			"fabric": {"tier 3", "hn:leaf-a", "hn:spine-2"}, "spine-2": {"tier 2", "hn:leaf-c"},
			"leaf-a": {"tier 1", "node:n1"}, "leaf-c": {"tier 1", "node:n3"},
		},
		wantKept:      []string{"leaf-a"},
		wantNodeCount: map[string]int64{"leaf-a": 1},
	}, {
		name:         "an old root beside the tree's has nothing above it: it and its leaf are unanchored",
		desired:      []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:leaf-b"), hn("leaf-b", 1, "node:n2")},
		existing:     []topologyv1alpha1.HyperNode{hn("old-root", 2, "hn:leaf-a"), hn("leaf-a", 1, "node:n1")},
		placed:       []string{"n2"},
		want:         map[string][]string{"fabric": {"tier 2", "hn:leaf-b"}, "leaf-b": {"tier 1", "node:n2"}},
		wantUnanchor: []string{"leaf-a", "old-root"},
	}, {
		name:     "no tree at all: every pending HyperNode stays as it is",
		existing: []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:leaf-a"), hn("leaf-a", 1, "node:n1", "node:n2")},
		want:     map[string][]string{"fabric": {"tier 2", "hn:leaf-a"}, "leaf-a": {"tier 1", "node:n1", "node:n2"}},
		wantKept: []string{"fabric", "leaf-a"}, wantNodeCount: map[string]int64{"fabric": 7, "leaf-a": 2},
	}, {
		name:     "a regular expression becomes the names it still selects that the tree does not place; a label selector stays",
		desired:  []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:leaf-c"), hn("leaf-c", 1, "node:n2")},
		existing: []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:leaf-a", "hn:leaf-b"), hn("leaf-a", 1, "regex:^(?:n1|n2|n9)$"), hn("leaf-b", 1, "label:tier-0=leaf-b")},
		placed:   []string{"n2"},
		nodes:    []string{"n1", "n2", "n3"},
		want: map[string][]string{
			"fabric": {"tier 2", "hn:leaf-a", "hn:leaf-b", "hn:leaf-c"}, "leaf-c": {"tier 1", "node:n2"},
			"leaf-a": {"tier 1", "node:n1"}, "leaf-b": {"tier 1", "label:tier-0=leaf-b"},
		},
		wantKept:      []string{"leaf-a", "leaf-b"},
		wantNodeCount: map[string]int64{"leaf-a": 1, "leaf-b": 7},
	}, {
		name:         "a pending HyperNode whose parent in the tree is of its own tier or lower is unanchored",
		desired:      []topologyv1alpha1.HyperNode{hn("fabric", 1, "node:n2")},
		existing:     []topologyv1alpha1.HyperNode{hn("fabric", 2, "hn:leaf-a"), hn("leaf-a", 1, "node:n1")},
		placed:       []string{"n2"},
		want:         map[string][]string{"fabric": {"tier 1", "node:n2"}},
		wantUnanchor: []string{"leaf-a"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.existing {
				tc.existing[i].Status.NodeCount = 7
			}
			placed := map[string]bool{}
			for _, n := range tc.placed {
				placed[n] = true
			}
			going := map[string]bool{}
			for _, n := range tc.going {
				going[n] = true
			}
			plan := anchorPending(tc.desired, tc.existing, placed, tc.nodes, going)
			all := append(slices.Clone(plan.desired), plan.kept...)
			if diff := cmp.Diff(tc.want, described(all)); diff != "" {
				t.Errorf("HyperNodes (-want +got):\n%s", diff)
			}
			if len(all) > 0 {
				if roots := rootsOf(all); len(roots) != 1 {
					t.Errorf("roots %v, want one", roots)
				}
			}
			kept, counts := []string{}, map[string]int64{}
			for _, k := range plan.kept {
				kept = append(kept, k.Name)
				counts[k.Name] = k.Status.NodeCount
				if !hasAll(k.Labels, hypernodegen.OwnedSelector()) {
					t.Errorf("kept %s lost fabricmap's label: %v", k.Name, k.Labels)
				}
			}
			if diff := cmp.Diff(append([]string{}, tc.wantKept...), kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if tc.wantNodeCount == nil {
				tc.wantNodeCount = map[string]int64{}
			}
			if diff := cmp.Diff(tc.wantNodeCount, counts); diff != "" {
				t.Errorf("node counts of the kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnanchor, plan.unanchored); diff != "" {
				t.Errorf("unanchored (-want +got):\n%s", diff)
			}
			if got := slices.Sorted(maps.Keys(described(plan.desired))); len(got) != len(tc.desired) {
				t.Errorf("desired HyperNodes %v, want the tree's %d", got, len(tc.desired))
			}
		})
	}
}
