package slurm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// Tree returns topology.conf for TopologyPlugin=topology/tree: one line per domain, children before their
// parents and the root last (by tier, then name): SwitchName=NAME Nodes=HOSTLIST for a domain that holds nodes
// (a leaf, or an NVLink domain or rack below one), SwitchName=NAME Switches=HOSTLIST for one above. Every domain
// is a switch, named by SwitchName (Slurm takes at most 64 characters). A tree of several roots gives several
// top switches, which Slurm accepts with a warning. Hosts known only by their HCA's GUID are left out, and
// the domains that then hold nothing with them, with a comment line naming them (see Unidentified); node
// names are written as Hostlist writes them. The same tree always gives the same bytes. An empty or invalid
// tree, one of only such hosts, a node name Slurm refuses or two domains that map to one Slurm name give an
// error and no file.
func Tree(tree *topology.Tree) ([]byte, error) {
	p, err := prepare(tree)
	if err != nil {
		return nil, fmt.Errorf("topology.conf (tree): %w", err)
	}
	t, names := p.tree, p.names
	var b strings.Builder
	fmt.Fprintf(&b, "# topology.conf for TopologyPlugin=topology/tree, written by fabricmap: %d switches, %d nodes\n", len(t.Domains), nodeCount(t))
	b.WriteString(leftOutComment(p.left))
	for _, name := range bottomUp(t) {
		d := t.Domains[name]
		fmt.Fprintf(&b, "SwitchName=%s", names[name])
		if len(d.Children) > 0 {
			children := make([]string, len(d.Children))
			for i, c := range d.Children {
				children[i] = names[c]
			}
			fmt.Fprintf(&b, " Switches=%s", Hostlist(children))
		}
		if len(d.Nodes) > 0 {
			fmt.Fprintf(&b, " Nodes=%s", Hostlist(d.Nodes))
		}
		b.WriteByte('\n')
	}
	return []byte(b.String()), nil
}

// prepared is a tree ready to be written for Slurm.
type prepared struct {
	// tree is the tree Slurm gets: the one given without the hosts left out (slurmTree).
	tree *topology.Tree
	// names are its domains' Slurm names (switchNames).
	names map[string]string
	// left are the hosts left out (Unidentified).
	left []string
}

// prepare checks t (checkTree) and returns what the Slurm files are written from.
func prepare(t *topology.Tree) (prepared, error) {
	if err := checkTree(t); err != nil {
		return prepared{}, err
	}
	st, left, err := slurmTree(t)
	if err != nil {
		return prepared{}, err
	}
	names, err := switchNames(st)
	if err != nil {
		return prepared{}, err
	}
	return prepared{tree: st, names: names, left: left}, nil
}

// bottomUp orders the domains by tier, lowest first, then by name.
func bottomUp(t *topology.Tree) []string {
	out := make([]string, 0, len(t.Domains))
	for n := range t.Domains {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(t.Domains[a].Tier, t.Domains[b].Tier), strings.Compare(a, b))
	})
	return out
}

// nodeCount is the number of nodes the tree places.
func nodeCount(t *topology.Tree) int {
	n := 0
	for _, d := range t.Domains {
		n += len(d.Nodes)
	}
	return n
}
