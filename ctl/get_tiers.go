package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/wellknown"
)

func newGetTiers() *cobra.Command {
	var o getOptions
	keys := hypernodegen.DefaultLabelKeys()
	cmd := &cobra.Command{
		Use:   "tiers",
		Short: "Print what each tier means here: HyperNode tier and name, node-label key, Kueue level, and how to ask for one domain",
		Long: "Print, for this cluster's HyperNodes, each tier with its name (leaf, spine, accelerator…), how many domains\n" +
			"it has, the node-label key whose value is a node's domain at that tier (--label-style and the key flags, else\n" +
			"the keys the aggregator states on its Lease) and that key's place among the Kueue Topology's levels; then,\n" +
			"for one NVLink sub-domain, one NVLink domain, one leaf and one spine, what keeps a job inside it: a Volcano\n" +
			"job's spec.networkTopology, a Kueue PodSet annotation and a Kubernetes 1.36 PodGroup's\n" +
			"spec.schedulingConstraints (scheduling.k8s.io/v1alpha2), with a whole PodGroup for one leaf, for the\n" +
			"stock scheduler and for fabricmap-scheduler (annotation fabricmap.io/highest-tier). Tier numbers\n" +
			"depend on the tree (NVLink levels below the leaves move the switch tiers up): read them here rather than\n" +
			"guess. Without the HyperNode CRD (no Volcano) the tiers are those of the tree the nodes' labels state,\n" +
			"saying so on standard error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := keys.Resolve(cmd.Flags()); err != nil {
				return err
			}
			if err := keys.Validate(); err != nil {
				return err
			}
			known := keys.FlagsGiven(cmd.Flags())
			if published, ok := publishedLabelKeys(cmd); ok && !known {
				keys, known = published, true // the aggregator's own keys, from its Lease
			}
			return runGet(cmd, o, func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
				items, err := listHyperNodes(ctx, r, o.all)
				if errors.Is(err, errNoHyperNodeCRD) {
					v, err := readLabelView(ctx, r, errw, keys, known, "the tiers below are", err)
					if err != nil {
						return err
					}
					return printTiers(w, v.tree, v.keys, o.output.value)
				}
				if err != nil {
					return err
				}
				if len(items) == 0 {
					_, err := fmt.Fprintln(errw, "No HyperNodes found.")
					return err
				}
				return printTiers(w, viewHyperNodes(errw, items, memberNodeLabels(ctx, r, items, errw)), keys, o.output.value)
			})
		},
	}
	o.hyperNodesOptional = true // the nodes' labels stand in for them
	o.addFlags(cmd, "table", "json", "yaml")
	keys.AddFlags(cmd.Flags())
	return cmd
}

// printTiers writes the tiers of t and their recipes (hypernodegen.Tiers, TierRecipes) as a table, or as
// JSON or YAML.
func printTiers(w io.Writer, t *topology.Tree, keys hypernodegen.LabelKeys, output string) error {
	tiers, err := hypernodegen.Tiers(t, keys)
	if err != nil {
		return fmt.Errorf("reading the tiers of the HyperNodes: %w", err)
	}
	recipes := hypernodegen.TierRecipes(tiers)
	if output == "json" || output == "yaml" {
		return writeObject(w, struct {
			Tiers   []hypernodegen.Tier       `json:"tiers"`
			Recipes []hypernodegen.TierRecipe `json:"recipes"`
		}{tiers, recipes}, output)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "TIER\tNAME\tDOMAINS\tLABEL KEY\tKUEUE LEVEL")
	for _, tr := range tiers {
		level := "-"
		if tr.KueueLevel > 0 {
			level = strconv.Itoa(tr.KueueLevel)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", tr.Tier, tr.Name, tr.Domains, orDash(tr.LabelKey), level)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(recipes) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "TO KEEP A JOB IN\tVOLCANO spec.networkTopology\tKUEUE PodSet annotation\tPODGROUP spec.schedulingConstraints")
	var notes []string
	for _, r := range recipes {
		podGroup := ""
		if r.PodGroup != nil {
			podGroup = r.PodGroup.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Goal, r.Volcano, orDash(r.Kueue), orDash(podGroup))
		if r.Note != "" {
			notes = append(notes, r.Goal+": "+r.Note)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
	if len(notes) > 0 {
		if _, err = fmt.Fprintln(w, "note: to gather a job in a whole NVLink domain that spans leaves, add a required pod affinity on "+
			orDash(keys.Accelerator)+" (topologyKey) and allow the tier that holds all its leaves"); err != nil {
			return err
		}
	}
	return printPodGroupExample(w, recipes)
}

// printPodGroupExample writes a whole Kubernetes 1.36 PodGroup that keeps a gang of 4 pods in one leaf (the leaf
// recipe's constraints), and how its pods join it; then the same gang for fabricmap-scheduler, whose limit is
// the leaf tier by name (wellknown.HighestTierAnnotation); nothing when the leaf tier has no label key.
func printPodGroupExample(w io.Writer, recipes []hypernodegen.TierRecipe) error {
	i := slices.IndexFunc(recipes, func(r hypernodegen.TierRecipe) bool { return r.Goal == hypernodegen.GoalLeaf && r.PodGroup != nil })
	if i < 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, `
A PodGroup (Kubernetes 1.36, gates GenericWorkload, GangScheduling and TopologyAwareWorkloadScheduling) whose
4 pods start together in one leaf; each pod joins it with spec.schedulingGroup.podGroupName: my-job.
  apiVersion: %s
  kind: PodGroup
  metadata:
    name: my-job
  spec:
    schedulingPolicy:
      gang:
        minCount: 4
    schedulingConstraints:
      topology:
      - key: %s

The same gang for fabricmap-scheduler (docs/scheduler.md), whose placement puts it in the lowest tier that holds
it, here no higher than one leaf; its pods also set spec.schedulerName: %s.
  apiVersion: %[1]s
  kind: PodGroup
  metadata:
    name: my-job
    annotations:
      %[4]s: %[5]s
  spec:
    schedulingPolicy:
      gang:
        minCount: 4
`, hypernodegen.PodGroupAPIVersion, recipes[i].PodGroup.Topology[0].Key, wellknown.SchedulerName,
		wellknown.HighestTierAnnotation, topology.TierNameLeaf)
	return err
}
