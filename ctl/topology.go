package ctl

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/discovery/ibnetdiscover"
	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/topology"
)

// maxWarnings is how many parse warnings are printed one by one before they are only counted.
const maxWarnings = 20

func newTopology() *cobra.Command {
	var from, output, rootName string
	cmd := &cobra.Command{
		Use:   "topology --from-ibnetdiscover FILE",
		Short: "Print the HyperNodes a fabric capture implies, as the aggregator would apply them",
		Long: "Read ibnetdiscover output (FILE, or - for standard input), infer the tree (rail-optimised leaves that\n" +
			"share hosts form one tier-1 domain, spines and cores above, one root) and print the Volcano HyperNodes\n" +
			"as a Kubernetes List. Lines that could not be used, hosts that are not valid node names and hosts with\n" +
			"no switch link are reported on standard error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return fmt.Errorf("--from-ibnetdiscover is required")
			}
			fab, err := readFabric(from, cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			tree, problems := topology.Build(ibfabric.Evidence(fab, ibfabric.Options{}), topology.BuildOptions{RootName: rootName})
			errw := cmd.ErrOrStderr()
			for _, p := range problems {
				fmt.Fprintln(errw, "warning:", p)
			}
			for _, n := range tree.Unplaced {
				fmt.Fprintf(errw, "warning: host %q reaches no switch and is left out\n", n)
			}
			if err := tree.Validate(); err != nil {
				return fmt.Errorf("the inferred tree is invalid (a bug; please report it with the capture): %w", err)
			}
			hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{})
			if err != nil {
				return err
			}
			return printHyperNodes(cmd.OutOrStdout(), errw, hns, output)
		},
	}
	cmd.Flags().StringVar(&from, "from-ibnetdiscover", "", "ibnetdiscover output to read (- for standard input)")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: json, yaml, tree or dot")
	cmd.Flags().StringVar(&rootName, "root-name", topology.TierNameRoot, "name of the top HyperNode")
	return cmd
}

// readFabric parses an ibnetdiscover capture and reports the lines it could not use on errw.
func readFabric(path string, stdin io.Reader, errw io.Writer) (*ibnetdiscover.Fabric, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	fab, warnings, err := ibnetdiscover.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for i, w := range warnings {
		if i == maxWarnings {
			fmt.Fprintf(errw, "warning: %s: %d more lines could not be used\n", path, len(warnings)-i)
			break
		}
		fmt.Fprintf(errw, "warning: %s: %s\n", path, w)
	}
	if len(fab.Switches) == 0 {
		return nil, fmt.Errorf("%s: no InfiniBand switch found; is it ibnetdiscover output?", path)
	}
	return fab, nil
}
