// Package topology holds fabricmap's model of a cluster's network: the tree of domains that the aggregator
// infers from node evidence and that every output (HyperNodes, labels, ClusterNetworkTopology, …) is written
// from. It is a plain in-memory structure, built once per reconcile; everything here is pure.
package topology

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Tier names the levels of the tree. Tier 1 is the closest domain (the leaf switch, or the NVLink domain
// below it); higher tiers are further apart, as in Volcano.
const (
	// TierNameAccelerator is the NVLink domain, below the lowest switch domain that holds all its nodes.
	TierNameAccelerator = "accelerator"
	// TierNameAcceleratorSubDomain is a part of an NVLink domain (a rack of a multi-rack NVL72), below it.
	TierNameAcceleratorSubDomain = "accelerator-sub-domain"
	// TierNameLeaf is a leaf switch, or a group of rail leaves that share hosts.
	TierNameLeaf = "leaf"
	// TierNameSpine is the switch tier above the leaves.
	TierNameSpine = "spine"
	// TierNameCore is the switch tier above the spines.
	TierNameCore = "core"
	// TierNameRoot is the single domain that holds the whole fabric.
	TierNameRoot = "fabric"
)

// Domain is one node of the tree: a set of Kubernetes nodes that share a switch (or an NVLink domain),
// with a tier and a single parent.
type Domain struct {
	// Name is unique in the tree and a valid DNS-1123 subdomain.
	Name string `json:"name"`
	// Tier is 1 for the closest domains and grows upward.
	Tier int `json:"tier"`
	// TierName is the human name of the tier (leaf, spine, …).
	TierName string `json:"tierName,omitempty"`
	// Parent is the name of the enclosing domain; empty for the root.
	Parent string `json:"parent,omitempty"`
	// Children are the names of the domains directly below, sorted.
	Children []string `json:"children,omitempty"`
	// Nodes are the Kubernetes nodes directly in this domain (only domains with no children have nodes), sorted.
	Nodes []string `json:"nodes,omitempty"`
	// Switches are the identifiers of the switches this domain stands for, sorted.
	Switches []string `json:"switches,omitempty"`
	// NVLinkDomain is the NVLink domain ("<clusterUUID>.<cliqueId>", as CanonicalNVLinkID writes it) an
	// accelerator domain or sub-domain stands for; empty for every other domain, and for an accelerator domain
	// that holds alone a node without an NVLink domain (named after the node).
	NVLinkDomain string `json:"nvlinkDomain,omitempty"`
	// NVLinkPart marks an accelerator domain that holds only the part of NVLinkDomain behind its leaf: the
	// NVLink domain spans leaves, and has one accelerator domain (or nodes kept directly) in each.
	NVLinkPart bool `json:"nvlinkPart,omitempty"`
	// NVLinkSubDomain is the sub-domain (a rack within NVLinkDomain, as CanonicalNVLinkID writes it) an
	// accelerator sub-domain stands for; empty for every other domain, and for a sub-domain that holds alone a
	// node without a sub-domain (named after the node).
	NVLinkSubDomain string `json:"nvlinkSubDomain,omitempty"`
	// Source names the evidence the domain came from (lldp, ibnetdiscover, ufm, labels, …).
	Source string `json:"source,omitempty"`
	// DegradedUplinks counts the domain's links towards its parent's switches that fabric health judged
	// degraded or down (see the health package); placement ranks such a domain after a healthy one of the
	// same tier. Zero when healthy or not judged.
	DegradedUplinks int `json:"degradedUplinks,omitempty"`
	// Vote is what the evidence of the build said about the domain's name, which KeepNames weighs against the
	// names of the tree before; nil when it said nothing KeepNames needs. Only Build sets it; it is not written out.
	Vote *NameVote `json:"-"`
}

// Tree is a forest-free tree of domains: every domain but the root has exactly one parent.
type Tree struct {
	// Domains by name.
	Domains map[string]*Domain `json:"domains"`
	// Unplaced lists the nodes for which there was no evidence; they are listed, never guessed.
	Unplaced []string `json:"unplaced,omitempty"`
}

// NewTree returns an empty tree.
func NewTree() *Tree { return &Tree{Domains: map[string]*Domain{}} }

// Add inserts d, refusing a duplicate or empty name.
func (t *Tree) Add(d *Domain) error {
	if d.Name == "" {
		return fmt.Errorf("domain with empty name (tier %d)", d.Tier)
	}
	if _, dup := t.Domains[d.Name]; dup {
		return fmt.Errorf("domain %q added twice", d.Name)
	}
	t.Domains[d.Name] = d
	return nil
}

// Names returns all domain names, ordered by tier (highest first) then name: a stable order for output.
func (t *Tree) Names() []string {
	names := make([]string, 0, len(t.Domains))
	for n := range t.Domains {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := t.Domains[names[i]], t.Domains[names[j]]
		if a.Tier != b.Tier {
			return a.Tier > b.Tier
		}
		return a.Name < b.Name
	})
	return names
}

// Roots returns the names of the domains that have no parent, sorted.
func (t *Tree) Roots() []string {
	var roots []string
	for n, d := range t.Domains {
		if d.Parent == "" {
			roots = append(roots, n)
		}
	}
	sort.Strings(roots)
	return roots
}

// NodeCount is the number of Kubernetes nodes at or below the named domain.
func (t *Tree) NodeCount(name string) int {
	d, ok := t.Domains[name]
	if !ok {
		return 0
	}
	n := len(d.Nodes)
	for _, c := range d.Children {
		n += t.NodeCount(c)
	}
	return n
}

// PathOf returns the domains that hold node, from the closest up to the root; nil when the node is not in the tree.
func (t *Tree) PathOf(node string) []*Domain {
	for _, d := range t.Domains {
		if slices.Contains(d.Nodes, node) {
			return t.PathFrom(d.Name)
		}
	}
	return nil
}

// PathFrom returns the named domain and its ancestors up to the root. A parent chain that loops (Validate
// reports it) ends the path once every domain could have been visited.
func (t *Tree) PathFrom(name string) []*Domain {
	var path []*Domain
	for cur := t.Domains[name]; cur != nil && len(path) <= len(t.Domains); cur = t.Domains[cur.Parent] {
		path = append(path, cur)
	}
	return path
}

// Outline lists every domain as "name(tier)members" (members: its child domains, or else its nodes,
// comma-separated), sorted: a compact, stable rendering for logs and tests.
func (t *Tree) Outline() []string {
	out := make([]string, 0, len(t.Domains))
	for _, n := range t.Names() {
		d := t.Domains[n]
		members := d.Children
		if len(members) == 0 {
			members = d.Nodes
		}
		out = append(out, n+"("+strconv.Itoa(d.Tier)+")"+strings.Join(members, ","))
	}
	sort.Strings(out)
	return out
}
