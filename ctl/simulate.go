package ctl

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/placement"
	"github.com/fabricmap/fabricmap/placement/sim"
)

// simulateFlags are the inputs of `fabricmap simulate`.
type simulateFlags struct {
	fabric    sim.FabricSpec
	trace     sim.TraceSpec
	traceFile string
	saveTrace string
}

func newSimulate() *cobra.Command {
	var fl simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate [--trace FILE]",
		Short: "Replay a job trace through fabricmap's placement on a generated fabric and print quality metrics",
		Long: "Generate a leaf/spine fabric (--nodes, --nodes-per-leaf, --leaves-per-spine, --gpus-per-node) and replay a\n" +
			"job trace on it: --trace FILE (a JSON list of {name, arrival, duration, pods, dp, pp, gpusPerPod,\n" +
			"priority}; seconds) or a seeded synthetic one (--jobs, --seed, --load, --max-pods). Queued jobs start in\n" +
			"arrival order as soon as they fit. The table gives the share of gangs at the optimal gang tier, the mean\n" +
			"gang and PP-group tiers, leaves used against the fewest possible, the largest gang one leaf could still\n" +
			"take after each placement (fragmentation), acceptance, mean queueing delay and GPU utilisation.",
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
			m, err := sim.Replay(f, nodes, jobs, sim.Fabricmap{})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d nodes (%d a leaf, %d leaves a spine), %d jobs\n", fl.fabric.Nodes,
				fl.fabric.NodesPerLeaf, fl.fabric.LeavesPerSpine, len(jobs))
			return sim.WriteTable(cmd.OutOrStdout(), []sim.Metrics{m})
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
	return cmd
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
