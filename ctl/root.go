// Package ctl implements the fabricmap command line: one file per command.
package ctl

import (
	"github.com/spf13/cobra"
)

// NewRoot returns the root "fabricmap" command with every subcommand attached.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "fabricmap",
		Short:         "See the network topology fabricmap discovered and generated",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.PersistentFlags().String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)")
	root.AddCommand(newGet(), newProbe(), newTopology(), newPlace(), newSimulate(), newCheck())
	return root
}
