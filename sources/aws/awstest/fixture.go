package awstest

import (
	"github.com/fabricmap/fabricmap/sources/nodes"
)

// Region is the region of Fixture's instances.
const Region = "us-east-1"

// Capacity blocks of Fixture: two p6e-gb200 UltraServers and a trn2u one.
const (
	BlockGB200A = "cb-0a1b2c3d4e5f60001"
	BlockGB200B = "cb-0a1b2c3d4e5f60002"
	BlockTrn2   = "cb-0a1b2c3d4e5f60003"
)

// FixtureNode is a Node of Fixture and the instance it runs on.
type FixtureNode struct {
	// Name is the Node's name.
	Name string
	// Instance is the instance.
	Instance Instance
}

// Node returns the Kubernetes Node on the instance: its providerID and the region and zone labels the cloud
// provider sets.
func (f FixtureNode) Node() nodes.Node {
	return nodes.Node{Name: f.Name, ProviderID: f.Instance.ProviderID(), Labels: map[string]string{
		"topology.kubernetes.io/region": Region, "topology.kubernetes.io/zone": f.Instance.Zone,
		"node.kubernetes.io/instance-type": f.Instance.Type,
	}}
}

// Fixture is a small cluster of several instance families in Region: p5.48xlarge (three network layers) under
// nn-t1; p6-b200.48xlarge (four layers) under nn-t3; two p6e-gb200 UltraServers (three layers, in the Dallas
// Local Zone) and a trn2u UltraServer under nn-t2; and an m5.large, a type without topology. Layer 2 is nn-m*,
// layer 3 nn-b*, layer 4 nn-x*.
func Fixture() []FixtureNode {
	const zone, zoneID, lz, lzID = "us-east-1a", "use1-az1", "us-east-1-dfw-2a", "use1-dfw2-az1"
	inst := func(id, typ, z, zid, block string, nn ...string) Instance {
		return Instance{ID: id, Type: typ, Zone: z, ZoneID: zid, CapacityBlock: block, NetworkNodes: nn}
	}
	p5 := func(id string, nn ...string) Instance { return inst(id, "p5.48xlarge", zone, zoneID, "", nn...) }
	b200 := func(id string, nn ...string) Instance { return inst(id, "p6-b200.48xlarge", zone, zoneID, "", nn...) }
	gb := func(id, block string) Instance {
		return inst(id, "p6e-gb200.36xlarge", lz, lzID, block, "nn-t2", "nn-m3", "nn-b5")
	}
	return []FixtureNode{
		{"p5-1", p5("i-0000000000000a001", "nn-t1", "nn-m1", "nn-b1")},
		{"p5-2", p5("i-0000000000000a002", "nn-t1", "nn-m1", "nn-b1")},
		{"p5-3", p5("i-0000000000000a003", "nn-t1", "nn-m1", "nn-b2")},
		{"p5-4", p5("i-0000000000000a004", "nn-t1", "nn-m2", "nn-b3")},
		{"b200-1", b200("i-0000000000000b001", "nn-t3", "nn-m5", "nn-b4", "nn-x1")},
		{"b200-2", b200("i-0000000000000b002", "nn-t3", "nn-m5", "nn-b4", "nn-x1")},
		{"b200-3", b200("i-0000000000000b003", "nn-t3", "nn-m5", "nn-b4", "nn-x2")},
		{"gb-1", gb("i-0000000000000c001", BlockGB200A)},
		{"gb-2", gb("i-0000000000000c002", BlockGB200A)},
		{"gb-3", gb("i-0000000000000c003", BlockGB200B)},
		{"gb-4", gb("i-0000000000000c004", BlockGB200B)},
		{"trn-1", inst("i-0000000000000d001", "trn2u.48xlarge", zone, zoneID, BlockTrn2, "nn-t2", "nn-m4", "nn-b6")},
		{"trn-2", inst("i-0000000000000d002", "trn2u.48xlarge", zone, zoneID, BlockTrn2, "nn-t2", "nn-m4", "nn-b6")},
		{"cpu-1", inst("i-0000000000000e001", "m5.large", zone, zoneID, "")},
	}
}

// Instances returns the instances of fixture.
func Instances(fixture []FixtureNode) []Instance {
	out := make([]Instance, len(fixture))
	for i, f := range fixture {
		out[i] = f.Instance
	}
	return out
}

// Nodes returns the Nodes of fixture.
func Nodes(fixture []FixtureNode) []nodes.Node {
	out := make([]nodes.Node, len(fixture))
	for i, f := range fixture {
		out[i] = f.Node()
	}
	return out
}
