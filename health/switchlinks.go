package health

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// tierPair is the tiers of a switch link's two ends, lower first (0: a switch no domain stands for).
type tierPair [2]int

// orientedLink is a switch link with its lower-tier end first (the smaller identifier first between equals; a
// switch no domain stands for last).
type orientedLink struct {
	lo, hi string
	tiers  tierPair
	got    figures
	source string
}

func orient(idx *treeIndex, l Link) orientedLink {
	o := orientedLink{lo: l.From, hi: l.To, got: linkFigures(l.RateGbps, l.Width), source: l.Source}
	tLo, tHi := idx.switchTier(o.lo), idx.switchTier(o.hi)
	above := func(t int) int { // a switch the tree lost (a spine above a single leaf domain) is above the ones it has
		if t == 0 {
			return math.MaxInt
		}
		return t
	}
	if above(tLo) > above(tHi) || tLo == tHi && o.lo > o.hi {
		o.lo, o.hi, tLo, tHi = o.hi, o.lo, tHi, tLo
	}
	o.tiers = tierPair{tLo, tHi}
	return o
}

// judgeSwitchLinks finds switch links slower or narrower than the mode of the links between the same two
// tiers (the fastest and widest on a tie). Parallel cables that fall short alike make one finding that counts
// them; each counts as a degraded uplink of the domain whose uplink it is (uplinkOf).
func judgeSwitchLinks(r *report, idx *treeIndex, links []Link) {
	oriented := make([]orientedLink, 0, len(links))
	tallies := map[tierPair]*tally{}
	for _, l := range links {
		if l.From == "" || l.To == "" || l.From == l.To {
			continue
		}
		o := orient(idx, l)
		oriented = append(oriented, o)
		if tallies[o.tiers] == nil {
			tallies[o.tiers] = newTally()
		}
		tallies[o.tiers].add(o.got)
	}
	modes := make(map[tierPair]figures, len(tallies))
	for tp, t := range tallies {
		modes[tp], _, _ = t.mode()
	}
	type cable struct {
		lo, hi string
		got    figures
	}
	type short struct {
		link    orientedLink
		why     string
		n       int
		sources []string
	}
	shorts := map[cable]*short{}
	for _, o := range oriented {
		why := shortfall(o.got, modes[o.tiers])
		if why == "" {
			continue
		}
		k := cable{o.lo, o.hi, o.got}
		s := shorts[k]
		if s == nil {
			s = &short{link: o, why: why}
			shorts[k] = s
		}
		s.n++
		if o.source != "" && !slices.Contains(s.sources, o.source) {
			s.sources = append(s.sources, o.source)
		}
	}
	for _, s := range shorts {
		owner := idx.uplinkOf(s.link.lo, s.link.hi)
		if owner != nil {
			r.uplinks[owner.Name] += s.n
		}
		r.add(switchLinkFinding(idx, s.link, owner, s.why, s.n, s.sources))
	}
}

func switchLinkFinding(idx *treeIndex, o orientedLink, owner *topology.Domain, why string, n int, sources []string) Finding {
	f := Finding{Kind: KindDegradedLink, Severity: SeverityWarning, Switches: []string{o.lo, o.hi}}
	if owner == nil {
		owner = idx.highestOf(o.lo)
	}
	if owner != nil {
		f.Domain = owner.Name
	}
	cables, run := "the link", "runs"
	if n > 1 {
		cables, run = fmt.Sprintf("%d cables", n), "run"
	}
	slices.Sort(sources)
	from := ""
	if len(sources) > 0 {
		from = " (source " + strings.Join(sources, ", ") + ")"
	}
	f.Message = fmt.Sprintf("%s between %s and %s %s at %s%s", cables, idx.describeSwitch(o.lo), idx.describeSwitch(o.hi), run, why, from)
	return f
}

// uplinkOf is the domain whose uplink the link between switches a and b is: a domain that stands for one
// end, below a parent that stands for the other; nil when there is none.
func (idx *treeIndex) uplinkOf(a, b string) *topology.Domain {
	for _, ends := range [][2]string{{a, b}, {b, a}} {
		for _, d := range idx.switchDomains[ends[0]] {
			if p := idx.tree.Domains[d.Parent]; p != nil && hasSwitch(p, ends[1]) {
				return d
			}
		}
	}
	return nil
}

// highestOf is the highest-tier domain that stands for switch s; nil when none does.
func (idx *treeIndex) highestOf(s string) *topology.Domain {
	if ds := idx.switchDomains[s]; len(ds) > 0 {
		return ds[len(ds)-1]
	}
	return nil
}

// describeSwitch names a switch for a message: its identifier and the domain that stands for it.
func (idx *treeIndex) describeSwitch(s string) string {
	if d := idx.highestOf(s); d != nil {
		return s + " (" + d.Name + ")"
	}
	return s
}
