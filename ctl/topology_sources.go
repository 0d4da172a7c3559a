package ctl

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// readSpecially are the registry's sources that `fabricmap topology` reads with flags of its own (a capture
// from standard input, UFM's saved answers, labels of a dump); every other source is read by readRegistered.
var readSpecially = map[string]bool{ibfabric.Name: true, ufm.Name: true, labels.Name: true}

// registeredGiven reports whether the flags configure a registry source that readRegistered reads.
func registeredGiven(srcs *sources.Options) bool {
	for _, k := range srcs.Kinds() {
		if !readSpecially[k.Name] && k.Settings.Given() {
			return true
		}
	}
	return false
}

// readRegistered reads, once each, the registry's sources that the flags configure and that
// `fabricmap topology` has no flags of its own for, through the same Spec and Evidence the aggregator polls;
// list gives them the Nodes (of the cluster, or of --nodes-file).
func readRegistered(ctx context.Context, srcs *sources.Options, list nodes.Lister, errw io.Writer) ([]sourceRead, error) {
	var read []sourceRead
	for _, k := range srcs.Kinds() {
		if readSpecially[k.Name] || !k.Settings.Given() {
			continue
		}
		log := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn})) // as for UFM
		spec, err := k.Spec(sources.Deps{Log: log, Nodes: list})
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", k.Name, err)
		}
		poll := ctx
		if spec.PollTimeout > 0 {
			var cancel context.CancelFunc
			poll, cancel = context.WithTimeout(ctx, spec.PollTimeout)
			defer cancel()
		}
		in, err := spec.Source.Evidence(poll)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", k.Name, err)
		}
		read = append(read, sourceRead{flag: "--from-" + k.Name, value: k.Name, name: k.Name, in: in, merge: spec.Source.Merge,
			why: "it places no Node of the cluster (see the warnings above)"})
	}
	return read, nil
}

// nodeLister lists the Nodes the sources read: those of file (a `kubectl get nodes -o yaml|json` dump) when
// set, else the cluster's, whole (spec.providerID included), page by page.
func nodeLister(cmd *cobra.Command, file string) nodes.Lister {
	if file != "" {
		return func(context.Context) ([]nodes.Node, error) { return nodes.ReadFile(file, cmd.ErrOrStderr()) }
	}
	cluster := clusterFlagsOf(cmd)
	return func(ctx context.Context) ([]nodes.Node, error) {
		cfg, err := cluster.RESTConfig()
		if err != nil {
			return nil, err
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("creating Kubernetes client for %s: %w", cfg.Host, err)
		}
		var out []nodes.Node
		opts := metav1.ListOptions{Limit: nodeListPage}
		for {
			page, err := client.CoreV1().Nodes().List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing the Nodes of %s: %w", cfg.Host, err)
			}
			for _, n := range page.Items {
				out = append(out, nodes.Node{Name: n.Name, Labels: n.Labels, ProviderID: n.Spec.ProviderID})
			}
			if page.Continue == "" {
				return out, nil
			}
			opts.Continue = page.Continue
		}
	}
}
