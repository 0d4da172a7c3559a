package aws

import (
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

func TestNVLinkFamily(t *testing.T) {
	for typ, want := range map[string]bool{
		"p6e-gb200.36xlarge": true, "trn2u.48xlarge": false, "p6-b200.48xlarge": false, "p5.48xlarge": false, "p6e-gb200": true, "": false,
	} {
		if got := nvlinkFamily(typ); got != want {
			t.Errorf("nvlinkFamily(%q) = %v, want %v", typ, got, want)
		}
	}
}

// TestPlaceMixedDepths: layers count from the top (layer 1), so an instance of four layers nests under its
// third-layer node beside the three-layer instances of that node, and its spine keeps it; the three-layer
// instances of a top that also has four-layer ones get a leaf of their own below their node ("-direct"), so
// that every branch of the top is as tall. Tops of one depth are built as they were. The tree is
// topology.Build's of the evidence, written as Tree.Outline writes it.
func TestPlaceMixedDepths(t *testing.T) {
	p5 := func(id string, nn ...string) types.InstanceTopology {
		return types.InstanceTopology{InstanceId: awssdk.String(id), InstanceType: awssdk.String("p5.48xlarge"), NetworkNodes: nn}
	}
	b200 := func(id string, nn ...string) types.InstanceTopology {
		return types.InstanceTopology{InstanceId: awssdk.String(id), InstanceType: awssdk.String("p6-b200.48xlarge"), NetworkNodes: nn}
	}
	for _, tc := range []struct {
		name      string
		instances []types.InstanceTopology
		tree      []string
		links     []string
	}{{
		name: "three and four layers under one spine",
		instances: []types.InstanceTopology{
			p5("i-0000000a", "nn-t1", "nn-m1", "nn-b1"),
			p5("i-0000000b", "nn-t1", "nn-m2", "nn-b3"),
			b200("i-0000000c", "nn-t1", "nn-m1", "nn-b2", "nn-x1"),
			b200("i-0000000d", "nn-t1", "nn-m1", "nn-b2", "nn-x2"),
		},
		tree: []string{
			"fabric(4)nn-m1,nn-m2",
			"nn-b1(2)nn-b1-direct", "nn-b1-direct(1)n-a", "nn-b2(2)nn-x1,nn-x2", "nn-b3(2)nn-b3-direct", "nn-b3-direct(1)n-b",
			"nn-m1(3)nn-b1,nn-b2", "nn-m2(3)nn-b3",
			"nn-x1(1)n-c", "nn-x2(1)n-d",
		},
		links: []string{"nn-m1->nn-t1", "nn-m2->nn-t1", "nn-b1->nn-m1", "nn-b2->nn-m1", "nn-b3->nn-m2",
			"nn-b1-direct->nn-b1", "nn-b3-direct->nn-b3", "nn-x1->nn-b2", "nn-x2->nn-b2"},
	}, {
		name: "three and four layers under one third-layer node",
		instances: []types.InstanceTopology{
			p5("i-0000000a", "nn-t1", "nn-m1", "nn-b1"),
			p5("i-0000000b", "nn-t1", "nn-m1", "nn-b1"),
			b200("i-0000000c", "nn-t1", "nn-m1", "nn-b1", "nn-x1"),
			b200("i-0000000d", "nn-t1", "nn-m2", "nn-b2", "nn-x2"),
		},
		tree: []string{
			"fabric(4)nn-m1,nn-m2",
			"nn-b1(2)nn-b1-direct,nn-x1", "nn-b1-direct(1)n-a,n-b", "nn-b2(2)nn-x2",
			"nn-m1(3)nn-b1", "nn-m2(3)nn-b2",
			"nn-x1(1)n-c", "nn-x2(1)n-d",
		},
		links: []string{"nn-m1->nn-t1", "nn-m2->nn-t1", "nn-b1->nn-m1", "nn-b2->nn-m2",
			"nn-b1-direct->nn-b1", "nn-x1->nn-b1", "nn-x2->nn-b2"},
	}, {
		name: "three layers only: as before",
		instances: []types.InstanceTopology{
			p5("i-0000000a", "nn-t1", "nn-m1", "nn-b1"),
			p5("i-0000000b", "nn-t1", "nn-m1", "nn-b2"),
			p5("i-0000000c", "nn-t1", "nn-m2", "nn-b3"),
		},
		tree:  []string{"fabric(3)nn-m1,nn-m2", "nn-b1(1)n-a", "nn-b2(1)n-b", "nn-b3(1)n-c", "nn-m1(2)nn-b1,nn-b2", "nn-m2(2)nn-b3"},
		links: []string{"nn-m1->nn-t1", "nn-m2->nn-t1", "nn-b1->nn-m1", "nn-b2->nn-m1", "nn-b3->nn-m2"},
	}, {
		name: "each depth under its own top: each top as before",
		instances: []types.InstanceTopology{
			p5("i-0000000a", "nn-t1", "nn-m1", "nn-b1"),
			p5("i-0000000b", "nn-t1", "nn-m2", "nn-b2"),
			b200("i-0000000c", "nn-t3", "nn-m5", "nn-b4", "nn-x1"),
			b200("i-0000000d", "nn-t3", "nn-m6", "nn-b5", "nn-x2"),
		},
		tree: []string{
			"fabric(5)nn-t1,nn-t3",
			"nn-b1(1)n-a", "nn-b2(1)n-b", "nn-b4(2)nn-x1", "nn-b5(2)nn-x2",
			"nn-m1(2)nn-b1", "nn-m2(2)nn-b2", "nn-m5(3)nn-b4", "nn-m6(3)nn-b5",
			"nn-t1(3)nn-m1,nn-m2", "nn-t3(4)nn-m5,nn-m6",
			"nn-x1(1)n-c", "nn-x2(1)n-d",
		},
		links: []string{"nn-m1->nn-t1", "nn-m2->nn-t1", "nn-m5->nn-t3", "nn-m6->nn-t3", "nn-b1->nn-m1", "nn-b2->nn-m2",
			"nn-b4->nn-m5", "nn-b5->nn-m6", "nn-x1->nn-b4", "nn-x2->nn-b5"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var ns []instanceNode
			for i, in := range tc.instances {
				ns = append(ns, instanceNode{node: nodes.Node{Name: "n-" + string(rune('a'+i))}, instance: *in.InstanceId})
			}
			p := place(ns, tc.instances, nil)
			if len(p.left) > 0 || len(p.problems) > 0 {
				t.Fatalf("left out %v, problems %v", p.left, p.problems)
			}
			tree, problems := topology.Build(p.in, topology.BuildOptions{})
			if len(problems) > 0 {
				t.Errorf("Build's problems: %v", problems)
			}
			if diff := cmp.Diff(tc.tree, tree.Outline()); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			var links []string
			for _, e := range p.in.SwitchLinks {
				links = append(links, e.AName+"->"+e.BName)
			}
			if diff := cmp.Diff(tc.links, links, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("switch links (-want +got):\n%s", diff)
			}
			for _, n := range p.in.Nodes {
				if n.Source != Name {
					t.Errorf("node %s from %q, want %q", n.Node, n.Source, Name)
				}
			}
		})
	}
}

// TestPlaceLeavesOut: a Node whose instance the answer lacks is left out with the reason; the path of a
// four-layer instance is its four layers, top first.
func TestPlaceLeavesOut(t *testing.T) {
	p := place([]instanceNode{{node: nodes.Node{Name: "b200"}, instance: "i-0000000b"}, {node: nodes.Node{Name: "missing"}, instance: "i-0000000d"}},
		[]types.InstanceTopology{{InstanceId: awssdk.String("i-0000000b"), InstanceType: awssdk.String("p6-b200.48xlarge"),
			NetworkNodes: []string{"nn-t1", "nn-m1", "nn-b2", "nn-x1"}}}, nil)
	if diff := cmp.Diff([]unplaced{{"missing", "instance i-0000000d not in the answer"}}, p.left, cmp.AllowUnexported(unplaced{})); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
	want := topology.SwitchID("label", LayerKey(1)+"=nn-t1,"+LayerKey(2)+"=nn-m1,"+LayerKey(3)+"=nn-b2,"+LayerKey(4)+"=nn-x1")
	if len(p.in.Nodes) != 1 || p.in.Nodes[0].Links[0].SwitchID != want {
		t.Errorf("evidence %+v, want b200's leaf the path of its four layers", p.in.Nodes)
	}
}
