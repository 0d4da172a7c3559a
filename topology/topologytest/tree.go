// Package topologytest builds topology trees for tests from a compact text form.
package topologytest

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/topology"
)

// Tree builds a tree from lines "name/tier[/tierName]: member member …"; members that are not defined as
// domains are nodes.
func Tree(t testing.TB, lines ...string) *topology.Tree {
	t.Helper()
	tr := topology.NewTree()
	members := map[string][]string{}
	for _, l := range lines {
		head, rest, _ := strings.Cut(l, ":")
		parts := strings.Split(strings.TrimSpace(head), "/")
		tier, err := strconv.Atoi(parts[1])
		if err != nil {
			t.Fatalf("bad line %q", l)
		}
		d := &topology.Domain{Name: parts[0], Tier: tier}
		if len(parts) > 2 {
			d.TierName = parts[2]
		}
		if err := tr.Add(d); err != nil {
			t.Fatal(err)
		}
		members[d.Name] = strings.Fields(rest)
	}
	for name, ms := range members {
		d := tr.Domains[name]
		for _, m := range ms {
			if c, ok := tr.Domains[m]; ok {
				d.Children = append(d.Children, m)
				c.Parent = name
			} else {
				d.Nodes = append(d.Nodes, m)
			}
		}
		slices.Sort(d.Children)
		slices.Sort(d.Nodes)
	}
	return tr
}
