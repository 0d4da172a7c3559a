package topology

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBuildCascadesAtAnyDepth: a leaf switch whose hosts meet a lower leaf's hosts at it nests that leaf under
// a domain of its own, at any depth, beside ordinary leaves under the same spine; shapes that are not a tree
// are said.
func TestBuildCascadesAtAnyDepth(t *testing.T) {
	tests := []struct {
		name      string
		nodes     []NodeEvidence
		links     []SwitchEdge
		want      []string
		wantProbs []string
	}{{
		name:  "a blade below a leaf with hosts, beside an ordinary leaf under the same spine",
		nodes: []NodeEvidence{host("a1", "agg"), host("a2", "agg"), host("b1", "blade"), host("b2", "blade"), host("c1", "leaf"), host("c2", "leaf")},
		links: join(cables("spine", "agg", "leaf"), cables("agg", "blade")),
		want:  []string{"agg(1)a1,a2", "agg-spines(2)agg,blade", "blade(1)b1,b2", "fabric(3)agg-spines,leaf", "leaf(1)c1,c2"},
	}, {
		name: "two levels of cascade: the lower blade nests under the upper blade, which nests under the leaf; the ordinary leaf stays out",
		nodes: []NodeEvidence{host("a1", "agg"), host("b1", "blade-1"), host("b2", "blade-1"), host("d1", "blade-2"), host("d2", "blade-2"),
			host("c1", "leaf"), host("c2", "leaf")},
		links: join(cables("spine", "agg", "leaf"), cables("agg", "blade-1"), cables("blade-1", "blade-2")),
		want: []string{"agg(1)a1", "agg-cores(3)agg,blade-1-spines", "blade-1(1)b1,b2", "blade-1-spines(2)blade-1,blade-2",
			"blade-2(1)d1,d2", "fabric(4)agg-cores,leaf", "leaf(1)c1,c2"},
	}, {
		name:  "a top switch with hosts and blades below it, no spine: the blades nest under it",
		nodes: []NodeEvidence{host("t1", "top"), host("b1", "blade-1"), host("d1", "blade-2")},
		links: cables("top", "blade-1", "blade-2"),
		want:  []string{"blade-1(1)b1", "blade-2(1)d1", "fabric(2)blade-1,blade-2,top", "top(1)t1"},
	}, {
		name:      "a blade cabled below two leaves: nested below the first, and said",
		nodes:     []NodeEvidence{host("a1", "agg-1"), host("e1", "agg-2"), host("b1", "blade")},
		links:     join(cables("spine", "agg-1", "agg-2"), cables("blade", "agg-1", "agg-2")),
		want:      []string{"agg-1(1)a1", "agg-1-spines(2)agg-1,blade", "agg-2(1)e1", "blade(1)b1", "fabric(3)agg-1-spines,agg-2"},
		wantProbs: []string{"leaf blade (blade) is cabled below several leaves (agg-1 (agg-1), agg-2 (agg-2)): the cascade is not a tree; it is nested below agg-1 (agg-1)"},
	}, {
		name:      "three leaves in a ring, no uplink, none cabled to more than the others: nothing nested, and said",
		nodes:     []NodeEvidence{host("a1", "ring-a"), host("b1", "ring-b"), host("c1", "ring-c")},
		links:     join(cables("ring-a", "ring-b", "ring-c"), cables("ring-b", "ring-c")),
		want:      []string{"fabric(2)ring-a,ring-b,ring-c", "ring-a(1)a1", "ring-b(1)b1", "ring-c(1)c1"},
		wantProbs: []string{"leaves ring-a (ring-a), ring-b (ring-b), ring-c (ring-c) are cabled to each other, none has an uplink"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, probs := Build(Input{Nodes: tc.nodes, SwitchLinks: tc.links}, BuildOptions{})
			if err := tree.Validate(); err != nil {
				t.Fatalf("invalid tree: %v", err)
			}
			if diff := cmp.Diff(tc.want, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			var got []string
			for _, p := range probs {
				got = append(got, p.String())
			}
			if len(got) != len(tc.wantProbs) {
				t.Fatalf("problems %q, want %d", got, len(tc.wantProbs))
			}
			for i, w := range tc.wantProbs {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q, want it to contain %q", got[i], w)
				}
			}
		})
	}
}
