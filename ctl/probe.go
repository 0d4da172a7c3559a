package ctl

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/agent"
	"github.com/fabricmap/fabricmap/discovery"
	_ "github.com/fabricmap/fabricmap/discovery/all" // registers every probe
)

func newProbe() *cobra.Command {
	var cfg discovery.Options
	var probes []string
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Run the discovery probes on this machine and print the node report the agent would publish",
		Long: "Run the discovery probes on this machine (or on fixture inputs: --sysfs-root, --ibnetdiscover-file,\n" +
			"--lldp-pcap) and print the NodeFabricReport the agent would publish, with each probe's condition.\n" +
			"Nothing is written to any cluster.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			if cfg.NodeName == "" {
				host, err := os.Hostname()
				if err != nil {
					return fmt.Errorf("no --node-name or $NODE_NAME, and the host name is unknown: %w", err)
				}
				cfg.NodeName = host
			}
			ps, err := cfg.Probes(probes...)
			if err != nil {
				return err
			}
			report := agent.Observe(cmd.Context(), cfg.NodeName, ps, time.Now().Truncate(time.Second))
			return writeObject(cmd.OutOrStdout(), report, output.value)
		},
	}
	cfg.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&cfg.NodeName, "node-name", os.Getenv("NODE_NAME"), "name of the node the report is for (default $NODE_NAME, then the host name)")
	cmd.Flags().StringSliceVar(&probes, "probes", nil, "probes to run, comma-separated (default all)")
	output = addOutputFlag(cmd, "yaml", "json")
	return cmd
}
