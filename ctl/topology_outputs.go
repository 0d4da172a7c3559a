package ctl

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/labels"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
)

// topologyFormats are the -o values of `fabricmap topology`, the default first: the HyperNodes (yaml, json,
// drawn as a tree or in DOT), and the aggregator's other outputs from the same tree (labels, kueue, cnt).
var topologyFormats = []string{"yaml", "json", "tree", "dot", "labels", "kueue", "cnt"}

// defaultKueueTopology names the Kueue Topology -o kueue prints when --kueue-topology is not given.
const defaultKueueTopology = "default"

// topologyOutput is how `fabricmap topology` prints the tree it inferred: the one place that maps each -o
// format to what the aggregator writes from a tree, built by the aggregator's own functions with the
// aggregator's settings (member selector, label keys, Kueue Topology name).
type topologyOutput struct {
	format         string
	keys           hypernodegen.LabelKeys
	memberSelector string
	kueueTopology  string
}

// print writes what the aggregator would write from tree in o.format on w; evidence is the reports', whose
// NVLink domains the node labels state. Warnings go to errw.
func (o topologyOutput) print(w, errw io.Writer, tree *topology.Tree, evidence []topology.NodeEvidence) error {
	switch o.format {
	case "labels": // syncNodeLabels' labels, before foreign keys, fabric health's label and held labels are added
		return writeObject(w, hypernodegen.DesiredNodeLabels(tree, evidence, o.keys), "json")
	case "kueue": // the aggregator's --kueue-topology output
		obj, err := hypernodegen.KueueTopology(o.kueueTopology, o.keys, tree)
		if err != nil {
			return fmt.Errorf("-o kueue: %w", err)
		}
		return writeObject(w, obj, "yaml")
	case "cnt": // the aggregator's --cluster-network-topology output
		obj, err := hypernodegen.ClusterNetworkTopology(o.keys, tree)
		if err != nil {
			return fmt.Errorf("-o cnt: %w", err)
		}
		return writeObject(w, obj, "yaml")
	}
	hns, err := hypernodegen.HyperNodes(tree, hypernodegen.Options{NodeSelector: o.memberSelector, LabelKeys: o.keys})
	if err != nil {
		return err
	}
	return printHyperNodes(w, errw, hns, o.format)
}

// readPrevious reads the HyperNodes fabricmap wrote before from path (a List or HyperNodeList, as `kubectl get
// hypernodes -o yaml` prints it, or one or more HyperNode documents) and returns the tree they stand for, as
// the aggregator reads back its HyperNodes after a restart (treeread.ViewHyperNodes): each domain with the
// switches of its hypernodegen.SwitchesAnnotation. HyperNodes fabricmap did not make are skipped, as the
// aggregator never reads them; members selected by regex or label are not resolved (no Nodes here), which
// leaves those domains their switches to keep their names by.
func readPrevious(path string, errw io.Writer) (*topology.Tree, error) {
	var all []topologyv1alpha1.HyperNode
	if err := readObjects(path, "HyperNode", &all); err != nil {
		return nil, fmt.Errorf("--previous: %w", err)
	}
	owned := make([]topologyv1alpha1.HyperNode, 0, len(all))
	ours := labels.SelectorFromSet(hypernodegen.OwnedSelector())
	skipped := 0
	for _, hn := range all {
		if hn.Kind != "" && hn.Kind != "HyperNode" {
			fmt.Fprintf(errw, "warning: --previous %s: skipping a %s %q\n", path, hn.Kind, hn.Name)
			continue
		}
		if !ours.Matches(labels.Set(hn.Labels)) {
			skipped++
			continue
		}
		owned = append(owned, hn)
	}
	if skipped > 0 {
		fmt.Fprintf(errw, "warning: --previous %s: %d HyperNodes not made by fabricmap (no label %s=%s) are left out\n",
			path, skipped, hypernodegen.ManagedByLabel, hypernodegen.ManagedByValue)
	}
	if len(owned) == 0 {
		return nil, fmt.Errorf("--previous %s: no HyperNode made by fabricmap (labelled %s=%s); is it `kubectl get hypernodes -o yaml` output?",
			path, hypernodegen.ManagedByLabel, hypernodegen.ManagedByValue)
	}
	if treeread.NeedsNodeLabels(owned) {
		fmt.Fprintf(errw, "warning: --previous %s: node members selected by regex or label are not read; names are kept by the switches of each HyperNode\n", path)
	}
	prev, warnings := treeread.ViewHyperNodes(owned, nil)
	for _, w := range warnings {
		fmt.Fprintf(errw, "warning: --previous %s: %s\n", path, topology.Printable(w))
	}
	return prev, nil
}
