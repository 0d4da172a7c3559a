package aggregator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/topology"
)

// LabelSource is the nodes' own labels as a FabricSource: Keys, from the top of the network to the leaves, are
// label keys an admin already maintains (Volcano's label discoverer works the same way). Its pseudo-switches
// never share identifiers with real switches, so it is merged below the other sources (labels.MergeBelow).
type LabelSource struct {
	// Reader lists the Nodes (metadata only).
	Reader client.Reader
	// Keys are the label keys, top first.
	Keys []string
	// Log receives the nodes left out and why.
	Log *slog.Logger
}

// ValidateLabelSourceKeys refuses label-source keys that are invalid or that fabricmap itself writes: reading
// back its own output would make the tree feed on itself.
func ValidateLabelSourceKeys(keys []string, written hypernodegen.LabelKeys) error {
	if err := labels.ValidateKeys(keys); err != nil {
		return fmt.Errorf("label source: %w", err)
	}
	for _, k := range keys {
		if slices.Contains(written.All(), k) {
			return fmt.Errorf("label source: key %s is one fabricmap writes (--label-keys/--accelerator-label-key); read keys an admin maintains", k)
		}
	}
	return nil
}

// Name implements FabricSource.
func (s *LabelSource) Name() string { return labels.Source }

// Evidence implements FabricSource. No node with a full label path is an error, so that labels removed by
// mistake keep the last good evidence rather than empty the tree.
func (s *LabelSource) Evidence(ctx context.Context) (topology.Input, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	if err := s.Reader.List(ctx, &list); err != nil {
		return topology.Input{}, fmt.Errorf("listing nodes: %w", err)
	}
	nodes := make([]labels.Node, 0, len(list.Items))
	for _, n := range list.Items {
		nodes = append(nodes, labels.Node{Name: n.Name, Labels: n.Labels})
	}
	in, problems := labels.Evidence(nodes, s.Keys)
	if len(problems) > 0 && s.Log != nil {
		first := make([]string, 0, min(len(problems), 20))
		for _, p := range problems[:min(len(problems), 20)] {
			first = append(first, p.String())
		}
		s.Log.Info("nodes the label source left out", "count", len(problems), "first", first)
	}
	if len(in.Nodes) == 0 {
		return topology.Input{}, errors.New("no node has a value for every label key; keeping the last good evidence")
	}
	return in, nil
}
