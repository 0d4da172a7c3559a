package ctl

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/internal/version"
)

func newVersion() *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, git commit and Go version of this binary",
		Long: "Print the version, git commit and Go version of this binary, the line --version prints; -o json or yaml\n" +
			"prints them as fields (version, commit, goVersion, platform).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			info := version.Get()
			if output.value == "text" {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), info.String(cmd.Root().DisplayName()))
				return err
			}
			return writeObject(cmd.OutOrStdout(), info, output.value)
		},
	}
	output = addOutputFlag(cmd, "text", "json", "yaml")
	return cmd
}
