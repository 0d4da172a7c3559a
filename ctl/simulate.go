package ctl

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
	"github.com/fabricmap/fabricmap/topology"
)

// simulateFlags are the inputs of `fabricmap simulate`.
type simulateFlags struct {
	fabric    sim.FabricSpec
	trace     sim.TraceSpec
	traceFile string
	saveTrace string
	// network names the communication model's preset; oversubscription, when given, replaces its ratios.
	network          string
	oversubscription []float64
}

func newSimulate() *cobra.Command {
	var fl simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate [--trace FILE]",
		Short: "Replay a job trace through fabricmap's placement and the in-tree TopologyPlacement on a generated fabric and print quality metrics",
		Long: "Generate a leaf/spine fabric (--nodes, --nodes-per-leaf, --leaves-per-spine, --gpus-per-node) and replay a\n" +
			"job trace on it: --trace FILE (a JSON list of {name, arrival, duration, pods, dp, pp, gpusPerPod,\n" +
			"priority}; seconds) or a seeded synthetic one (--jobs, --seed, --load, --max-pods). Queued jobs start in\n" +
			"arrival order as soon as they fit. Each trace is replayed through fabricmap's placement (what the placer and\n" +
			"fabricmap-scheduler place) and, as peers, kube-scheduler 1.36's in-tree TopologyPlacement with the leaf key and\n" +
			"with the spine key (one domain of the key holding the whole gang, the emptiest, else the gang stays pending). The first table gives the share of gangs at the optimal gang tier, the\n" +
			"mean gang and PP-group tiers, leaves used against the fewest possible, the largest gang one leaf could\n" +
			"still take after each placement (fragmentation), acceptance, mean queueing delay and GPU utilisation.\n" +
			"Each job's training step (compute, DP ring all-reduce, PP transfers; trace fields computeSeconds,\n" +
			"gradientBytes, activationBytes, microbatches) is priced on a communication model (--network: generic,\n" +
			"3:1 oversubscribed above the leaf and above the spine, or superpod, 1:1; --oversubscription overrides\n" +
			"the ratios), and a job runs its duration stretched by its slowdown against the ideal layout. The second\n" +
			"table gives the mean and p95 job completion time, mean queueing delay, mean step-time slowdown,\n" +
			"GPU-hours lost to slow placement and utilisation (useful GPU-time over GPU-time available).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tr, nodes, err := fl.fabric.Build()
			if err != nil {
				return err
			}
			f, err := placement.NewFabric(tr)
			if err != nil {
				return err
			}
			net, err := fl.net()
			if err != nil {
				return err
			}
			jobs, err := fl.jobs()
			if err != nil {
				return err
			}
			if fl.saveTrace != "" {
				data, err := json.MarshalIndent(jobs, "", "  ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(fl.saveTrace, append(data, '\n'), 0o644); err != nil {
					return fmt.Errorf("--save-trace: %w", err)
				}
			}
			placers := []sim.Placer{sim.Fabricmap{}}
			for _, tier := range []string{topology.TierNameLeaf, topology.TierNameSpine} {
				p, err := sim.NewInTree(f, tier, nodes)
				if err != nil {
					return err
				}
				placers = append(placers, p)
			}
			rows := make([]sim.Metrics, 0, len(placers))
			for _, p := range placers {
				m, err := sim.Replay(f, nodes, jobs, p, net)
				if err != nil {
					return err
				}
				rows = append(rows, m)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%d nodes (%d a leaf, %d leaves a spine), %d jobs, network %s (oversubscription %v)\n",
				fl.fabric.Nodes, fl.fabric.NodesPerLeaf, fl.fabric.LeavesPerSpine, len(jobs), net.Name, net.Oversubscription)
			fmt.Fprintln(out, "fabricmap: the placer's and fabricmap-scheduler's placement; in-tree: kube-scheduler 1.36's TopologyPlacement with the leaf or the spine key")
			if err := sim.WriteTable(out, rows); err != nil {
				return err
			}
			fmt.Fprintln(out)
			return sim.WriteTimeTable(out, rows)
		},
	}
	f := cmd.Flags()
	f.IntVar(&fl.fabric.Nodes, "nodes", 1024, "nodes in the generated fabric")
	f.IntVar(&fl.fabric.NodesPerLeaf, "nodes-per-leaf", 32, "nodes under each leaf switch")
	f.IntVar(&fl.fabric.LeavesPerSpine, "leaves-per-spine", 8, "leaves under each spine")
	f.Int64Var(&fl.fabric.GPUsPerNode, "gpus-per-node", 8, "GPUs in every node")
	f.StringVar(&fl.traceFile, "trace", "", "JSON trace to replay instead of a generated one")
	f.IntVar(&fl.trace.Jobs, "jobs", 1000, "jobs in the generated trace")
	f.Uint64Var(&fl.trace.Seed, "seed", 1, "seed of the generated trace")
	f.Float64Var(&fl.trace.Load, "load", 0.9, "offered GPU load of the generated trace, as a share of the fabric's GPUs")
	f.IntVar(&fl.trace.MaxPods, "max-pods", 128, "largest gang in the generated trace")
	f.StringVar(&fl.saveTrace, "save-trace", "", "write the replayed trace to FILE as JSON")
	f.StringVar(&fl.network, "network", sim.Generic.Name, "communication model: generic (3:1 oversubscribed above the leaf and the spine) or superpod (1:1)")
	f.Float64SliceVar(&fl.oversubscription, "oversubscription", nil, "oversubscription ratios from the leaf up (leaf to spine, spine to core, ...), replacing the network's")
	return cmd
}

// net returns the communication model: the --network preset with --oversubscription's ratios when given.
func (fl *simulateFlags) net() (sim.Network, error) {
	n, err := sim.NetworkNamed(fl.network)
	if err != nil {
		return n, fmt.Errorf("--network: %w", err)
	}
	if len(fl.oversubscription) > 0 {
		n.Name, n.Oversubscription = "custom", fl.oversubscription
	}
	if err := n.Check(); err != nil {
		return n, fmt.Errorf("--oversubscription: %w", err)
	}
	return n, nil
}

// jobs returns the trace: read from --trace, or generated.
func (fl *simulateFlags) jobs() ([]sim.Job, error) {
	if fl.traceFile == "" {
		if fl.trace.Jobs <= 0 {
			return nil, fmt.Errorf("--jobs %d: want at least one", fl.trace.Jobs)
		}
		return sim.Generate(fl.trace, int64(fl.fabric.Nodes)*fl.fabric.GPUsPerNode, fl.fabric.GPUsPerNode), nil
	}
	r, err := os.Open(fl.traceFile)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	defer r.Close()
	jobs, err := sim.ReadTrace(r)
	if err != nil {
		return nil, fmt.Errorf("--trace %s: %w", fl.traceFile, err)
	}
	return jobs, nil
}
