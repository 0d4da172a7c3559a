package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWithNodes updates a cluster by copy: the copy holds what NewCluster builds from the updated nodes (free
// resources, the largest allocatable a gang is checked against, the plan) and the cluster copied is unchanged.
func TestWithNodes(t *testing.T) {
	f, err := NewFabric(seedTree(t))
	if err != nil {
		t.Fatal(err)
	}
	base := func() []Node {
		var out []Node
		for _, n := range f.Nodes() {
			out = append(out, Node{Name: n, Allocatable: Resources{gpu: 8, "cpu": 64}, Used: Resources{gpu: 2}})
		}
		return out
	}
	gang := Gang{Name: "g", Pods: 4, Request: Resources{gpu: 8}}
	for _, tc := range []struct {
		name    string
		changed []Node
		ignored []string
	}{
		{name: "nothing changed"},
		{name: "a node's usage rises", changed: []Node{{Name: "n00", Allocatable: Resources{gpu: 8, "cpu": 64}, Used: Resources{gpu: 8}}}},
		{name: "a node turns unavailable", changed: []Node{{Name: "n05", Allocatable: Resources{gpu: 8, "cpu": 64}, Unavailable: true}}},
		{name: "a unit's nodes free, one gets a new resource", changed: []Node{
			{Name: "n08", Allocatable: Resources{gpu: 8, "cpu": 64, "rdma/hca": 1}},
			{Name: "n09", Allocatable: Resources{gpu: 8, "cpu": 64}}, {Name: "n10", Allocatable: Resources{gpu: 8, "cpu": 64}},
			{Name: "n11", Allocatable: Resources{gpu: 8, "cpu": 64}}}},
		{name: "every node shrinks to 4 GPUs: none holds a pod", changed: func() []Node {
			out := base()
			for i := range out {
				out[i].Allocatable = Resources{gpu: 4}
			}
			return out
		}()},
		{name: "a node not in the fabric", changed: []Node{{Name: "elsewhere", Allocatable: Resources{gpu: 8}}}, ignored: []string{"elsewhere"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := NewCluster(f, base(), nil)
			if err != nil {
				t.Fatal(err)
			}
			before := state(c, gang)
			got, ignored, err := c.WithNodes(tc.changed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.ignored, ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
			nodes := base()
			for _, ch := range tc.changed {
				for i := range nodes {
					if nodes[i].Name == ch.Name {
						nodes[i] = ch
					}
				}
			}
			want, _, err := NewCluster(f, nodes, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(state(want, gang), state(got, gang)); diff != "" {
				t.Errorf("the copy against a cluster built anew (-new +copy):\n%s", diff)
			}
			if diff := cmp.Diff(before, state(c, gang)); diff != "" {
				t.Errorf("the cluster copied changed (-before +after):\n%s", diff)
			}
		})
	}
}

// clusterState is what a cluster tells: each node's free resources, and the plan for a gang or the error.
type clusterState struct {
	Free map[string]Resources
	Plan []string
	Err  string
}

// state reads c's clusterState for gang (a resource no node has is free nowhere, whether it has a column).
func state(c *Cluster, gang Gang) clusterState {
	s := clusterState{Free: map[string]Resources{}}
	for _, n := range c.fabric.Nodes() {
		s.Free[n] = Resources{}
		for _, r := range []string{gpu, "cpu", "rdma/hca"} {
			s.Free[n][r] = c.Free(n, r)
		}
	}
	p, err := c.Place(gang)
	if err != nil {
		s.Err = err.Error()
	} else {
		s.Plan = p.Ranks
	}
	return s
}
