// Package ctl implements the fabricmap command line: one file per command.
package ctl

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/program"
	"github.com/fabricmap/fabricmap/internal/version"
	"github.com/fabricmap/fabricmap/sources"
)

// PluginBinary is the name kubectl looks for on PATH to run `kubectl fabricmap …`.
const PluginBinary = "kubectl-fabricmap"

// NewRoot returns the root "fabricmap" command with every subcommand attached; `fabricmap topology` reads
// package sources' own sources and extra's (the released CLI gives clouds.Kinds; the demo's, nil).
func NewRoot(extra sources.Extra) *cobra.Command {
	// controller-runtime's warnings and errors (a watch's informers) on standard error, and no stack trace.
	cli.SetControllerLogger(cli.CommandLogger(os.Stderr))
	root := &cobra.Command{
		Use:           "fabricmap",
		Short:         "See the network topology fabricmap discovered and generated",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	// kubectl's usual flags, for every command (and the plugin): commands read them with restConfig.
	new(cli.ClusterFlags).AddFlags(root.PersistentFlags())
	root.AddCommand(newGet(), newProbe(), newTopology(extra), newPlace(), newSimulate(), newCheck())
	root.AddCommand(newVersion())
	root.AddCommand(newCleanup(), newCapture())
	addVersionFlag(root)
	refuseUnknownSubcommands(root)
	explainAPIErrors(root)
	return root
}

// refuseUnknownSubcommands makes every command group below root (get, …) fail on a subcommand it does not
// have, as kubectl does (`fabricmap get pods` exits 1 naming it), rather than print its help and succeed;
// cobra does that for the root alone. A group given nothing still prints its help.
func refuseUnknownSubcommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		refuseUnknownSubcommands(c)
		if !c.HasSubCommands() || c.Runnable() {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return fmt.Errorf("unknown command %q for %q (its commands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		}
	}
}

// addVersionFlag gives root --version (no shorthand: kubectl's -v is verbosity), printing the line of
// `fabricmap version`. Cobra answers it before any command runs.
func addVersionFlag(root *cobra.Command) {
	root.Version = version.Get().Details()
	version.AddFlag(root.Flags())
	root.SetVersionTemplate("{{.DisplayName}} {{.Version}}\n")
}

// NewRootAs returns the root command (NewRoot(extra)) for a binary started as arg0 (os.Args[0]): run as
// kubectl-fabricmap (a kubectl plugin), its help and usage read `kubectl fabricmap …`.
func NewRootAs(arg0 string, extra sources.Extra) *cobra.Command {
	root := NewRoot(extra)
	if IsPlugin(arg0) {
		root.Use = PluginBinary
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl fabricmap"}
	}
	return root
}

// IsPlugin reports whether arg0 names the kubectl plugin binary (with or without a path or ".exe").
func IsPlugin(arg0 string) bool {
	base := arg0[strings.LastIndexAny(arg0, `/\`)+1:] // either separator: the name may come from Windows
	return strings.TrimSuffix(base, ".exe") == PluginBinary
}

// Main returns the CLI's main, for program.Exec: the operator's commands (NewRootAs(os.Args[0], extra)) on the
// arguments, cancelled with ctx. Cobra has already printed any error (program.ErrReported).
func Main(extra sources.Extra) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		root := NewRootAs(os.Args[0], extra)
		root.SetArgs(args)
		if err := root.ExecuteContext(ctx); err != nil {
			return fmt.Errorf("%w: %w", program.ErrReported, err)
		}
		return nil
	}
}
