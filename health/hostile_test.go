package health_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/health"
)

// hostileNode is the node whose report misleads in TestOneReportJudgesOnlyItsNode.
const hostileNode = "hostile"

// railLeaf is the leaf of rail i in the eight-rail unit: sw:r0 … sw:r7.
func railLeaf(i int) string { return fmt.Sprintf("sw:r%d", i) }

// dgxHost is a host of an eight-rail unit: mlx5_i on rail i, cabled to rail i's leaf.
func dgxHost(node string) health.NodePorts {
	np := health.NodePorts{Node: node}
	for i := range 8 {
		np.Ports = append(np.Ports, port(fmt.Sprintf("mlx5_%d", i), i, railLeaf(i)))
	}
	return np
}

// dgxUnit is n hosts of an eight-rail unit, dgx-01 … dgx-0n, cabled right.
func dgxUnit(n int) []health.NodePorts {
	var nodes []health.NodePorts
	for i := 1; i <= n; i++ {
		nodes = append(nodes, dgxHost(fmt.Sprintf("dgx-%02d", i)))
	}
	return nodes
}

// extraPorts are n more ports for a report, mlx5_<first> onwards (each its own device, port 1), made by mk.
func extraPorts(first, n int, mk func(device string) health.Port) []health.Port {
	var out []health.Port
	for i := range n {
		out = append(out, mk(fmt.Sprintf("mlx5_%d", first+i)))
	}
	return out
}

// copies are n copies of p: one device name listed again and again, as a report can list it.
func copies(n int, p health.Port) []health.Port {
	out := make([]health.Port, n)
	for i := range out {
		out[i] = p
	}
	return out
}

// ninePortsOfRail5 are eight devices of rail 5, mlx5_i cabled to rail i's leaf, each with nine ports.
func ninePortsOfRail5() []health.Port {
	var out []health.Port
	for i := range 8 {
		for n := int32(1); n <= 9; n++ {
			p := port(fmt.Sprintf("mlx5_%d", i), 5, railLeaf(i))
			p.Number = n
			out = append(out, p)
		}
	}
	return out
}

// TestOneReportJudgesOnlyItsNode adds one node whose report piles up ports (twenty HCAs of one rail on one
// leaf, ports far faster or slower than the fleet's, a port listed again and again, up or down) to a fleet of
// honest nodes. Each node counts once, so the findings about the honest nodes, and which of them are degraded,
// are exactly those of the fleet without it: one node's report produces findings about that node alone.
func TestOneReportJudgesOnlyItsNode(t *testing.T) {
	withSlowH3 := railUnit(map[string]health.NodePorts{
		"h3": {Node: "h3", Ports: []health.Port{port("mlx5_0", 0, leafR0), with(port("mlx5_1", 1, leafR1), rate(rate200))}},
	})
	var peers, unusedByDesign []health.NodePorts // u1 … u5, u1's mlx5_1 down; d1 … d3 with mlx5_5 down by design
	for _, n := range []string{"u1", "u2", "u3", "u4", "u5"} {
		np := health.NodePorts{Node: n, Ports: []health.Port{port("mlx5_0", 0, leaf1), port("mlx5_1", 1, leaf1)}}
		if n == "u1" {
			np.Ports[1] = with(np.Ports[1], condition("Down", "PortDown", ""))
		}
		peers = append(peers, np)
	}
	for _, n := range []string{"d1", "d2", "d3"} {
		unusedByDesign = append(unusedByDesign, health.NodePorts{Node: n, Ports: []health.Port{
			port("mlx5_0", 0, leaf1), with(port("mlx5_5", 5, leaf1), condition("Down", "PortDown", "")),
		}})
	}
	rail5OnR1 := func(device string) health.Port { return port(device, 5, railLeaf(1)) }
	fast := func(p health.Port) health.Port { return with(p, rate(800)) }
	for _, tc := range []struct {
		name    string
		honest  []health.NodePorts
		hostile []health.NodePorts // the hostile node's entries: one, or the same node listed again
		// wantHonest are the findings about honest nodes, as "<kind> <node> <port>", with the hostile node or
		// without it.
		wantHonest []string
		// wantHostile counts the findings about the hostile node by kind.
		wantHostile map[health.Kind]int
	}{{
		name:   "twenty more rail-5 HCAs cabled to leaf r1 in a unit of nine: the leaf still serves rail 1",
		honest: dgxUnit(8),
		hostile: []health.NodePorts{{Node: hostileNode,
			Ports: append(dgxHost(hostileNode).Ports, extraPorts(8, 20, rail5OnR1)...)}},
		wantHostile: map[health.Kind]int{health.KindMiscabledRail: 20},
	}, {
		name:        "an HCA of rail 5 on every leaf, each with nine ports: no leaf changes rail",
		honest:      dgxUnit(8),
		hostile:     []health.NodePorts{{Node: hostileNode, Ports: ninePortsOfRail5()}},
		wantHostile: map[health.Kind]int{health.KindMiscabledRail: 7 * 9}, // all but the nine on rail 5's own leaf
	}, {
		name:   "the same node listed three times still votes once",
		honest: dgxUnit(2),
		hostile: []health.NodePorts{
			{Node: hostileNode, Ports: []health.Port{port("mlx5_8", 5, railLeaf(1))}},
			{Node: hostileNode, Ports: []health.Port{port("mlx5_9", 5, railLeaf(1))}},
			{Node: hostileNode, Ports: []health.Port{port("mlx5_10", 5, railLeaf(1))}},
		},
		wantHostile: map[health.Kind]int{health.KindMiscabledRail: 3},
	}, {
		name:   "ports listed again and again at 800 Gb/s do not raise the tier's rate",
		honest: railUnit(nil),
		hostile: []health.NodePorts{{Node: hostileNode, Ports: slices.Concat(
			copies(10, fast(port("mlx5_0", 0, leafR0))), copies(10, fast(port("mlx5_1", 1, leafR1))))}},
	}, {
		name:   "beside a single honest node, a node at 800 Gb/s is no reference for it",
		honest: railUnit(nil)[:1],
		hostile: []health.NodePorts{{Node: hostileNode, Ports: slices.Concat(
			copies(10, fast(port("mlx5_0", 0, leafR0))), copies(10, fast(port("mlx5_1", 1, leafR1))))}},
	}, {
		name:        "ports listed again and again at 200 Gb/s do not hide a slow port of another node",
		honest:      withSlowH3,
		hostile:     []health.NodePorts{{Node: hostileNode, Ports: copies(20, with(port("mlx5_1", 1, leafR1), rate(rate200)))}},
		wantHonest:  []string{"degraded-link h3 mlx5_1/1"},
		wantHostile: map[health.Kind]int{health.KindDegradedLink: 1}, // its own port is slow: one name, one finding
	}, {
		name:        "a port listed again and again down does not make another node's failed port unused",
		honest:      peers,
		hostile:     []health.NodePorts{{Node: hostileNode, Ports: copies(10, with(port("mlx5_1", 1, leaf1), condition("Down", "PortDown", "")))}},
		wantHonest:  []string{"link-down u1 mlx5_1/1"},
		wantHostile: map[health.Kind]int{health.KindLinkDown: 1}, // one port name, though listed ten times
	}, {
		name:    "a port listed again and again up does not turn a port unused by design into failures",
		honest:  unusedByDesign,
		hostile: []health.NodePorts{{Node: hostileNode, Ports: copies(10, port("mlx5_5", 5, leaf1))}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			alone := health.Assess(health.Input{Tree: treeOf(t, tc.honest, nil), Nodes: tc.honest})
			all := slices.Concat(tc.honest, tc.hostile)
			merged := health.NodePorts{Node: hostileNode} // the tree takes one entry per node, as the reports give it
			for _, np := range tc.hostile {
				merged.Ports = append(merged.Ports, np.Ports...)
			}
			tree := treeOf(t, append(slices.Clone(tc.honest), merged), nil)
			got := health.Assess(health.Input{Tree: tree, Nodes: all})
			for _, c := range []struct {
				what      string
				want, got any
			}{
				{"findings about honest nodes without the hostile one", tc.wantHonest, honestFindings(alone)},
				{"findings about honest nodes with the hostile one", tc.wantHonest, honestFindings(got)},
				{"honest nodes judged degraded or down, without the hostile one (-) and with it (+)", honestDegraded(alone), honestDegraded(got)},
				{"findings about the hostile node by kind", tc.wantHostile, hostileKinds(got)},
			} {
				if diff := cmp.Diff(c.want, c.got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.what, diff)
				}
			}
			if _, degraded := got.DegradedNodes[hostileNode]; degraded != (len(tc.wantHostile) > 0) {
				t.Errorf("the hostile node degraded: %v, want %v", degraded, len(tc.wantHostile) > 0)
			}
		})
	}
}

// honestFindings are the findings about nodes other than the hostile one, as "<kind> <node> <port>"; nil when
// there is none.
func honestFindings(a health.Assessment) []string {
	var out []string
	for _, f := range a.Findings {
		if f.Node != "" && f.Node != hostileNode {
			out = append(out, fmt.Sprintf("%s %s %s", f.Kind, f.Node, f.Port))
		}
	}
	return out
}

// honestDegraded are the nodes other than the hostile one that a judged degraded or down.
func honestDegraded(a health.Assessment) map[string]string {
	out := map[string]string{}
	for n, c := range a.DegradedNodes {
		if n != hostileNode {
			out[n] = c
		}
	}
	return out
}

// hostileKinds counts the findings about the hostile node by kind; nil when there is none.
func hostileKinds(a health.Assessment) map[health.Kind]int {
	var out map[health.Kind]int
	for _, f := range a.Findings {
		if f.Node == hostileNode {
			if out == nil {
				out = map[health.Kind]int{}
			}
			out[f.Kind]++
		}
	}
	return out
}
