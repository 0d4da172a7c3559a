package topology

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// maxNameLen is the longest domain name fabricmap makes. HyperNode names and label values share it, so a
// name is also a valid label value (63 characters).
const maxNameLen = 63

// SafeName turns any identifier (a switch name, a GUID, a MAC address) into a stable DNS-1123 label: lower
// case, runs of other characters folded to "-", trimmed; when the result is empty or too long, it is cut and
// a short hash of the raw identifier appended. The same input always gives the same name.
func SafeName(raw string) string {
	if isSafeName(raw) {
		return raw // most names are safe already: Build asks for hundreds of thousands
	}
	var b strings.Builder
	lastDash := true
	for _, r := range strings.ToLower(raw) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			lastDash = false
		default:
			if !lastDash {
				b.WriteByte('-')
				lastDash = true
			}
		}
	}
	clean := strings.Trim(b.String(), "-")
	if clean != "" && len(clean) <= maxNameLen {
		return clean
	}
	return hashed(clean, raw)
}

// isSafeName tells whether SafeName would give raw back unchanged: lower-case letters, digits and single
// dashes between them, no longer than maxNameLen.
func isSafeName(raw string) bool {
	if raw == "" || len(raw) > maxNameLen || raw[0] == '-' || raw[len(raw)-1] == '-' {
		return false
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && raw[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// UniqueName is SafeName with the hash always appended: for identifiers whose SafeName collides with another's.
func UniqueName(raw string) string {
	return hashed(strings.Trim(SafeName(raw), "-"), raw)
}

func hashed(clean, raw string) string {
	sum := sha256.Sum256([]byte(raw))
	suffix := hex.EncodeToString(sum[:])[:8]
	if clean == "" {
		return "x-" + suffix
	}
	if keep := maxNameLen - len(suffix) - 1; len(clean) > keep {
		clean = strings.TrimRight(clean[:keep], "-")
	}
	return clean + "-" + suffix
}

// JoinName builds a name from a prefix and an identifier, as SafeName does for the identifier.
func JoinName(prefix, raw string) string {
	return SafeName(prefix + "-" + raw)
}

// NameVote is what the evidence behind one build said about a domain's name (Domain.Vote): KeepNames keeps a
// name of the tree before only where the vote leaves room for it.
type NameVote struct {
	// Rejected lists the names (as SafeName makes them) that evidence gave the domain's switches and the vote
	// turned down: a report's beside a fabric-wide source's, one with less support than the best-supported name
	// (each node counted once), the root's name, a name another switch won. A previous name made from one of
	// them (the name itself, or with a group suffix such as "-rails") is not kept. Names tied at the top of a
	// vote nobody won are not rejected.
	Rejected []string
	// Tied marks an accelerator domain that is a part of an NVLink domain spanning leaves none of which holds
	// more than two thirds of its nodes: no vote named it, so it may keep the name a part of the same NVLink
	// domain had.
	Tied bool
}

// rejects reports whether name is, or is made from, a name v rejected.
func (v *NameVote) rejects(name string) bool {
	if v == nil {
		return false
	}
	for _, r := range v.Rejected {
		if name == r || strings.HasPrefix(name, r+"-") && isGroupSuffix(name[len(r):]) {
			return true
		}
	}
	return false
}

// isGroupSuffix reports whether s is a group suffix groupSuffix gives.
func isGroupSuffix(s string) bool {
	switch s {
	case "-rails", "-spines", "-cores":
		return true
	}
	n, ok := strings.CutPrefix(s, "-tier-")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

// ReplacedName is a name of the tree before that KeepNames did not keep, because the vote of the new tree
// rejects it.
type ReplacedName struct {
	// Domain is the domain's name in the new tree, decided by the vote; Previous the name it would have kept.
	Domain, Previous string
}

// KeepNames renames the domains of t, a tree just built, after the domains of prev, the tree built before it,
// so that a domain keeps its name while its identity holds and the vote of t's evidence does not reject it:
//
//   - a switch domain that shares at least half of its switches with a switch domain of prev, and at least half
//     of that domain's (or, when either has none, half of the nodes at or below each), takes that domain's
//     name, unless t's vote rejects the name (Domain.Vote: the name, or the switch name it is made from, lost to
//     a fabric-wide source's or to a better-supported one). So the first node that reports a switch cannot
//     name it for good: once the trust order picks another name (a fabric-wide source, most of the switch's
//     reports), that name replaces the kept one, while a name merely no longer given, or tied at the top of a
//     vote nobody won, is kept;
//   - an accelerator domain that no vote named (a part of an NVLink domain spanning leaves none of which holds
//     more than two thirds of it, NameVote.Tied) takes the name of an accelerator domain of prev of the same NVLink domain
//     (canonical) that shares at least half of its nodes both ways; other accelerator domains, named after
//     their NVLink domain or node, and the root keep their names.
//
// Each name of prev goes to one domain only: pairs are taken by the most switches (then nodes) shared, then the
// same name, then the same tier, then by name; a switch domain never takes a name an accelerator domain of t
// has, nor, in a tree with accelerator domains, one made like theirs ("nvl-…"). A domain whose own name a kept
// name takes is given the hashed name of its identity instead. So a rail group keeps its name when one of its leaves drops out of a capture or comes back, or when hosts or
// leaves are added to it; a nil prev changes nothing. It returns the names not kept because the vote rejects
// them, sorted.
func KeepNames(t, prev *Tree) []ReplacedName {
	if prev == nil || len(prev.Domains) == 0 || len(t.Domains) == 0 {
		return nil
	}
	reserved := map[string]bool{}
	for _, r := range t.Roots() {
		reserved[r] = true
	}
	pairs, replaced := switchPairs(t, prev, reserved)
	rename := map[string]string{} // by current name
	taken := map[string]bool{}    // previous names given
	for _, pr := range slices.Concat(acceleratorPairs(t, prev), pairs) {
		if _, done := rename[pr.d.Name]; done || taken[pr.p.Name] {
			continue
		}
		rename[pr.d.Name] = pr.p.Name
		taken[pr.p.Name] = true
	}
	for name, d := range t.Domains {
		if _, kept := rename[name]; !kept && taken[name] {
			id := identityOf(t, d)
			raw := strings.Join(id.switches, ",")
			if raw == "" {
				raw = strings.Join(id.nodes, ",")
			}
			rename[name] = UniqueName(raw)
		}
	}
	applyRenames(t, rename)
	return replaced
}

// namePair is a domain of the new tree, d, that may take the name of p, a domain of the tree before.
type namePair struct {
	d, p            *Domain
	switches, nodes int
	sameTier        bool
}

// switchPairs returns the pairs of switch domains of t and prev whose identities hold, best first, and the
// pairs left out because t's vote rejects the previous name.
func switchPairs(t, prev *Tree, reserved map[string]bool) ([]namePair, []ReplacedName) {
	notSwitch := map[string]bool{} // names t's accelerator domains and root have: no switch domain takes them
	accelerators := false
	for name, d := range t.Domains {
		if !IsSwitchDomain(d) {
			notSwitch[name] = true
		}
		accelerators = accelerators || d.TierName == TierNameAccelerator
	}
	prevIDs := map[string]identity{}
	for _, p := range prev.Domains {
		prefixed := accelerators && strings.HasPrefix(p.Name, acceleratorPrefix) // see evictPrefixed
		if IsSwitchDomain(p) && !reserved[p.Name] && !notSwitch[p.Name] && !prefixed {
			prevIDs[p.Name] = identityOf(prev, p)
		}
	}
	// A pair shares a switch or a node, or it is never kept: the candidates of a domain come from indexes of
	// prev's domains by switch and by node, not from every previous domain (quadratic in a large fabric). Two
	// domains that both stand for switches are kept only when they share switches, so the index by node holds
	// only the previous domains without switches, unless a domain of t has none (any previous domain may share
	// its nodes): indexing every node of every tier cost the rebuild at 50,000 nodes more than the rest of it.
	bare := false // a switch domain of t without switches
	for _, d := range t.Domains {
		bare = bare || IsSwitchDomain(d) && !reserved[d.Name] && len(d.Switches) == 0
	}
	bySwitch, byNode := map[string][]string{}, map[string][]string{}
	for name, pid := range prevIDs {
		for _, s := range pid.switches {
			bySwitch[s] = append(bySwitch[s], name)
		}
		if !bare && len(pid.switches) > 0 {
			continue
		}
		for _, n := range pid.nodes {
			byNode[n] = append(byNode[n], name)
		}
	}
	var pairs []namePair
	var replaced []ReplacedName
	for _, d := range t.Domains {
		if !IsSwitchDomain(d) || reserved[d.Name] {
			continue
		}
		id := identityOf(t, d)
		candidates := map[string]bool{}
		for _, s := range id.switches {
			for _, name := range bySwitch[s] {
				candidates[name] = true
			}
		}
		for _, n := range id.nodes {
			if len(byNode) == 0 {
				break
			}
			for _, name := range byNode[n] {
				candidates[name] = true
			}
		}
		for name := range candidates {
			pid := prevIDs[name]
			sw, nodes := overlap(id.switches, pid.switches), overlap(id.nodes, pid.nodes)
			keep := sw > 0 && 2*sw >= max(len(id.switches), len(pid.switches))
			if len(id.switches) == 0 || len(pid.switches) == 0 {
				keep = nodes > 0 && 2*nodes >= max(len(id.nodes), len(pid.nodes))
			}
			switch {
			case !keep:
			case name != d.Name && d.Vote.rejects(name):
				replaced = append(replaced, ReplacedName{Domain: d.Name, Previous: name})
			default:
				pairs = append(pairs, namePair{d: d, p: prev.Domains[name], switches: sw, nodes: nodes, sameTier: d.Tier == prev.Domains[name].Tier})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b namePair) int {
		return cmp.Or(b.switches-a.switches, b.nodes-a.nodes, first(a.p.Name == a.d.Name, b.p.Name == b.d.Name),
			first(a.sameTier, b.sameTier), strings.Compare(a.d.Name, b.d.Name), strings.Compare(a.p.Name, b.p.Name))
	})
	slices.SortFunc(replaced, func(a, b ReplacedName) int {
		return cmp.Or(strings.Compare(a.Domain, b.Domain), strings.Compare(a.Previous, b.Previous))
	})
	return pairs, replaced
}

// acceleratorPairs returns the pairs of a tied accelerator domain of t (NameVote.Tied) and an accelerator domain
// of prev of the same NVLink domain that share at least half of their nodes both ways, best first.
func acceleratorPairs(t, prev *Tree) []namePair {
	var pairs []namePair
	var byNVLink map[string][]*Domain // prev's accelerator domains by NVLink domain, made when first needed
	for _, d := range t.Domains {
		if d.Vote == nil || !d.Vote.Tied {
			continue
		}
		if byNVLink == nil {
			byNVLink = map[string][]*Domain{}
			for _, p := range prev.Domains {
				if p.TierName == TierNameAccelerator && p.NVLinkDomain != "" {
					nv := CanonicalNVLinkID(p.NVLinkDomain)
					byNVLink[nv] = append(byNVLink[nv], p)
				}
			}
		}
		id := identityOf(t, d)
		for _, p := range byNVLink[d.NVLinkDomain] {
			pid := identityOf(prev, p)
			if n := overlap(id.nodes, pid.nodes); n > 0 && 2*n >= max(len(id.nodes), len(pid.nodes)) {
				pairs = append(pairs, namePair{d: d, p: p, nodes: n})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b namePair) int {
		return cmp.Or(b.nodes-a.nodes, strings.Compare(a.p.Name, b.p.Name), strings.Compare(a.d.Name, b.d.Name))
	})
	return pairs
}

// applyRenames renames t's domains as rename says (by current name), with their parents' and children's links.
func applyRenames(t *Tree, rename map[string]string) {
	if len(rename) == 0 {
		return
	}
	to := func(n string) string {
		if r, ok := rename[n]; ok {
			return r
		}
		return n
	}
	domains := make(map[string]*Domain, len(t.Domains))
	for _, d := range t.Domains {
		d.Name, d.Parent = to(d.Name), to(d.Parent)
		for i, c := range d.Children {
			d.Children[i] = to(c)
		}
		slices.Sort(d.Children)
		domains[d.Name] = d
	}
	t.Domains = domains
}

// identity is what a domain stands for, each list sorted: its switches and the nodes at or below it.
type identity struct{ switches, nodes []string }

func identityOf(t *Tree, d *Domain) identity {
	var nodes []string
	var walk func(*Domain)
	walk = func(d *Domain) {
		nodes = append(nodes, d.Nodes...)
		for _, c := range d.Children {
			if cd := t.Domains[c]; cd != nil {
				walk(cd)
			}
		}
	}
	walk(d)
	slices.Sort(nodes)
	return identity{switches: d.Switches, nodes: nodes}
}

// IsSwitchDomain reports whether d stands for switches below the root: not the root, not an accelerator (NVLink)
// domain or sub-domain. Only such domains keep names across trees by their switches (KeepNames; accelerator
// domains only when tied, by their nodes) and are paired with a plan (the health package's drift check).
func IsSwitchDomain(d *Domain) bool {
	return d.TierName != TierNameRoot && d.NVLinkDomain == "" && d.TierName != TierNameAccelerator &&
		d.TierName != TierNameAcceleratorSubDomain
}

// overlap counts the strings two sorted lists share.
func overlap(a, b []string) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			n++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return n
}
