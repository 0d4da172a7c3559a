package health_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
)

// pass is one pass as DetectLostSwitches sees it: the sources' evidence (node → its switches, one map per
// source) and the tree (domain → its nodes and switches; every domain below one root).
type pass struct {
	sources []map[string][]string
	domains map[string]domainOf
}

type domainOf struct {
	nodes, switches []string
}

func (p pass) inputs() []topology.Input {
	var out []topology.Input
	for _, src := range p.sources {
		var in topology.Input
		for n, sws := range src {
			e := topology.NodeEvidence{Node: n}
			for _, s := range sws {
				e.Links = append(e.Links, topology.SwitchLink{SwitchID: s, SwitchName: "name-" + s})
			}
			in.Nodes = append(in.Nodes, e)
		}
		out = append(out, in)
	}
	return out
}

func (p pass) tree() *topology.Tree {
	t := topology.NewTree()
	root := &topology.Domain{Name: "fabric", Tier: 2, TierName: topology.TierNameRoot}
	t.Domains["fabric"] = root
	for name, d := range p.domains {
		root.Children = append(root.Children, name)
		t.Domains[name] = &topology.Domain{Name: name, Tier: 1, TierName: topology.TierNameLeaf, Parent: "fabric", Nodes: d.nodes, Switches: d.switches}
	}
	return t
}

// TestDetectLostSwitches: a node the tree still places loses exactly the switches its own evidence named in
// the pass before that are gone from the whole tree: not every node of a domain that merged two leaves, not a
// node whose switch is still in the tree (cabled elsewhere), not a node re-cabled to a new switch, not a node the
// tree no longer places; a switch outside the tree (a storage switch) is never lost; nothing at the first pass or
// when no switch vanished. The same with the two passes' recalls sharing a table or not.
func TestDetectLostSwitches(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	rails := func(hosts ...string) map[string][]string {
		out := map[string][]string{}
		for _, h := range hosts {
			out[h] = []string{"r0", "r1", "r2"}
		}
		return out
	}
	unit := map[string]domainOf{"unit": {nodes: []string{"h1", "h2", "h3"}, switches: []string{"r0", "r1", "r2"}}}
	withoutR1 := map[string][]string{"h1": {"r0", "r2"}, "h2": {"r0", "r2"}, "h3": {"r0", "r2"}}
	unitWithoutR1 := map[string]domainOf{"unit": {nodes: []string{"h1", "h2", "h3"}, switches: []string{"r0", "r2"}}}
	lost := func(n string, ids ...string) health.LostSwitch {
		l := health.LostSwitch{Node: n, Since: now}
		for _, id := range ids {
			l.Switches = append(l.Switches, health.GoneSwitch{ID: id, Name: "name-" + id})
		}
		return l
	}
	for _, tc := range []struct {
		name      string
		prev, cur *pass // prev nil: the first pass
		want      []health.LostSwitch
	}{{
		name: "the first pass",
		cur:  &pass{sources: []map[string][]string{withoutR1}, domains: unitWithoutR1},
	}, {
		name: "a steady pass",
		prev: &pass{sources: []map[string][]string{rails("h1", "h2", "h3")}, domains: unit},
		cur:  &pass{sources: []map[string][]string{rails("h1", "h2", "h3")}, domains: unit},
	}, {
		name: "a rail leaf gone: every host of the unit lost it",
		prev: &pass{sources: []map[string][]string{rails("h1", "h2", "h3")}, domains: unit},
		cur:  &pass{sources: []map[string][]string{withoutR1}, domains: unitWithoutR1},
		want: []health.LostSwitch{lost("h1", "r1"), lost("h2", "r1"), lost("h3", "r1")},
	}, {
		name: "two switches gone, from two sources",
		prev: &pass{sources: []map[string][]string{{"h1": {"r0"}, "h2": {"r0"}}, {"h1": {"r1", "r2"}, "h2": {"r1", "r2"}}},
			domains: map[string]domainOf{"unit": {nodes: []string{"h1", "h2"}, switches: []string{"r0", "r1", "r2"}}}},
		cur: &pass{sources: []map[string][]string{{"h1": {"r0"}, "h2": {"r0"}}},
			domains: map[string]domainOf{"unit": {nodes: []string{"h1", "h2"}, switches: []string{"r0"}}}},
		want: []health.LostSwitch{lost("h1", "r1", "r2"), lost("h2", "r1", "r2")},
	}, {
		name: "a domain that merged two leaves: only the nodes cabled to the one gone",
		prev: &pass{sources: []map[string][]string{{"h1": {"a", "b"}, "h2": {"a", "b"}, "h3": {"a"}}},
			domains: map[string]domainOf{"ab": {nodes: []string{"h1", "h2", "h3"}, switches: []string{"a", "b"}}}},
		cur: &pass{sources: []map[string][]string{{"h1": {"a"}, "h2": {"a"}, "h3": {"a"}}},
			domains: map[string]domainOf{"a": {nodes: []string{"h1", "h2", "h3"}, switches: []string{"a"}}}},
		want: []health.LostSwitch{lost("h1", "b"), lost("h2", "b")},
	}, {
		name: "a switch still in the tree, the node cabled elsewhere: no loss",
		prev: &pass{sources: []map[string][]string{{"h1": {"a"}, "h2": {"b"}}},
			domains: map[string]domainOf{"a": {nodes: []string{"h1"}, switches: []string{"a"}}, "b": {nodes: []string{"h2"}, switches: []string{"b"}}}},
		cur: &pass{sources: []map[string][]string{{"h1": {"b"}, "h2": {"b"}}},
			domains: map[string]domainOf{"b": {nodes: []string{"h1", "h2"}, switches: []string{"b"}}}},
	}, {
		name: "re-cabled to a new switch as the old one left: no loss; its neighbour not re-cabled lost it",
		prev: &pass{sources: []map[string][]string{{"h1": {"r0", "old"}, "h2": {"r0", "old"}}},
			domains: map[string]domainOf{"unit": {nodes: []string{"h1", "h2"}, switches: []string{"old", "r0"}}}},
		cur: &pass{sources: []map[string][]string{{"h1": {"r0", "new"}, "h2": {"r0"}}},
			domains: map[string]domainOf{"unit": {nodes: []string{"h1", "h2"}, switches: []string{"new", "r0"}}}},
		want: []health.LostSwitch{lost("h2", "old")},
	}, {
		name: "a node no longer placed is not judged here",
		prev: &pass{sources: []map[string][]string{rails("h1", "h2", "h3")}, domains: unit},
		cur: &pass{sources: []map[string][]string{{"h1": {"r0", "r2"}, "h2": {"r0", "r2"}}},
			domains: map[string]domainOf{"unit": {nodes: []string{"h1", "h2"}, switches: []string{"r0", "r2"}}}},
		want: []health.LostSwitch{lost("h1", "r1"), lost("h2", "r1")},
	}, {
		name: "a switch the tree never had is never lost",
		prev: &pass{sources: []map[string][]string{{"h1": {"r0", "storage"}}},
			domains: map[string]domainOf{"unit": {nodes: []string{"h1"}, switches: []string{"gone-leaf", "r0"}}}},
		cur: &pass{sources: []map[string][]string{{"h1": {"r0"}}},
			domains: map[string]domainOf{"unit": {nodes: []string{"h1"}, switches: []string{"r0"}}}},
	}} {
		for _, shared := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/shared table %v", tc.name, shared), func(t *testing.T) {
				var prev *health.SwitchRecall
				if tc.prev != nil {
					prev = health.RecallSwitches(nil, tc.prev.inputs(), tc.prev.tree())
				}
				from := prev
				if !shared {
					from = nil
				}
				curTree := tc.cur.tree()
				cur := health.RecallSwitches(from, tc.cur.inputs(), curTree)
				got := health.DetectLostSwitches(prev, cur, health.NodeLeaves(curTree), now)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("DetectLostSwitches (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestSwitchRecallHas: a recall answers for its own tree's switches only; a nil one has none.
func TestSwitchRecallHas(t *testing.T) {
	p := pass{sources: []map[string][]string{{"h1": {"a", "x"}}}, domains: map[string]domainOf{"a": {nodes: []string{"h1"}, switches: []string{"a"}}}}
	r := health.RecallSwitches(nil, p.inputs(), p.tree())
	got := map[string]bool{"a": r.Has("a"), "x": r.Has("x"), "nil": (*health.SwitchRecall)(nil).Has("a")}
	if diff := cmp.Diff(map[string]bool{"a": true, "x": false, "nil": false}, got); diff != "" {
		t.Errorf("Has (-want +got):\n%s", diff)
	}
}

// TestAssessLostSwitches: a node that lost switches is a critical finding in its leaf domain naming them (by
// name and ID) and since when, and the node is degraded; a node already down stays down.
func TestAssessLostSwitches(t *testing.T) {
	since := time.Date(2026, 11, 28, 11, 4, 5, 0, time.FixedZone("CET", 3600))
	nodes := railUnit(nil)
	tree := treeOf(t, nodes, nil)
	leaf := health.NodeLeaves(tree)["h1"]
	for _, tc := range []struct {
		name  string
		lost  []health.LostSwitch
		uplk  []health.LostUplink
		wantF []health.Finding
		wantD map[string]string
	}{{
		name: "one switch",
		lost: []health.LostSwitch{{Node: "h1", Switches: []health.GoneSwitch{{ID: leafR1, Name: "su0-leaf-r1"}}, Since: since}},
		wantF: []health.Finding{{Kind: health.KindSwitchLost, Severity: health.SeverityCritical, Node: "h1", Domain: leaf, Switches: []string{leafR1},
			Message: "node h1 lost switch su0-leaf-r1 (" + leafR1 + "): gone from the fabric since 2026-11-28T10:04:05Z while the node stays placed; its links through it reach nothing"}},
		wantD: map[string]string{"h1": "degraded"},
	}, {
		name: "two switches, one without a name, a node not in the tree",
		lost: []health.LostSwitch{{Node: "elsewhere", Switches: []health.GoneSwitch{{ID: "guid:2"}, {ID: "guid:1", Name: "l1"}}, Since: since}},
		wantF: []health.Finding{{Kind: health.KindSwitchLost, Severity: health.SeverityCritical, Node: "elsewhere", Switches: []string{"guid:1", "guid:2"},
			Message: "node elsewhere lost 2 switches guid:2, l1 (guid:1): gone from the fabric since 2026-11-28T10:04:05Z while the node stays placed; its links through them reach nothing"}},
		wantD: map[string]string{"elsewhere": "degraded"},
	}, {
		name: "a node down stays down",
		lost: []health.LostSwitch{{Node: "h1", Switches: []health.GoneSwitch{{ID: leafR1}}, Since: since}},
		uplk: []health.LostUplink{{Node: "h1", Leaf: leaf, Since: since}},
		wantF: []health.Finding{
			{Kind: health.KindSwitchLost, Severity: health.SeverityCritical, Node: "h1", Domain: leaf, Switches: []string{leafR1},
				Message: "node h1 lost switch " + leafR1 + ": gone from the fabric since 2026-11-28T10:04:05Z while the node stays placed; its links through it reach nothing"},
			{Kind: health.KindUplinkLost, Severity: health.SeverityCritical, Node: "h1", Domain: leaf,
				Message: "node h1 lost its leaf " + leaf + ": no uplink evidence since 2026-11-28T10:04:05Z"},
		},
		wantD: map[string]string{"h1": "down"},
	}, {
		name: "an entry without switches or node is ignored",
		lost: []health.LostSwitch{{Node: "h1", Since: since}, {Switches: []health.GoneSwitch{{ID: "x"}}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := health.Assess(health.Input{Tree: tree, Nodes: nodes, LostSwitches: tc.lost, LostUplinks: tc.uplk})
			if diff := cmp.Diff(health.Assessment{Findings: tc.wantF, DegradedNodes: tc.wantD}, got); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}
