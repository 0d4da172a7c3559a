package aws

import (
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

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

// TestPlaceMixedDepths: instances of three and four layers under one top network node share its
// pseudo-switches (a layer counts from the top); every layer's link is in the evidence once.
func TestPlaceMixedDepths(t *testing.T) {
	node := func(name, id string) instanceNode {
		return instanceNode{node: nodes.Node{Name: name}, instance: id}
	}
	inst := func(id, typ string, nn ...string) types.InstanceTopology {
		return types.InstanceTopology{InstanceId: awssdk.String(id), InstanceType: awssdk.String(typ), NetworkNodes: nn}
	}
	p := place(
		[]instanceNode{node("p5", "i-0000000a"), node("b200-1", "i-0000000b"), node("b200-2", "i-0000000c"), node("missing", "i-0000000d")},
		[]types.InstanceTopology{
			inst("i-0000000a", "p5.48xlarge", "nn-t1", "nn-m1", "nn-b1"),
			inst("i-0000000b", "p6-b200.48xlarge", "nn-t1", "nn-m1", "nn-b2", "nn-x1"),
			inst("i-0000000c", "p6-b200.48xlarge", "nn-t1", "nn-m1", "nn-b2", "nn-x2"),
		}, nil)
	var links []string
	for _, e := range p.in.SwitchLinks {
		links = append(links, e.AName+"->"+e.BName)
	}
	if diff := cmp.Diff([]string{"nn-m1->nn-t1", "nn-b1->nn-m1", "nn-b2->nn-m1", "nn-x1->nn-b2", "nn-x2->nn-b2"}, links); diff != "" {
		t.Errorf("switch links (-want +got):\n%s", diff)
	}
	leaves := map[string]string{}
	for _, n := range p.in.Nodes {
		leaves[n.Node] = n.Links[0].SwitchName
		if n.Source != Name {
			t.Errorf("node %s from %q, want %q", n.Node, n.Source, Name)
		}
	}
	if diff := cmp.Diff(map[string]string{"p5": "nn-b1", "b200-1": "nn-x1", "b200-2": "nn-x2"}, leaves); diff != "" {
		t.Errorf("leaves (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]unplaced{{"missing", "instance i-0000000d not in the answer"}}, p.left, cmp.AllowUnexported(unplaced{})); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
	if p.in.Nodes[0].Links[0].SwitchID != topology.SwitchID("label", LayerKey(1)+"=nn-t1,"+LayerKey(2)+"=nn-m1,"+LayerKey(3)+"=nn-b2,"+LayerKey(4)+"=nn-x1") {
		t.Errorf("b200-1's leaf is %q, want the path of its four layers", p.in.Nodes[0].Links[0].SwitchID)
	}
}
