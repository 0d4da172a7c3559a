package topology

import (
	"fmt"
	"slices"
	"strings"
)

// foreignNVLinkClaim is a node that claims an NVLink domain most of whose nodes sit in another leaf domain.
type foreignNVLinkClaim struct {
	// node is the node that claims it; domain the NVLink domain.
	node, domain string
	// home is the leaf domain that holds most of the NVLink domain's nodes; homeNodes are those nodes.
	home      *Domain
	homeNodes []string
	// total is the number of nodes that claim the NVLink domain.
	total int
}

// minNVLinkPart is the fewest nodes of one NVLink domain behind one leaf that count as a genuine part of a
// domain split across leaves (a rack of a multi-rack NVL72: 9 + 9, or 7 + 5). A smaller part beside a leaf
// that holds more than half the domain is a foreign claim: a node cabled, or configured, by mistake.
const minNVLinkPart = 3

// dropForeignNVLinkClaims takes out of leaves every node of a part of an NVLink domain (its nodes behind one
// leaf) smaller than minNVLinkPart when more than half the domain's nodes sit behind another leaf: one or two
// nodes that claim the domain of a rack behind another leaf contradict the majority of their domain. Those
// nodes are rejected one by one and the other nodes keep their place, so that one node with a wrong (or
// forged) NVLink domain costs neither leaf its accelerator domains. Every other split (parts of at least
// minNVLinkPart nodes, or no majority) is a domain that spans leaves, which addAcceleratorDomains models. It
// returns the leaves left (a leaf whose every node was taken out is dropped) and the claims, by node; the
// caller reports them once the leaves have names (see problem).
func dropForeignNVLinkClaims(leaves []*Domain, byNode map[string]NodeEvidence) ([]*Domain, []foreignNVLinkClaim) {
	type split struct {
		byLeaf map[*Domain][]string
		total  int
	}
	splits := map[string]*split{}
	for _, l := range leaves {
		for _, n := range l.Nodes {
			nv := byNode[n].NVLinkDomain
			if nv == "" {
				continue
			}
			s := splits[nv]
			if s == nil {
				s = &split{byLeaf: map[*Domain][]string{}}
				splits[nv] = s
			}
			s.byLeaf[l] = append(s.byLeaf[l], n)
			s.total++
		}
	}
	var claims []foreignNVLinkClaim
	for nv, s := range splits {
		var home *Domain
		for l, nodes := range s.byLeaf {
			if 2*len(nodes) > s.total {
				home = l
			}
		}
		if home == nil {
			continue
		}
		for l, nodes := range s.byLeaf {
			if l == home || len(nodes) >= minNVLinkPart {
				continue
			}
			for _, n := range nodes {
				claims = append(claims, foreignNVLinkClaim{node: n, domain: nv, home: home, homeNodes: s.byLeaf[home], total: s.total})
			}
		}
	}
	if len(claims) == 0 {
		return leaves, nil
	}
	slices.SortFunc(claims, func(a, b foreignNVLinkClaim) int { return strings.Compare(a.node, b.node) })
	rejected := map[string]bool{}
	for _, c := range claims {
		rejected[c.node] = true
	}
	var kept []*Domain
	for _, l := range leaves {
		l.Nodes = slices.DeleteFunc(l.Nodes, func(n string) bool { return rejected[n] })
		if len(l.Nodes) > 0 {
			l.Source = nodesSource(l.Nodes, byNode)
			kept = append(kept, l)
		}
	}
	return kept, claims
}

// problem says why c's node was left out; c.home must have its name.
func (c foreignNVLinkClaim) problem(byNode map[string]NodeEvidence) Problem {
	return Problem{Node: c.node, Source: byNode[c.node].Source, Reason: fmt.Sprintf(
		"claims NVLink domain %q, but %d of the %d nodes that claim it sit in leaf domain %q (%s) and this node does not; the claim contradicts most of its domain, so the node is left out of the tree until its evidence is fixed, and the other nodes keep their accelerator domains",
		c.domain, len(c.homeNodes), c.total, c.home.Name, nameList(c.homeNodes))}
}
