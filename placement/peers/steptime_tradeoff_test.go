package peers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
)

// recorder passes placements through to a placer and keeps each gang's ranks.
type recorder struct {
	sim.Placer
	ranks map[string][]string
}

// Place implements sim.Placer.
func (r *recorder) Place(c *placement.Cluster, g placement.Gang) ([]string, error) {
	ranks, err := r.Placer.Place(c, g)
	if err == nil {
		r.ranks[g.Name] = ranks
	}
	return ranks, err
}

// stepFigures are what the step-time trade-off pins of one replay.
type stepFigures struct {
	Ranks             map[string][]string
	MeanJCT, MeanWait float64
	MeanSlowdown      float64
	AtOptimal         int
}

// TestStepTimeTradeoff pins the smallest replay where slurm-tree ends with a lower mean job completion time and
// step-time slowdown than fabricmap that a search over random small fabrics and traces found (the peer table's
// overloaded trace shows the same at scale). The fabric is five one-node leaves (one GPU a node): spine-000 holds
// node-000000 to node-000002, spine-001 node-000003 and node-000004. Job "single" (one pod) arrives at 0 and
// runs 600 s; job "pipeline" (4 pods, DP 2 x PP 2) arrives at 60 s, while single still runs.
//
// Every key of the ladder that can tell single's nodes apart ties (tier 0, one node, no degraded uplink) but
// key 5's best fit, which takes the fuller enclosing domain: spine-001, keeping spine-000's three nodes whole
// for a later gang of three. Slurm takes the first leaf, in spine-000. So fabricmap leaves 3 + 1 free nodes,
// slurm 2 + 2. No spine then holds 4 pods, so pipeline's gang tier is the root for both (both optimal, both
// start at once); its DP rings span the root for both too. But its PP groups differ: slurm's 2 + 2 holds each
// pair in a spine, fabricmap's 3 + 1 cannot, so one pair crosses the root (key 2 is already as low as the free
// nodes allow: fabricmap made the best placement for pipeline from where it stood). On the generic network
// that hop has a third of the spine's bandwidth. Pipeline's default step (2 s of compute, 7 GB of gradients a
// GPU, 16 transfers of 32 MB on the critical path) takes 2.450783 s laid out ideally (ring and hops in a
// spine: 50/3 GB/s, 3.5 µs); 3.290785 s under slurm (ring at the root: 50/9 GB/s, 4.5 µs) and 3.352241 s under
// fabricmap (one hop at the root too), 1.9 % slower. Mean JCT is 702.8 s against 710.3 s, mean slowdown 1.1714
// against 1.1839 (single runs at 1 for both); the waits are 0 for both. The loss is history, not a decision:
// key 5 cannot know whether the next gang wants three nodes together or two pairs (were pipeline 3 pods of DP 3,
// fabricmap would run it in spine-000 at slowdown 1 and slurm across the root at 1.72).
func TestStepTimeTradeoff(t *testing.T) {
	tree, nodes, err := sim.FabricSpec{Nodes: 5, NodesPerLeaf: 1, LeavesPerSpine: 3, GPUsPerNode: 1}.Build()
	if err != nil {
		t.Fatal(err)
	}
	f, err := placement.NewFabric(tree)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []sim.Job{
		{Name: "single", Arrival: 0, Duration: 600, Pods: 1, GPUsPerPod: 1},
		{Name: "pipeline", Arrival: 60, Duration: 600, Pods: 4, DP: 2, PP: 2, GPUsPerPod: 1},
	}
	got := map[string]stepFigures{}
	for _, p := range []sim.Placer{sim.Fabricmap{}, slurm{}} {
		rec := &recorder{Placer: p, ranks: map[string][]string{}}
		m, err := sim.Replay(f, nodes, jobs, rec, sim.Generic)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		got[p.Name()] = stepFigures{Ranks: rec.ranks, MeanJCT: m.MeanJCT(), MeanWait: m.MeanWait(), MeanSlowdown: m.MeanSlowdown(), AtOptimal: m.AtOptimal}
	}
	want := map[string]stepFigures{
		"fabricmap": {
			Ranks:   map[string][]string{"single": {"node-000003"}, "pipeline": {"node-000000", "node-000001", "node-000002", "node-000004"}},
			MeanJCT: (600 + 600*3.352241/2.450783) / 2, MeanWait: 0, MeanSlowdown: (1 + 3.352241/2.450783) / 2, AtOptimal: 2,
		},
		"slurm-tree": {
			Ranks:   map[string][]string{"single": {"node-000000"}, "pipeline": {"node-000001", "node-000002", "node-000003", "node-000004"}},
			MeanJCT: (600 + 600*3.290785/2.450783) / 2, MeanWait: 0, MeanSlowdown: (1 + 3.290785/2.450783) / 2, AtOptimal: 2,
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-4)); diff != "" {
		t.Errorf("replays (-want +got):\n%s", diff)
	}
	if fm, sl := got["fabricmap"], got["slurm-tree"]; !(sl.MeanJCT < fm.MeanJCT && sl.MeanSlowdown < fm.MeanSlowdown) {
		t.Errorf("slurm-tree no longer beats fabricmap here: mean JCT %.4f vs %.4f s, slowdown %.5f vs %.5f", sl.MeanJCT, fm.MeanJCT, sl.MeanSlowdown, fm.MeanSlowdown)
	}
}
