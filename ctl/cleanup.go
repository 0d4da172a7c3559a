package ctl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/internal/cleanup"
	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/kube"
)

func newCleanup() *cobra.Command {
	o := cleanup.Options{}
	var timeout time.Duration
	var rate cli.APIRate
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what fabricmap made: its HyperNodes, outputs, node labels, reservations, reports and heartbeat Leases",
		Long: "Remove from the cluster what fabricmap made, and nothing else: the HyperNodes, Kueue and KAI Topologies,\n" +
			"ClusterNetworkTopology and tree ConfigMap labelled app.kubernetes.io/managed-by=fabricmap, the node labels\n" +
			"the aggregator's field manager owns (a label an admin set stays), the placer's fabricmap.io/reserved taints,\n" +
			"every NodeFabricReport, and the agents' heartbeat Leases in the release's namespace (-n as for kubectl; in a\n" +
			"pod, the pod's own). The CRDs stay. The chart's post-delete hook runs it after `helm uninstall`\n" +
			"(cleanupOnUninstall); after uninstalling with that off, run it by hand, --dry-run first to list what it\n" +
			"would remove.",
		Example: "  fabricmap cleanup -n fabricmap-system --dry-run",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			var err error
			if o.Namespace, err = clusterFlagsOf(cmd).NamespaceOrDefault(); err != nil {
				return err
			}
			cfg, err := restConfig(cmd)
			if err != nil {
				return err
			}
			rate.Apply(cfg)
			c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
			if err != nil {
				return fmt.Errorf("creating Kubernetes client: %w", err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return runCleanup(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), c, o)
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would be removed, changing nothing (every write is sent as a server-side dry run)")
	cmd.Flags().StringVar(&o.WaitForPods, "wait-for-pods", "", "a label selector of fabricmap's pods in the namespace to wait for until they have stopped, so none writes again behind the cleanup (empty: no wait)")
	cmd.Flags().DurationVar(&o.WaitTimeout, "wait-timeout", 2*time.Minute, "longest wait for --wait-for-pods; the cleanup then goes on and names the pods left")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "longest time for the whole cleanup")
	rate.AddFlags(cmd.Flags(), 50, 100, "one write per node that carries fabricmap's labels or a reservation, one per object deleted")
	return cmd
}

// runCleanup runs the cleanup and prints one line per object removed (or, with --dry-run, that would be) on
// w, then a count; progress and warnings go to errw.
func runCleanup(ctx context.Context, w, errw io.Writer, c client.Client, o cleanup.Options) error {
	verb := "removed"
	if o.DryRun {
		verb = "would remove"
	}
	count := 0
	o.Removed = func(r cleanup.Removal) {
		count++
		if r.What == "" {
			fmt.Fprintf(w, "%s %s %s\n", verb, r.Kind, r.Object())
		} else {
			fmt.Fprintf(w, "%s from %s %s: %s\n", verb, r.Kind, r.Object(), r.What)
		}
	}
	o.Log = slog.New(slog.NewTextHandler(errw, nil))
	err := cleanup.Run(ctx, c, o)
	if o.DryRun {
		fmt.Fprintf(w, "dry run: %d removals, nothing changed\n", count)
	} else {
		fmt.Fprintf(w, "%d removals\n", count)
	}
	return err
}
