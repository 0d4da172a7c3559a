package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/placement"
)

// TestInTree places gangs as kube-scheduler 1.36's TopologyPlacement does on a fabric of 2 spines of 2 leaves
// of 2 nodes (8 GPUs each), with leaf-0000 half used: one domain of the key, the emptiest in share among those
// that hold the gang, pods spread to the emptiest nodes; pending when no single domain of the key holds it.
func TestInTree(t *testing.T) {
	tr, nodes, err := FabricSpec{Nodes: 8, NodesPerLeaf: 2, LeavesPerSpine: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f, err := placement.NewFabric(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		tier    string
		pods    int
		gpus    int64
		want    []string
		wantErr bool
	}{
		{name: "leaf key: the emptiest leaf, not the first that fits", tier: "leaf", pods: 1, gpus: 4, want: []string{"node-000002"}},
		{name: "leaf key: half-node pods spread over the leaf's nodes", tier: "leaf", pods: 2, gpus: 4, want: []string{"node-000002", "node-000003"}},
		{name: "leaf key: a gang no leaf holds stays pending", tier: "leaf", pods: 3, gpus: 8, wantErr: true},
		{name: "spine key: the emptier spine", tier: "spine", pods: 3, gpus: 8, want: []string{"node-000004", "node-000005", "node-000006"}},
		{name: "spine key: larger than any spine", tier: "spine", pods: 5, gpus: 8, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := placement.NewCluster(f, nodes, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Bind(&placement.Plan{Ranks: []string{"node-000000"}}, placement.Gang{Name: "busy", Pods: 1, Request: placement.Resources{GPU: 8}}); err != nil {
				t.Fatal(err)
			}
			p, err := NewInTree(f, tc.tier, nodes)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Place(c, placement.Gang{Name: "g", Pods: tc.pods, Request: placement.Resources{GPU: tc.gpus}})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Place: error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ranks (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := NewInTree(f, "galaxy", nodes); err == nil {
		t.Error("NewInTree with a tier the fabric lacks: no error")
	}
}
