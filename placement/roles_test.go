package placement

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rolesOutcome is what TestRolesOwnRequests checks of a plan.
type rolesOutcome struct {
	GangDomain string
	GroupTier  int
	Roles      []string
	GroupOf    []int
	// Launcher is the launcher's node; Workers the workers' nodes, sorted; Groups the groups' domains, sorted.
	Launcher string
	Workers  []string
	Groups   []string
}

// TestRolesOwnRequests places gangs of a 1-GPU launcher and 8-GPU workers with each role's own request: the
// launcher takes a node with one GPU free instead of a worker's slot, DP x PP groups apply to the workers, a
// gang that does not fit on one node widens to the leaf, and binding charges each pod its own request.
func TestRolesOwnRequests(t *testing.T) {
	twoLeaves := mkTree(t, "spine/2/spine: leaf-a leaf-b", "leaf-a/1/leaf: a1 a2 a3 a4 a5", "leaf-b/1/leaf: b1 b2 b3 b4 b5")
	launcher := func(workers int) []Role {
		return []Role{{Name: "launcher", Pods: 1, Request: Resources{gpu: 1}}, {Name: "worker", Pods: workers, Request: Resources{gpu: 8}}}
	}
	full := func(nodes ...string) map[string]int64 {
		out := map[string]int64{}
		for _, n := range nodes {
			out[n] = 8
		}
		return out
	}
	for _, tc := range []struct {
		name string
		c    *Cluster
		gang Gang
		want rolesOutcome
	}{{
		name: "launcher on the node with one GPU free, not a fifth full node",
		c:    mkCluster(t, twoLeaves, 8, merge(full("b1", "b2"), map[string]int64{"a5": 7})),
		gang: Gang{Name: "mpi", Roles: launcher(4)},
		want: rolesOutcome{GangDomain: "leaf-a", GroupTier: 1, Roles: []string{"launcher", "worker", "worker", "worker", "worker"},
			GroupOf: []int{-1, 0, 0, 0, 0}, Launcher: "a5", Workers: []string{"a1", "a2", "a3", "a4"}, Groups: []string{"leaf-a"}},
	}, {
		name: "the tighter leaf wins when both hold the gang",
		c:    mkCluster(t, twoLeaves, 8, map[string]int64{"a5": 7}),
		gang: Gang{Name: "mpi", Roles: launcher(4)},
		want: rolesOutcome{GangDomain: "leaf-a", GroupTier: 1, Roles: []string{"launcher", "worker", "worker", "worker", "worker"},
			GroupOf: []int{-1, 0, 0, 0, 0}, Launcher: "a5", Workers: []string{"a1", "a2", "a3", "a4"}, Groups: []string{"leaf-a"}},
	}, {
		name: "DP x PP groups are the workers', the launcher next to them",
		c: mkCluster(t, seedTree(t), 8, merge(full("n06", "n07", "n08", "n09", "n10", "n11", "n12", "n13", "n14", "n15"),
			map[string]int64{"n02": 7, "n03": 7})),
		gang: Gang{Name: "mpi", DP: 2, PP: 2, Roles: launcher(4)},
		want: rolesOutcome{GangDomain: "leaf0", GroupTier: 1, Roles: []string{"launcher", "worker", "worker", "worker", "worker"},
			GroupOf: []int{-1, 0, 0, 1, 1}, Launcher: "n02", Workers: []string{"n00", "n01", "n04", "n05"}, Groups: []string{"unit0", "unit1"}},
	}, {
		name: "no node holds worker and launcher: the leaf does",
		c:    mkCluster(t, twoLeaves, 8, nil),
		gang: Gang{Name: "one", Roles: launcher(1)},
		want: rolesOutcome{GangDomain: "leaf-a", Roles: []string{"launcher", "worker"}, GroupOf: []int{-1, 0},
			Launcher: "a2", Workers: []string{"a1"}, Groups: []string{"a1"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.c.Place(tc.gang)
			if err != nil {
				t.Fatal(err)
			}
			got := rolesOutcome{GangDomain: p.GangDomain, GroupTier: p.GroupTier, Roles: p.Roles, GroupOf: p.GroupOf,
				Launcher: p.Ranks[0], Workers: slices.Sorted(slices.Values(p.Ranks[1:])), Groups: slices.Sorted(slices.Values(p.Groups))}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("plan %+v (-want +got):\n%s", p, d)
			}
			before := map[string]int64{}
			for _, n := range p.Ranks {
				before[n] = tc.c.Free(n, gpu)
			}
			if err := tc.c.Bind(p, tc.gang); err != nil {
				t.Fatal(err)
			}
			if got, want := before[got.Launcher]-tc.c.Free(got.Launcher, gpu), int64(1); got != want {
				t.Errorf("binding took %d GPUs on the launcher's node, want %d", got, want)
			}
			if err := tc.c.Remove(tc.gang.Name); err != nil {
				t.Fatal(err)
			}
			for n, f := range before {
				if tc.c.Free(n, gpu) != f {
					t.Errorf("node %s has %d GPUs free after Remove, want %d again", n, tc.c.Free(n, gpu), f)
				}
			}
		})
	}
}

// TestRolesRefused: DP x PP must match the main role's pods, and a gang whose launcher fits nowhere is not
// placed.
func TestRolesRefused(t *testing.T) {
	tr := mkTree(t, "leaf-a/1/leaf: a1 a2 a3 a4")
	roles := []Role{{Name: "launcher", Pods: 1, Request: Resources{gpu: 1}}, {Name: "worker", Pods: 4, Request: Resources{gpu: 8}}}
	c := mkCluster(t, tr, 8, nil)
	_, err := c.Place(Gang{Name: "g", DP: 2, PP: 1, Roles: roles})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "gang.dp" {
		t.Errorf("DP x PP = 2 against 4 workers: got %v, want an error on gang.dp", err)
	}
	if _, err := c.Place(Gang{Name: "g", DP: 2, PP: 2, Roles: roles}); !errors.Is(err, ErrNoPlacement) {
		t.Errorf("4 full nodes for 4 workers and a launcher: got %v, want ErrNoPlacement", err)
	}
}

// merge returns the union of the maps (later ones win).
func merge(ms ...map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
