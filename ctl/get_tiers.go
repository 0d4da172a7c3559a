package ctl

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
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
			"for one NVLink sub-domain, one NVLink domain, one leaf and one spine, what a Volcano job's\n" +
			"spec.networkTopology and a Kueue PodSet annotation say to keep a job inside it. Tier numbers depend on the tree (NVLink levels below the leaves move the switch\n" +
			"tiers up): read them here rather than guess.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := keys.Resolve(cmd.Flags()); err != nil {
				return err
			}
			if err := keys.Validate(); err != nil {
				return err
			}
			if published, ok := publishedLabelKeys(cmd); ok && !keys.FlagsGiven(cmd.Flags()) {
				keys = published // the aggregator's own keys, from its Lease
			}
			return runGet(cmd, o, func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
				items, err := listHyperNodes(ctx, r, o.all)
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
	fmt.Fprintln(tw, "TO KEEP A JOB IN\tVOLCANO spec.networkTopology\tKUEUE PodSet annotation")
	var notes []string
	for _, r := range recipes {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Goal, r.Volcano, orDash(r.Kueue))
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
		_, err = fmt.Fprintln(w, "note: to gather a job in a whole NVLink domain that spans leaves, add a required pod affinity on "+
			orDash(keys.Accelerator)+" (topologyKey) and allow the tier that holds all its leaves")
	}
	return err
}
