package topology

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A switch's name becomes its domain's name, and so a HyperNode's name and the node label values of every
// node below it: one piece of evidence must not rename a domain that others share. nameSwitches weighs the
// names given to each switch of the tree in this order:
//
//  1. evidence Build rejected names nothing: a node's evidence it refused, a node's links to switches of
//     another domain (strays), a switch link with an empty end;
//  2. no switch takes the root's name;
//  3. names from fabric-wide sources (evidence not SelfReported: a capture, UFM, an admin's labels, switch
//     links) outrank names from node reports; among them, the name the most sources give wins, then the
//     smallest;
//  4. without a fabric-wide name, a name from node reports is used only when most of the reports that reach
//     the switch give it (the reports of that switch, named or not);
//  5. one name for two switches: the switch whose name ranks higher keeps it (fabric-wide over reports, then
//     more sources or reports, then the smaller identifier); the other is named after its identifier;
//  6. a domain of several switches weighs their chosen names once more, over the whole domain (domainVote):
//     a fabric-wide name before any report's, a report's only with most of the domain's reporting nodes.
//
// Names are compared as SafeName makes them ("Leaf-A" and "leaf.a" are one name); of one name's spellings
// the smallest is used. Every name not used is returned as a Problem: of the first node whose report gave it,
// or, for a fabric-wide name, of its source. A node counts once for a switch, however many of its links reach it.
//
// A name not used is rejected (switchVote.rejected, then NameVote.Rejected) when the vote turned it down: a
// name of a lower rank (a report's beside a fabric-wide source's), one with less support than the
// best-supported name, the root's name, a name rule 5 gave another switch. Names tied at the top of a vote
// nobody won are not rejected: KeepNames may keep a previous name that is one of them (a tie keeps the current
// name), never a rejected one. These rules run on every build: a name is never decided by who reported first.

// nameVotes is one name given to one switch and who gave it.
type nameVotes struct {
	// raw is the smallest spelling of the name.
	raw string
	// safe is SafeName(raw), the name as domains get it.
	safe string
	// sources are the fabric-wide sources that gave it; nil until one does.
	sources map[string]bool
	// nodes are the nodes whose reports gave it, each once, as their places in evidence (sorted by node, so
	// the smaller place is the smaller name): a list of numbers, not a map of names, because Build keeps one
	// per name of every switch (hundreds of thousands of entries at 50,000 nodes).
	nodes []int32
	// evidence is the evidence the places are of.
	evidence []NodeEvidence
}

// addNode counts the report of the node at place i for the name. The links of one node are collected
// together, so a node that gave the name already is the last one added.
func (v *nameVotes) addNode(i int32) {
	if k := len(v.nodes); k == 0 || v.nodes[k-1] != i {
		v.nodes = append(v.nodes, i)
	}
}

// addSource counts a fabric-wide source for the name.
func (v *nameVotes) addSource(source string) {
	if v.sources == nil {
		v.sources = map[string]bool{}
	}
	v.sources[source] = true
}

// nodeNames returns the names of the nodes that gave the name, sorted.
func (v *nameVotes) nodeNames() []string {
	out := make([]string, len(v.nodes))
	for k, i := range slices.Sorted(slices.Values(v.nodes)) {
		out[k] = v.evidence[i].Node
	}
	return out
}

// switchNaming is everything said about one switch's name.
type switchNaming struct {
	// names are the names given, by SafeName.
	names map[string]*nameVotes
	// reporters are the nodes whose reports reach the switch through a link that was not rejected, each once,
	// as their places in evidence.
	reporters []int32
	// evidence is the evidence, sorted by node, the places are of.
	evidence []NodeEvidence
}

// addReporter counts the report of the node at place i for the switch; as nameVotes.addNode, a node already
// counted is the last.
func (c *switchNaming) addReporter(i int32) {
	if k := len(c.reporters); k == 0 || c.reporters[k-1] != i {
		c.reporters = append(c.reporters, i)
	}
}

// switchVote is the outcome of one switch's vote, for the domain that holds it (domainName) and KeepNames.
type switchVote struct {
	// chosen is the name used, nil when none qualified.
	chosen *nameVotes
	// reporters are the nodes whose reports reach the switch, each once, as their places in the evidence.
	reporters []int32
	// rejected are the names the vote turned down, by SafeName.
	rejected []string
}

// nameChoice is the name picked for a switch and how well it is supported.
type nameChoice struct {
	id    string
	votes *nameVotes
	// reporters is how many reports reach the switch.
	reporters int
}

// fabricWide reports whether a fabric-wide source gave the name.
func (c nameChoice) fabricWide() bool { return len(c.votes.sources) > 0 }

// support is how many sources (fabric-wide) or reports gave the name.
func (c nameChoice) support() int {
	if c.fabricWide() {
		return len(c.votes.sources)
	}
	return len(c.votes.nodes)
}

// outranks orders two switches that want one name: fabric-wide first, then more support, then smaller ID.
func (c nameChoice) outranks(o nameChoice) bool {
	if c.fabricWide() != o.fabricWide() {
		return c.fabricWide()
	}
	if c.support() != o.support() {
		return c.support() > o.support()
	}
	return c.id < o.id
}

// nameSwitches sets g.names and g.votes for the switches in play (the tree's switches) from what in and the
// accepted evidence (nodes, sorted by node, without stray links) say, and returns the names it did not use
// with the reason. reserved is the root's name.
func (g *switchGraph) nameSwitches(in Input, nodes []NodeEvidence, strays map[string]strayLinks,
	inPlay map[string]int, reserved string,
) []Problem {
	claims := collectNames(in, nodes, strays)
	g.votes = map[string]*switchVote{}
	g.seen = make([]uint32, len(nodes))
	var problems []Problem
	var chosen []nameChoice
	for _, id := range sortedKeys(claims) {
		if _, ok := inPlay[id]; !ok {
			continue
		}
		c, rejected, refused := chooseName(id, claims[id], reserved)
		problems = append(problems, refused...)
		g.votes[id] = &switchVote{reporters: claims[id].reporters, rejected: rejected}
		if c.votes != nil {
			chosen = append(chosen, c)
		}
	}
	kept, lost, refused := settleShared(chosen)
	problems = append(problems, refused...)
	for _, c := range kept {
		g.names[c.id] = c.votes.raw
		g.votes[c.id].chosen = c.votes
	}
	for _, c := range lost {
		g.votes[c.id].rejected = append(g.votes[c.id].rejected, c.votes.safe)
	}
	return problems
}

// collectNames gathers every name given to a switch by evidence Build did not reject.
func collectNames(in Input, nodes []NodeEvidence, strays map[string]strayLinks) map[string]*switchNaming {
	claims := map[string]*switchNaming{}
	of := func(id string) *switchNaming {
		c := claims[id]
		if c == nil {
			c = &switchNaming{names: map[string]*nameVotes{}, evidence: nodes}
			claims[id] = c
		}
		return c
	}
	// The nodes are sorted, and neighbours mostly reach the same switches under the same names in the same link
	// order: the switch and the name of the node before, at the same link, are compared before they are looked up.
	var last [16]struct {
		id, name string
		c        *switchNaming
		v        *nameVotes
	}
	for i, e := range nodes {
		n, rejected := int32(i), strays[e.Node].stray
		for k, l := range e.Links {
			if slices.Contains(rejected, l.SwitchID) {
				continue
			}
			if k >= len(last) {
				k = len(last) - 1 // the last place serves every link beyond it
			}
			at := &last[k]
			if at.c == nil || at.id != l.SwitchID {
				at.id, at.c = l.SwitchID, of(l.SwitchID)
				at.name, at.v = l.SwitchName, at.c.vote(l.SwitchName)
			} else if at.name != l.SwitchName {
				at.name, at.v = l.SwitchName, at.c.vote(l.SwitchName)
			}
			c := at.c
			if e.SelfReported {
				c.addReporter(n)
			}
			switch v := at.v; {
			case v == nil:
			case e.SelfReported:
				v.addNode(n)
			default:
				v.addSource(e.Source)
			}
		}
	}
	for _, e := range in.SwitchLinks {
		if e.usable() {
			if v := of(e.A).vote(e.AName); v != nil {
				v.addSource(e.Source)
			}
			if v := of(e.B).vote(e.BName); v != nil {
				v.addSource(e.Source)
			}
		}
	}
	for _, sn := range in.SwitchNames {
		if v := of(sn.SwitchID).vote(sn.Name); v != nil {
			v.addSource(sn.Source)
		}
	}
	return claims
}

// vote returns the votes for name, keeping its smallest spelling; nil for the empty name (evidence that gave
// none votes for nothing).
func (c *switchNaming) vote(name string) *nameVotes {
	if name == "" {
		return nil
	}
	safe := SafeName(name)
	v := c.names[safe]
	if v == nil {
		v = &nameVotes{raw: name, safe: safe, evidence: c.evidence}
		c.names[safe] = v
	}
	if name < v.raw {
		v.raw = name
	}
	return v
}

// chooseName picks the name of switch id by rules 2 to 4, returns the names the vote rejected (by SafeName) and
// says why each other name is not used. The choice has nil votes when no name qualifies.
func chooseName(id string, c *switchNaming, reserved string) (nameChoice, []string, []Problem) {
	var problems []Problem
	var rejected []string
	var fabric, reported []*nameVotes
	for _, safe := range sortedKeys(c.names) {
		v := c.names[safe]
		switch {
		case safe == reserved:
			rejected = append(rejected, safe)
			problems = append(problems, refusal(id, v, len(c.reporters), "it is the root's name, which no switch may take"))
		case len(v.sources) > 0:
			fabric = append(fabric, v)
		default:
			reported = append(reported, v)
		}
	}
	var best *nameVotes
	switch {
	case len(fabric) > 0:
		best = slices.MinFunc(fabric, func(a, b *nameVotes) int { return cmp.Compare(len(b.sources), len(a.sources)) })
	case len(reported) > 0:
		best = slices.MinFunc(reported, func(a, b *nameVotes) int { return cmp.Compare(len(b.nodes), len(a.nodes)) })
		if 2*len(best.nodes) <= len(c.reporters) {
			best = nil
		}
	}
	top := 0 // the support of the best-supported name of the highest rank given
	if len(fabric) > 0 {
		top = len(slices.MinFunc(fabric, func(a, b *nameVotes) int { return cmp.Compare(len(b.sources), len(a.sources)) }).sources)
	} else if len(reported) > 0 {
		top = len(slices.MinFunc(reported, func(a, b *nameVotes) int { return cmp.Compare(len(b.nodes), len(a.nodes)) }).nodes)
	}
	for _, v := range slices.Concat(fabric, reported) {
		if v == best {
			continue
		}
		if outvoted(v, len(fabric) > 0, top) {
			rejected = append(rejected, v.safe)
		}
		var why string
		switch {
		case len(v.sources) > 0:
			why = fmt.Sprintf("the switch is named %q by %s, and the name the most fabric-wide sources give wins (the smaller on a tie)", best.raw, best.by(0))
		case best != nil && len(best.sources) > 0:
			why = fmt.Sprintf("the switch is named %q by %s, and fabric-wide sources outrank node reports", best.raw, best.by(0))
		case best != nil:
			why = fmt.Sprintf("the switch is named %q by %s", best.raw, best.by(len(c.reporters)))
		default:
			why = "no name has the support of most of the reports that reach the switch, which a name from reports needs; it is named after its identifier"
		}
		problems = append(problems, refusal(id, v, len(c.reporters), why))
	}
	return nameChoice{id: id, votes: best, reporters: len(c.reporters)}, rejected, problems
}

// outvoted reports whether the vote turned v down rather than left it tied: a report's name where a fabric-wide
// source gave one, or a name with less support than top, the best-supported name of its rank.
func outvoted(v *nameVotes, fabricWide bool, top int) bool {
	if len(v.sources) > 0 {
		return len(v.sources) < top
	}
	return fabricWide || len(v.nodes) < top
}

// settleShared applies rule 5: of the switches whose chosen names are one, the highest-ranked keeps it and the
// others (returned second) lose their names.
func settleShared(chosen []nameChoice) (kept, lost []nameChoice, problems []Problem) {
	bySafe := map[string][]nameChoice{}
	for _, c := range chosen {
		bySafe[c.votes.safe] = append(bySafe[c.votes.safe], c)
	}
	for _, safe := range sortedKeys(bySafe) {
		cs := bySafe[safe]
		win := slices.MinFunc(cs, func(a, b nameChoice) int {
			if a.outranks(b) {
				return -1
			}
			return 1
		})
		kept = append(kept, win)
		for _, c := range cs {
			if c.id != win.id {
				lost = append(lost, c)
				problems = append(problems, refusal(c.id, c.votes, c.reporters, fmt.Sprintf(
					"switch %q has the same name, given by %s, which ranks higher (fabric-wide sources over reports, then more of them, then the smaller identifier); the switch is named after its identifier",
					win.id, win.votes.by(win.reporters))))
			}
		}
	}
	return kept, lost, problems
}

// by says who gave the name: "source ufm", "sources ibnetdiscover, ufm", or "the reports of n1, n2 (2 of the
// 3 that reach the switch)"; reporters is the number of reports of the switch.
func (v *nameVotes) by(reporters int) string {
	if len(v.sources) > 0 {
		srcs := slices.Sorted(maps.Keys(v.sources))
		if len(srcs) == 1 {
			return "source " + srcs[0]
		}
		return "sources " + strings.Join(srcs, ", ")
	}
	return fmt.Sprintf("the reports of %s (%d of the %d that reach the switch)", nameList(v.nodeNames()), len(v.nodes), reporters)
}

// refusal is the Problem of a name v not used for switch id: a problem of the first node whose report gave
// it, or of the first fabric-wide source that gave it.
func refusal(id string, v *nameVotes, reporters int, why string) Problem {
	p := Problem{Reason: fmt.Sprintf("switch %q: name %q, given by %s, is not used: %s", id, v.raw, v.by(reporters), why)}
	if len(v.sources) > 0 {
		p.Source = slices.Min(slices.Collect(maps.Keys(v.sources)))
		return p
	}
	first := v.evidence[slices.Min(v.nodes)] // the smallest place is the smallest name
	p.Node, p.Source = first.Node, first.Source
	return p
}
