package slurm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/topology"
)

// A host the tree knows only by its HCA's GUID (ib.GUIDNodeName, "guid-<16 hex digits>": an adapter that kept
// its default description and that no node's report explains) is no Kubernetes node and no Slurm node: no
// slurm.conf defines it, and slurmctld warns about every topology.conf line that names a node it does not
// know. So the Slurm files leave such hosts out, and say so in a comment line (leftOutComment); the outputs
// registry tells its caller of each (Unidentified).

// maxLeftOutNamed is how many of the hosts left out the comment line names.
const maxLeftOutNamed = 10

// Unidentified returns the hosts of the tree that the Slurm files leave out because the tree knows them only
// by their HCA's GUID (ib.IsGUIDNodeName), sorted. Nil for a nil tree.
func Unidentified(t *topology.Tree) []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, d := range t.Domains {
		for _, n := range d.Nodes {
			if ib.IsGUIDNodeName(n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// slurmTree returns the tree the Slurm files are written from: t without its unidentified hosts, and without
// the domains that then hold nothing (a leaf of only such hosts, and a switch above only such leaves), and the
// hosts it left out (Unidentified). It returns t itself when it leaves nothing out. t must be valid; the
// result is, unless every host is unidentified (an error: no Slurm node to write).
func slurmTree(t *topology.Tree) (*topology.Tree, []string, error) {
	left := Unidentified(t)
	if len(left) == 0 {
		return t, nil, nil
	}
	out := topology.NewTree()
	out.Unplaced = t.Unplaced
	var keep func(name string) bool // copies the domain into out when it holds a Slurm node; reports whether it did
	keep = func(name string) bool {
		d := t.Domains[name]
		c := *d
		c.Nodes = slices.DeleteFunc(slices.Clone(d.Nodes), ib.IsGUIDNodeName)
		c.Children = nil
		for _, ch := range d.Children {
			if keep(ch) {
				c.Children = append(c.Children, ch)
			}
		}
		if len(c.Nodes) == 0 && len(c.Children) == 0 {
			return false
		}
		out.Domains[name] = &c
		return true
	}
	for _, r := range t.Roots() {
		keep(r)
	}
	if len(out.Domains) == 0 {
		return nil, left, fmt.Errorf("every host of the tree (%d) is known only by its HCA GUID (%s): no Slurm node to write", len(left), namedFew(left))
	}
	return out, left, nil
}

// leftOutComment is the comment line that says which hosts a Slurm file leaves out; "" when none.
func leftOutComment(left []string) string {
	if len(left) == 0 {
		return ""
	}
	return fmt.Sprintf("# left out: %d hosts known only by their HCA GUID (%s), which no slurm.conf defines\n", len(left), namedFew(left))
}

// namedFew lists the first maxLeftOutNamed names, comma-separated, and says how many more there are.
func namedFew(names []string) string {
	s := strings.Join(names[:min(len(names), maxLeftOutNamed)], ", ")
	if more := len(names) - maxLeftOutNamed; more > 0 {
		s += fmt.Sprintf(", … and %d more", more)
	}
	return s
}
