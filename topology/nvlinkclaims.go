package topology

import (
	"fmt"
	"slices"
)

// nvlinkClaims are the nodes that claim one NVLink domain, by the leaf they sit in (whether or not that leaf
// gets accelerator domains).
type nvlinkClaims struct {
	// domain is the NVLink domain, canonical.
	domain string
	// byLeaf holds the claimants behind each leaf, sorted; total counts them all.
	byLeaf map[*Domain][]string
	total  int
	// home is the leaf that holds most of the claimants, more than two thirds of them; nil when none does.
	home *Domain
}

// minNVLinkPart is the fewest nodes of one NVLink domain behind one leaf that look like a genuine part of a
// domain split across leaves (a rack of a multi-rack NVL72: 9 + 9, or 7 + 5). A smaller part beside the leaf that
// holds most of the domain (its home) is suspect (a node cabled, configured or reporting wrongly): its nodes are
// named in a Problem, and still placed in their part, which moves no other node.
const minNVLinkPart = 3

// whole reports whether every claimant sits behind one leaf.
func (c *nvlinkClaims) whole() bool { return len(c.byLeaf) == 1 }

// claimsByDomain gathers the claimants of every NVLink domain across the leaves of plans.
func claimsByDomain(plans []*leafPlan) map[string]*nvlinkClaims {
	out := map[string]*nvlinkClaims{}
	for _, p := range plans {
		for nv, nodes := range p.parts {
			c := out[nv]
			if c == nil {
				c = &nvlinkClaims{domain: nv, byLeaf: map[*Domain][]string{}}
				out[nv] = c
			}
			c.byLeaf[p.leaf] = nodes
			c.total += len(nodes)
		}
	}
	for _, c := range out {
		for l, nodes := range c.byLeaf {
			if 3*len(nodes) > 2*c.total {
				c.home = l
			}
		}
	}
	return out
}

// suspect returns a Problem for each node of c's part behind leaf l, named part, when that part has fewer than
// minNVLinkPart nodes and another leaf is the domain's home; nil otherwise.
func (c *nvlinkClaims) suspect(l *Domain, part string, byNode nodeIndex) []Problem {
	nodes := c.byLeaf[l]
	if c.home == nil || c.home == l || len(nodes) >= minNVLinkPart {
		return nil
	}
	homeNodes := c.byLeaf[c.home]
	out := make([]Problem, 0, len(nodes))
	for _, n := range slices.Sorted(slices.Values(nodes)) {
		out = append(out, Problem{Node: n, Source: byNode.source(n), Reason: fmt.Sprintf(
			"claims NVLink domain %q, but %d of the %d nodes that claim it sit in leaf domain %q (%s) and this node does not; the claim places this node only: it stands in accelerator domain %q, a part of that domain below its own leaf domain %q, and the nodes of %q keep their accelerator domain",
			c.domain, len(homeNodes), c.total, c.home.Name, nameList(homeNodes), part, l.Name, c.home.Name)})
	}
	return out
}
