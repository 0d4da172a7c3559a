package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/cli"
	"github.com/fabricmap/fabricmap/internal/kube"
	"github.com/fabricmap/fabricmap/view"
)

func newGet() *cobra.Command {
	get := &cobra.Command{Use: "get", Short: "Show what fabricmap generated"}
	get.AddCommand(newGetHyperNodes())
	return get
}

func newGetHyperNodes() *cobra.Command {
	var output string
	var all bool
	cmd := &cobra.Command{
		Use:     "hypernodes",
		Aliases: []string{"hypernode", "hn"},
		Short:   "Print the HyperNodes as a tree (tier, name, node count, members, source)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kubeconfig, _ := cmd.Flags().GetString("kubeconfig")
			cfg, err := cli.RESTConfig(kubeconfig)
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
			if err != nil {
				return fmt.Errorf("creating Kubernetes client: %w", err)
			}
			var list topologyv1alpha1.HyperNodeList
			var opts []client.ListOption
			if !all {
				opts = append(opts, client.MatchingLabels(hypernodegen.OwnedSelector()))
			}
			if err := c.List(cmd.Context(), &list, opts...); err != nil {
				return fmt.Errorf("listing HyperNodes: %w", err)
			}
			return printHyperNodes(cmd.OutOrStdout(), cmd.ErrOrStderr(), list.Items, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "tree", "output format: tree, json, yaml or dot")
	cmd.Flags().BoolVarP(&all, "all", "A", false, "include HyperNodes that fabricmap did not make")
	return cmd
}

// printHyperNodes writes HyperNodes in the chosen format; warnings about the tree go to errw.
func printHyperNodes(w, errw io.Writer, items []topologyv1alpha1.HyperNode, output string) error {
	switch output {
	case "json", "yaml":
		list := topologyv1alpha1.HyperNodeList{Items: items}
		list.APIVersion, list.Kind = "v1", "List"
		for i := range list.Items {
			list.Items[i].APIVersion = topologyv1alpha1.SchemeGroupVersion.String()
			list.Items[i].Kind = "HyperNode"
			list.Items[i].ManagedFields = nil
		}
		return writeObject(w, list, output)
	case "tree", "dot":
		if len(items) == 0 {
			_, err := fmt.Fprintln(errw, "No HyperNodes found.")
			return err
		}
		t, warnings := hypernodegen.TreeFromHyperNodes(items)
		for _, warn := range warnings {
			fmt.Fprintln(errw, "warning:", warn)
		}
		if output == "dot" {
			return view.DOT(w, t)
		}
		return view.Text(w, t, view.TextOptions{})
	default:
		return fmt.Errorf("--output %q: want tree, json, yaml or dot", output)
	}
}
