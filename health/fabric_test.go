package health_test

import (
	"slices"
	"testing"

	"github.com/fabricmap/fabricmap/health"
	"github.com/fabricmap/fabricmap/topology"
)

// The tests' switches. Their identifiers are what the tree names domains after: "sw-r0-rails", "sw-l1", …
const (
	leafR0, leafR1   = "sw:r0", "sw:r1" // the two rail leaves of a rail-optimised unit
	leaf1, leaf2     = "sw:l1", "sw:l2" // two single-switch leaves
	spine1, spine2   = "sw:s1", "sw:s2"
	storageLeaf      = "sw:storage"
	rate400, rate200 = int32(400), int32(200)
)

// port is a healthy 400 Gb/s 4X compute port of rail rail cabled to sw.
func port(device string, rail int, sw string) health.Port {
	return health.Port{Device: device, Number: 1, Rail: rail, Switch: sw, RateGbps: rate400, Width: "4X", Condition: "Healthy"}
}

// with returns p changed by each of edits.
func with(p health.Port, edits ...func(*health.Port)) health.Port {
	for _, e := range edits {
		e(&p)
	}
	return p
}

func rate(r int32) func(*health.Port)   { return func(p *health.Port) { p.RateGbps = r } }
func width(w string) func(*health.Port) { return func(p *health.Port) { p.Width = w } }
func storage(p *health.Port)            { p.Storage = true }
func condition(c, reason, msg string) func(*health.Port) {
	return func(p *health.Port) { p.Condition, p.Reason, p.Message = c, reason, msg }
}

// railHost is a host of the rail unit: mlx5_0 on rail 0 and mlx5_1 on rail 1, cabled to the leaves given.
func railHost(node, rail0Leaf, rail1Leaf string) health.NodePorts {
	return health.NodePorts{Node: node, Ports: []health.Port{port("mlx5_0", 0, rail0Leaf), port("mlx5_1", 1, rail1Leaf)}}
}

// railUnit is four hosts on two rail leaves, cabled right but for edits (by node).
func railUnit(edits map[string]health.NodePorts) []health.NodePorts {
	var nodes []health.NodePorts
	for _, n := range []string{"h1", "h2", "h3", "h4"} {
		np := railHost(n, leafR0, leafR1)
		if e, ok := edits[n]; ok {
			np = e
		}
		nodes = append(nodes, np)
	}
	return nodes
}

// treeOf infers the tree from the ports' switches and the switch links, as the aggregator does from the
// reports and a capture.
func treeOf(t testing.TB, nodes []health.NodePorts, links []health.Link) *topology.Tree {
	t.Helper()
	return treeWithNVLink(t, nodes, links, nil)
}

// treeWithNVLink is treeOf with the NVLink domains of nodes (by node) and accelerator domains on.
func treeWithNVLink(t testing.TB, nodes []health.NodePorts, links []health.Link, nvlink map[string]string) *topology.Tree {
	t.Helper()
	var in topology.Input
	for _, np := range nodes {
		e := topology.NodeEvidence{Node: np.Node, Source: "reports", SelfReported: true, NVLinkDomain: nvlink[np.Node]}
		for _, p := range np.Ports {
			e.Links = append(e.Links, topology.SwitchLink{SwitchID: p.Switch, Storage: p.Storage})
		}
		in.Nodes = append(in.Nodes, e)
	}
	for _, l := range links {
		in.SwitchLinks = append(in.SwitchLinks, topology.SwitchEdge{A: l.From, B: l.To, Source: l.Source})
	}
	tree, problems := topology.Build(in, topology.BuildOptions{AcceleratorDomains: nvlink != nil})
	if len(problems) > 0 {
		t.Fatalf("building the test tree: %v", problems)
	}
	return tree
}

// rename renames domain from to to in t, as a plan written with other names would have it.
func rename(t *topology.Tree, from, to string) {
	d := t.Domains[from]
	delete(t.Domains, from)
	d.Name = to
	t.Domains[to] = d
	for _, o := range t.Domains {
		if o.Parent == from {
			o.Parent = to
		}
		if i := slices.Index(o.Children, from); i >= 0 {
			o.Children[i] = to
			slices.Sort(o.Children)
		}
	}
}
