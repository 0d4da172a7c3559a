package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/topology"
)

// nodeListPage is how many Nodes one list request asks the API server for (a variable for tests).
var nodeListPage int64 = 500

// sourcesGiven reports whether the flags configure any source of the registry.
func sourcesGiven(srcs *sources.Options) bool {
	for _, k := range srcs.Kinds() {
		if k.Settings.Given() {
			return true
		}
	}
	return false
}

// readSources reads, once each, the registry's sources that the flags configure, through the same Specs and
// Evidence the aggregator polls: what they log at Warning or above goes to errw, each poll is bounded by its
// source's poll timeout, and a done ctx ends the wait at once (a read that blocks, standard input from a
// terminal, is left to the process's exit). reportedNode names hosts after the reports' GUIDs (nil: no
// reports); nodesFile, when set, gives the Nodes instead of the cluster.
func readSources(cmd *cobra.Command, srcs *sources.Options, reportedNode func(ib.GUID) string, nodesFile string) ([]sourceRead, error) {
	ctx, errw := cmd.Context(), cmd.ErrOrStderr()
	srcs.Capture.Stdin = cmd.InOrStdin() // --from-ibnetdiscover -
	specs, err := srcs.Specs(sources.Deps{Log: slog.New(newWarnHandler(errw)), ReportedNode: reportedNode})
	if err != nil {
		return nil, err
	}
	var read []sourceRead
	for _, spec := range specs {
		name := spec.Source.Name()
		flag, value := sourceFlag(srcs, name)
		if r, ok := spec.Source.(sources.NodeReader); ok { // as the aggregator gives them (GiveNodes)
			r.UseNodes(nodeLister(cmd, nodesFile, spec.ProviderIDs))
		}
		in, err := evidenceOnce(ctx, spec)
		if errors.Is(err, topology.ErrNothingUsable) {
			_, why, _ := strings.Cut(err.Error(), topology.ErrNothingUsable.Error()+": ")
			return nil, nothingUsable(flag, value, why)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, value, err)
		}
		why := "it places no Node of the cluster (see the warnings above)"
		if e, ok := spec.Source.(sources.Explainer); ok {
			why = e.Unplaced()
		}
		read = append(read, sourceRead{flag: flag, value: value, name: name, in: in, merge: spec.Source.Merge, why: why})
	}
	return read, nil
}

// evidenceOnce polls spec's source once, within its poll timeout, and gives up when ctx is done.
func evidenceOnce(ctx context.Context, spec sources.Spec) (topology.Input, error) {
	if spec.PollTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.PollTimeout)
		defer cancel()
	}
	type polled struct {
		in  topology.Input
		err error
	}
	done := make(chan polled, 1)
	go func() {
		in, err := spec.Source.Evidence(ctx)
		done <- polled{in, err}
	}()
	select {
	case p := <-done:
		return p.in, p.err
	case <-ctx.Done():
		return topology.Input{}, fmt.Errorf("reading: %w", ctx.Err())
	}
}

// sourceFlag names a registry source in messages by the `fabricmap topology` flag that gives it and its value.
func sourceFlag(srcs *sources.Options, name string) (flag, value string) {
	switch name {
	case ibfabric.Name:
		return "--from-ibnetdiscover", srcs.Capture.File
	case ufm.Name:
		if srcs.UFM.Dump != "" {
			return "--from-ufm-dump", srcs.UFM.Dump
		}
		return "--from-ufm", srcs.UFM.URL
	case labels.Name:
		return "--from-labels", strings.Join(srcs.Labels.Keys, ",")
	}
	return "--from-" + name, name
}

// nodeLister lists the Nodes the sources read: those of file (a `kubectl get nodes -o yaml|json` dump) when
// set, else the cluster's, page by page: whole when providerIDs (spec.providerID is in the spec), else their
// metadata only (names and labels).
func nodeLister(cmd *cobra.Command, file string, providerIDs bool) nodes.Lister {
	if file != "" {
		return func(context.Context) ([]nodes.Node, error) { return readNodesFile(file, cmd.ErrOrStderr()) }
	}
	cluster := clusterFlagsOf(cmd)
	return func(ctx context.Context) ([]nodes.Node, error) {
		cfg, err := cluster.RESTConfig()
		if err != nil {
			return nil, err
		}
		pager := metadataPager
		if providerIDs {
			pager = wholePager
		}
		list, err := pager(cfg)
		if err != nil {
			return nil, err
		}
		var out []nodes.Node
		opts := metav1.ListOptions{Limit: nodeListPage}
		for {
			page, next, err := list(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing the Nodes of %s: %w", cfg.Host, err)
			}
			out = append(out, page...)
			if next == "" {
				return out, nil
			}
			opts.Continue = next
		}
	}
}

// readNodesFile reads the Nodes of a `kubectl get nodes -o yaml|json` dump (nodes.ReadFile); a file without any
// Node is nothing usable.
func readNodesFile(path string, errw io.Writer) ([]nodes.Node, error) {
	out, err := nodes.ReadFile(path, errw)
	switch {
	case errors.Is(err, nodes.ErrNoNode):
		return nil, nothingUsable("--nodes-file", path, nodes.ErrNoNode.Error())
	case err != nil:
		return nil, fmt.Errorf("--nodes-file: %w", err)
	}
	return out, nil
}
