package ctl

import (
	"fmt"
	"io"

	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/outputs"
	"github.com/fabricmap/fabricmap/topology"
	"github.com/fabricmap/fabricmap/treeread"
	"github.com/fabricmap/fabricmap/wellknown"
)

// topologyFormats are the -o values of `fabricmap topology`, the default first: every format of the output
// registry (outputs.Options.Kinds): the HyperNodes (yaml, json, drawn as a tree or in DOT), and the
// aggregator's other outputs from the same tree (labels, kueue, kai, cnt, slurm, slurm-block, slurm-yaml, nfd).
var topologyFormats = outputs.Formats()

// defaultKueueTopology names the Kueue Topology -o kueue prints when --kueue-topology is not given.
const defaultKueueTopology = "default"

// defaultKAITopology names the KAI Scheduler Topology -o kai prints when --kai-topology is not given.
const defaultKAITopology = "default"

// topologyOutput is how `fabricmap topology` prints the tree it inferred: each -o format is an output of the
// registry, built by the aggregator's own functions with the aggregator's settings (member selector, label
// keys, Kueue and KAI Topology names, Slurm block sizes).
type topologyOutput struct {
	format         string
	keys           hypernodegen.LabelKeys
	memberSelector string
	opts           outputs.Options
}

// print writes what the aggregator would write from tree in o.format on w; evidence is the reports', whose
// NVLink domains the node labels state. Warnings go to errw.
func (o topologyOutput) print(w, errw io.Writer, tree *topology.Tree, evidence []topology.NodeEvidence) error {
	kind, ok := o.opts.ByFormat(o.format)
	if !ok {
		return fmt.Errorf("-o %s: no such output", o.format)
	}
	if kind.Name != outputs.NameHyperNodes {
		env := outputs.Env{LabelKeys: o.keys, Evidence: evidence, MemberSelector: o.memberSelector, Namespace: "default",
			Unwritable: func(output, node, why string) {
				fmt.Fprintf(errw, "warning: -o %s leaves node %s out: %s\n", o.format, node, why)
			}}
		text, err := kind.Text(tree, env, o.format)
		if err != nil {
			return fmt.Errorf("-o %s: %w", o.format, err)
		}
		if len(text) > 0 && text[len(text)-1] != '\n' {
			text = append(text, '\n')
		}
		_, err = w.Write(text)
		return err
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
// switches of its wellknown.SwitchesAnnotation. HyperNodes fabricmap did not make are skipped, as the
// aggregator never reads them; members selected by regex or label are not resolved (no Nodes here), which
// leaves those domains their switches to keep their names by.
func readPrevious(path string, errw io.Writer) (*topology.Tree, error) {
	var all []topologyv1alpha1.HyperNode
	if err := readObjects(path, "HyperNode", &all); err != nil {
		return nil, fmt.Errorf("--previous: %w", err)
	}
	owned := make([]topologyv1alpha1.HyperNode, 0, len(all))
	skipped := 0
	for _, hn := range all {
		if hn.Kind != "" && hn.Kind != "HyperNode" {
			fmt.Fprintf(errw, "warning: --previous %s: skipping a %s %q\n", path, hn.Kind, hn.Name)
			continue
		}
		if !hypernodegen.Owned(hn.Labels) {
			skipped++
			continue
		}
		owned = append(owned, hn)
	}
	if skipped > 0 {
		fmt.Fprintf(errw, "warning: --previous %s: %d HyperNodes not made by fabricmap (no label %s=%s) are left out\n",
			path, skipped, wellknown.ManagedByLabel, wellknown.ManagedByValue)
	}
	if len(owned) == 0 {
		return nil, fmt.Errorf("--previous %s: no HyperNode made by fabricmap (labelled %s=%s); is it `kubectl get hypernodes -o yaml` output?",
			path, wellknown.ManagedByLabel, wellknown.ManagedByValue)
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
