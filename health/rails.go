package health

import (
	"fmt"

	"github.com/fabricmap/fabricmap/topology"
)

// judgeRails finds crossed rail cables. In a rail-optimised unit (a leaf domain of several switches), each leaf
// serves one rail: the rail most of the nodes cabled to it vote for (railVotes), when at least minVoters nodes
// do. A host whose rail-r HCA reaches a leaf that serves another rail is mis-cabled; the finding names the leaf
// it reaches and the leaf that serves r. HCAs of unknown rail (-1), storage ports and ports whose switch is not
// one of the unit's are not judged, and a leaf whose votes are split evenly between rails, or that fewer than
// minVoters nodes vote for, serves none, so a unit of unknown rails is not judged at all.
func judgeRails(r *report, idx *treeIndex, nodes []NodePorts) {
	units := map[*topology.Domain][]NodePorts{}
	for _, np := range nodes {
		if d := idx.leaf[np.Node]; d != nil && len(d.Switches) > 1 {
			units[d] = append(units[d], np)
		}
	}
	for unit, members := range units {
		judgeUnit(r, unit, members)
	}
}

// railPort reports whether p counts in its unit's rails: a compute port of known rail cabled to one of the
// unit's switches.
func railPort(unit *topology.Domain, p Port) bool {
	return !p.Storage && p.Rail >= 0 && p.Switch != "" && hasSwitch(unit, p.Switch)
}

func judgeUnit(r *report, unit *topology.Domain, members []NodePorts) {
	votes := railVotes(unit, members)
	serves := map[string]int{} // leaf → its rail, for leaves with one
	home := map[int]string{}   // rail → the leaf that serves it with most votes for it (then the smallest)
	for leaf, byRail := range votes {
		rail, ok := plurality(byRail)
		if !ok || byRail[rail] < minVoters {
			continue
		}
		serves[leaf] = rail
		cur, has := home[rail]
		if !has || byRail[rail] > votes[cur][rail] || byRail[rail] == votes[cur][rail] && leaf < cur {
			home[rail] = leaf
		}
	}
	for _, np := range members {
		for _, p := range np.Ports {
			if !railPort(unit, p) {
				continue
			}
			rail, ok := serves[p.Switch]
			if !ok || rail == p.Rail {
				continue
			}
			r.add(crossedRail(unit, np.Node, p, rail, home[p.Rail]))
			r.degrade(np.Node, nodeDegraded)
		}
	}
}

// railVotes counts, for each leaf of unit, the nodes that vote for each rail (leaf → rail → nodes). A node votes
// once per leaf, for the rail most of its HCAs cabled to that leaf have (railPort); a node whose HCAs there are
// split evenly between rails does not vote there. So a node that lists twenty HCAs of one rail on a leaf weighs
// as much as a node that lists one.
func railVotes(unit *topology.Domain, members []NodePorts) map[string]map[int]int {
	votes := map[string]map[int]int{}
	own := map[string]map[int]int{} // one node's HCAs: leaf → rail → HCAs (the maps are reused node after node)
	for _, np := range members {
		for _, byRail := range own {
			clear(byRail)
		}
		for _, p := range np.Ports {
			if !railPort(unit, p) {
				continue
			}
			if own[p.Switch] == nil {
				own[p.Switch] = map[int]int{}
			}
			own[p.Switch][p.Rail]++
		}
		for leaf, byRail := range own {
			rail, ok := plurality(byRail)
			if !ok {
				continue
			}
			if votes[leaf] == nil {
				votes[leaf] = map[int]int{}
			}
			votes[leaf][rail]++
		}
	}
	return votes
}

// crossedRail is the finding of node's port p, of rail p.Rail, cabled to the leaf p.Switch that serves rail
// served; expected is the leaf that serves p.Rail, empty when none does.
func crossedRail(unit *topology.Domain, node string, p Port, served int, expected string) Finding {
	f := Finding{
		Kind: KindMiscabledRail, Severity: SeverityCritical, Node: node, Domain: unit.Name, Port: portName(p),
		Switches: []string{p.Switch},
	}
	where := fmt.Sprintf("no leaf of %s serves rail %d", unit.Name, p.Rail)
	if expected != "" {
		f.Switches = append(f.Switches, expected)
		where = fmt.Sprintf("rail %d's leaf in %s is %s", p.Rail, unit.Name, expected)
	}
	f.Message = fmt.Sprintf("%s: the rail-%d HCA %s is cabled to leaf %s, which serves rail %d; %s",
		node, p.Rail, f.Port, p.Switch, served, where)
	return f
}

// plurality returns the key with the strictly largest count; false when there is none (empty, or a tie).
func plurality(counts map[int]int) (int, bool) {
	best, bestN, tied := 0, 0, false
	for k, n := range counts {
		switch {
		case n > bestN:
			best, bestN, tied = k, n, false
		case n == bestN:
			tied = true
		}
	}
	return best, bestN > 0 && !tied
}
