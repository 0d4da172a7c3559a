package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// maxNameLen is the longest domain name fabricmap makes. HyperNode names and label values share it, so a
// name is also a valid label value (63 characters).
const maxNameLen = 63

// SafeName turns any identifier (a switch name, a GUID, a MAC address) into a stable DNS-1123 label: lower
// case, runs of other characters folded to "-", trimmed; when the result is empty or too long, it is cut and
// a short hash of the raw identifier appended. The same input always gives the same name.
func SafeName(raw string) string {
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

// KeepNames renames the domains of t, a tree just built, after the domains of prev, the tree built before it,
// so that a domain keeps its name while its identity holds: a domain that shares at least half of its
// switches with a domain of prev, and at least half of that domain's (or, when either has none, half of the
// nodes at or below each), takes that domain's name. Each name of prev goes to one domain only: pairs are taken by the most switches (then
// nodes) shared, then the same tier, then by name. The root keeps its name, as do accelerator domains,
// named after their NVLink domain; a domain whose own name a kept name takes is given the hashed name of its
// identity instead. So a rail group keeps its name when one of its leaves drops out of a capture or comes
// back, or when hosts or leaves are added to it; a nil prev changes nothing.
func KeepNames(t, prev *Tree) {
	if prev == nil || len(prev.Domains) == 0 || len(t.Domains) == 0 {
		return
	}
	reserved := map[string]bool{}
	for _, r := range t.Roots() {
		reserved[r] = true
	}
	type pair struct {
		d, p            *Domain
		switches, nodes int
		sameTier        bool
	}
	prevIDs := map[string]identity{}
	for _, p := range prev.Domains {
		if IsSwitchDomain(p) && !reserved[p.Name] {
			prevIDs[p.Name] = identityOf(prev, p)
		}
	}
	var pairs []pair
	for _, d := range t.Domains {
		if !IsSwitchDomain(d) || reserved[d.Name] {
			continue
		}
		id := identityOf(t, d)
		for name, pid := range prevIDs {
			sw, nodes := overlap(id.switches, pid.switches), overlap(id.nodes, pid.nodes)
			keep := sw > 0 && 2*sw >= max(len(id.switches), len(pid.switches))
			if len(id.switches) == 0 || len(pid.switches) == 0 {
				keep = nodes > 0 && 2*nodes >= max(len(id.nodes), len(pid.nodes))
			}
			if keep {
				pairs = append(pairs, pair{d: d, p: prev.Domains[name], switches: sw, nodes: nodes, sameTier: d.Tier == prev.Domains[name].Tier})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		switch {
		case a.switches != b.switches:
			return b.switches - a.switches
		case a.nodes != b.nodes:
			return b.nodes - a.nodes
		case a.sameTier != b.sameTier:
			if a.sameTier {
				return -1
			}
			return 1
		case a.d.Name != b.d.Name:
			return strings.Compare(a.d.Name, b.d.Name)
		}
		return strings.Compare(a.p.Name, b.p.Name)
	})
	rename := map[string]string{} // by current name
	taken := map[string]bool{}    // previous names given
	for _, pr := range pairs {
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
// domain or sub-domain. Only such domains keep names across trees (KeepNames) and are paired with a plan
// (the health package's drift check).
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
