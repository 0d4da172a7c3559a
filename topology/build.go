package topology

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// BuildOptions tunes tree inference.
type BuildOptions struct {
	// RootName names the single top domain; "fabric" when empty.
	RootName string
	// AcceleratorDomains puts the nodes that share an NVLink domain into an accelerator domain (TierName
	// "accelerator") below the lowest switch domain holding them all, and moves the switch tiers up; Build says
	// how. Off, the tree has no accelerator domains and is built exactly as before the option.
	AcceleratorDomains bool
}

// Build infers the tree from node evidence and switch-to-switch links.
//
// Nodes that share a compute switch land in one leaf domain (tier 1); because the grouping is transitive,
// rail-optimised leaves that share hosts form one domain, and a host with some links down still joins it.
// Storage links and switches reached only by storage links are ignored. Above the leaves, each switch gets
// the tier of its distance from the hosts; domains whose switches reach a common switch of the next tier are
// joined under one domain of that tier (spine, core, …), as many tiers as the fabric has. A leaf with no
// uplink of its own, cabled below a leaf that has one (a blade or top-of-rack switch below an aggregation
// switch with hosts), hangs with the upper leaf below a tier-2 domain of the upper switch, named with the
// tier's group suffix ("-spines"): their hosts meet at that switch, not at the top. Domains at the top
// that stand above one domain only are dropped; those left hang below one root, and when a single domain
// above the leaves is left, it is the root. Nodes with no compute
// link are listed in Unplaced. Evidence that cannot be used is returned as Problems and left out. The result
// is a valid tree and does not depend on the order of the input (but for which of two pieces of evidence
// for one node is kept: the first).
//
// Domains are named after their switches, and switches by the names the evidence gives them, weighed in
// this order: rejected evidence names nothing; nothing takes the root's name; a fabric-wide source's name
// (evidence not SelfReported, switch links, SwitchNames) outranks a node report's; a report's name needs
// most of the reports of its switch; one name goes to one switch only, the better supported, and the other is
// named after its identifier. A domain of several switches is named after the smallest of its switches' names
// that its own vote allows (domainVote: a fabric-wide name before any report's; a report's only with most of
// the domain's reporting nodes, each counted once). Every name not used is returned as a Problem, and the
// names the vote rejected are recorded in Domain.Vote for KeepNames.
//
// With opts.AcceleratorDomains, NVLink domains become accelerator domains once the switch tiers are built
// (see addAcceleratorDomains): each sits below its leaf, and a domain that spans leaves (a multi-rack NVL72,
// or nodes of another leaf claiming it) is one accelerator domain per leaf, each recording the whole NVLink
// domain, so that every node keeps its leaf, spine and core whatever its NVLink domain; with sub-domains
// reported (racks of one NVLink domain, NodeEvidence.NVLinkSubDomain) each holds one sub-domain per rack. A
// node's NVLink evidence places that node only: NVLink domains are compared in their canonical form
// (CanonicalNVLinkID), the part of the leaf that holds most of a domain keeps its name, and a node without an
// NVLink domain beside nodes that have one stands alone in an accelerator domain named after it. The switch
// tiers count up past the accelerator tiers (leaf 2 or 3, …); a tree without accelerator domains keeps its
// tiers. Nodes with an NVLink domain but no compute link stay Unplaced.
func Build(in Input, opts BuildOptions) (*Tree, []Problem) {
	rootName := opts.RootName
	if rootName == "" {
		rootName = TierNameRoot
	}
	byNode, problems := indexNodes(in.Nodes)
	ordered := byNode.list
	g, edgeProblems := newSwitchGraph(byNode, in.SwitchLinks)
	problems = append(problems, edgeProblems...)

	t := NewTree()
	leaves, unplaced, strays := g.groupLeaves(ordered)
	t.Unplaced = unplaced
	layer, cascadeProblems := g.layers(leaves)
	nameProblems := g.nameSwitches(in, ordered, strays, layer, SafeName(rootName))
	g.addDomains(t, leaves, rootName)
	problems = append(problems, g.strayProblems(strays, byNode)...)
	problems = append(problems, cascadeProblems()...)
	problems = append(problems, nameProblems...)
	if len(leaves) == 0 {
		return t, problems
	}
	top := collapseTop(t, g.stackTiers(t, leaves, layer, rootName))
	addRoot(t, top, rootName)
	if opts.AcceleratorDomains {
		problems = append(problems, addAcceleratorDomains(t, leaves, byNode)...)
	}
	return t, problems
}

// nodeIndex is the evidence Build keeps, one per node, sorted by node. The passes over every node read the
// list, in an order whose neighbours share switches, rather than a map of every node in no order; a node's
// evidence is found by binary search.
type nodeIndex struct {
	list []NodeEvidence
	// storage holds the switches some node's storage link reaches; nil when no link is a storage link.
	storage map[string]bool
}

// source is the source of node n's evidence; "" when it has none.
func (x nodeIndex) source(n string) string {
	if i, ok := slices.BinarySearchFunc(x.list, n, func(e NodeEvidence, n string) int { return strings.Compare(e.Node, n) }); ok {
		return x.list[i].Source
	}
	return ""
}

// indexNodes keeps the first usable evidence of each node and reports the rest, in the order of evidence. The
// evidence is sorted by node and then place, so that a node's first evidence leads its run: no map of every
// node, which at 50,000 nodes no longer fits the caches.
func indexNodes(evidence []NodeEvidence) (nodeIndex, []Problem) {
	refused := map[int32]string{} // by place: why Check refused the evidence
	var withStorage []int32       // places of usable evidence with a storage link
	usable := make([]int32, 0, len(evidence))
	for i, e := range evidence {
		if reason := e.Check(); reason != "" {
			refused[int32(i)] = reason
			continue
		}
		usable = append(usable, int32(i))
		if slices.ContainsFunc(e.Links, func(l SwitchLink) bool { return l.Storage }) {
			withStorage = append(withStorage, int32(i)) // noted while Check brought the links into the cache
		}
	}
	slices.SortFunc(usable, func(a, b int32) int {
		return cmp.Or(strings.Compare(evidence[a].Node, evidence[b].Node), cmp.Compare(a, b))
	})
	x := nodeIndex{list: make([]NodeEvidence, 0, len(usable))}
	dup := map[int32]int32{} // by place: the place of the evidence kept instead
	lead := int32(-1)
	for _, i := range usable {
		if lead >= 0 && evidence[lead].Node == evidence[i].Node {
			dup[i] = lead
			continue
		}
		lead = i
		x.list = append(x.list, evidence[i])
	}
	for _, i := range withStorage {
		if _, gone := dup[i]; gone {
			continue
		}
		for _, l := range evidence[i].Links {
			if l.Storage {
				if x.storage == nil {
					x.storage = map[string]bool{}
				}
				x.storage[l.SwitchID] = true
			}
		}
	}
	if len(refused) == 0 && len(dup) == 0 {
		return x, nil
	}
	var problems []Problem
	for i, e := range evidence {
		if reason, ok := refused[int32(i)]; ok {
			problems = append(problems, Problem{Node: e.Node, Source: e.Source, Reason: reason})
		} else if kept, ok := dup[int32(i)]; ok {
			problems = append(problems, Problem{Node: e.Node, Source: e.Source,
				Reason: "evidence given twice for the node; the one from source " + evidence[kept].Source + " is kept"})
		}
	}
	return x, problems
}

// collapseTop removes, from the top of each branch, domains that stand above a single domain only. They
// hold the same nodes as their child and come from switches that lead to no further host (a leaf whose hosts
// are all unknown is reached only through the spines, and so looks like a higher tier).
func collapseTop(t *Tree, top []*Domain) []*Domain {
	out := make([]*Domain, 0, len(top))
	for _, d := range top {
		for d.Tier >= 2 && len(d.Children) == 1 {
			child := t.Domains[d.Children[0]]
			delete(t.Domains, d.Name)
			child.Parent = ""
			d = child
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Domain) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// addRoot puts one root above the top domains. A single top domain above the leaves becomes the root itself,
// so that the root keeps its name whether or not a source knew the switches above the leaves.
func addRoot(t *Tree, top []*Domain, rootName string) {
	if len(top) == 1 && top[0].Tier >= 2 {
		d := top[0]
		delete(t.Domains, d.Name)
		d.Name = freeName(t, rootName)
		d.TierName = TierNameRoot
		for _, c := range d.Children {
			t.Domains[c].Parent = d.Name
		}
		_ = t.Add(d)
		return
	}
	root := &Domain{Name: freeName(t, rootName), TierName: TierNameRoot, Source: "inferred"}
	for _, d := range top {
		root.Tier = max(root.Tier, d.Tier+1)
		d.Parent = root.Name
		root.Children = append(root.Children, d.Name)
	}
	slices.Sort(root.Children)
	_ = t.Add(root)
}

// freeName returns SafeName(raw), or its hashed form when that is taken in t.
func freeName(t *Tree, raw string) string {
	if name := SafeName(raw); t.Domains[name] == nil {
		return name
	}
	return UniqueName(raw)
}

// TierName gives the human name of a switch tier: leaf, spine, core, then "tier-N".
func TierName(tier int) string {
	switch tier {
	case 1:
		return TierNameLeaf
	case 2:
		return TierNameSpine
	case 3:
		return TierNameCore
	}
	return fmt.Sprintf("tier-%d", tier)
}

// groupSuffix marks a domain that stands for several switches of one tier.
func groupSuffix(tier int) string {
	switch tier {
	case 1:
		return "-rails"
	case 2:
		return "-spines"
	case 3:
		return "-cores"
	}
	return fmt.Sprintf("-tier-%d", tier)
}

// domainName names a domain after its switches: the smallest of the names its switches' votes chose that the
// domain's own vote allows (domainVote; or, when none is allowed, the smallest identifier), with a group suffix
// when it stands for several switches or, above the leaves, for a leaf switch with cascaded leaves below it
// (whose own hosts' leaf has the plain name). A name that is taken, or that is the root's, falls back to a
// hashed name of all its switch identifiers, which is unique and still stable. It also returns the vote's
// rejected names for KeepNames (nil when none).
func (g *switchGraph) domainName(t *Tree, switches []string, tier int, rootName string) (string, *NameVote) {
	best, rejected := g.domainVote(switches)
	if best == "" {
		best = slices.Min(switches)
	}
	if len(switches) > 1 || tier >= 2 && g.cascaded[switches[0]] {
		best += groupSuffix(tier)
	}
	name := SafeName(best)
	if t.Domains[name] != nil || name == SafeName(rootName) {
		name = UniqueName(strings.Join(switches, ","))
	}
	if len(rejected) == 0 {
		return name, nil
	}
	return name, &NameVote{Rejected: rejected}
}
