package topology

import (
	"maps"
	"slices"
)

// domainCandidate is one name chosen for some of a domain's switches, with who gave it for any of them.
type domainCandidate struct {
	// raw is the smallest spelling chosen.
	raw string
	// fabricWide is set when a fabric-wide source gave it.
	fabricWide bool
	// votes are the nodes' votes of each switch that chose it.
	votes [][]int32
	// nodes counts the nodes whose reports gave it, each counted once however many switches it named.
	nodes int
}

// domainVote weighs the names the switch votes chose for a domain's switches (nameSwitches) as one vote over
// the domain, each node counted once: a name a fabric-wide source gave outranks every name from reports only;
// without one, a name from reports is allowed only when more than half of the nodes whose reports reach any of
// the domain's switches gave it. So a switch only one node reports (a phantom switch a node claims beside its
// real leaf) names the domain only when that node is most of it. It returns the smallest allowed name ("" when
// none), and, sorted, the names rejected: those the switch votes rejected, and the chosen names this vote turned
// down (a report's beside a fabric-wide name; one with less support than the best-supported name).
func (g *switchGraph) domainVote(switches []string) (string, []string) {
	byName := map[string]*domainCandidate{}
	var reporters [][]int32
	rejected := map[string]bool{}
	for _, id := range switches {
		v := g.votes[id]
		if v == nil {
			continue
		}
		reporters = append(reporters, v.reporters)
		for _, r := range v.rejected {
			rejected[r] = true
		}
		if v.chosen == nil {
			continue
		}
		c := byName[v.chosen.safe]
		if c == nil {
			c = &domainCandidate{raw: v.chosen.raw}
			byName[v.chosen.safe] = c
		}
		c.raw = min(c.raw, v.chosen.raw)
		c.fabricWide = c.fabricWide || len(v.chosen.sources) > 0
		c.votes = append(c.votes, v.chosen.nodes)
	}
	reporting := g.distinct(reporters)
	for _, c := range byName {
		c.nodes = g.distinct(c.votes)
	}
	fabricWide := false
	top := 0
	for _, c := range byName {
		fabricWide = fabricWide || c.fabricWide
		top = max(top, c.nodes)
	}
	allowed := func(c *domainCandidate) bool {
		if fabricWide {
			return c.fabricWide
		}
		return 2*c.nodes > reporting
	}
	best := ""
	for _, c := range byName {
		if allowed(c) && (best == "" || c.raw < best) {
			best = c.raw
		}
	}
	for safe, c := range byName {
		switch {
		case allowed(c):
			delete(rejected, safe) // a name another switch's vote turned down, chosen here
		case best != "" || c.nodes < top:
			rejected[safe] = true // outvoted; names tied at the top of a vote nobody won are not
		}
	}
	if len(rejected) == 0 {
		return best, nil
	}
	return best, slices.Sorted(maps.Keys(rejected))
}

// distinct counts the distinct places in lists, each list holding a place once. One list is counted by its
// length; several through g.seen, a mark per place that a new round (g.round) clears at once, so that the
// domains' votes allocate and hash nothing.
func (g *switchGraph) distinct(lists [][]int32) int {
	switch len(lists) {
	case 0:
		return 0
	case 1:
		return len(lists[0])
	}
	g.round++
	n := 0
	for _, l := range lists {
		for _, i := range l {
			if g.seen[i] != g.round {
				g.seen[i] = g.round
				n++
			}
		}
	}
	return n
}
