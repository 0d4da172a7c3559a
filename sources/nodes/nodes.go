// Package nodes is the cluster's Nodes as the fabric-wide sources see them: a name, labels and the provider's
// identifier of the machine (spec.providerID), listed from the cluster or read from a `kubectl get nodes` dump.
// It is the one reader of Nodes for the sources, in the aggregator and in `fabricmap topology` alike.
package nodes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Node is what the sources need of a Kubernetes Node.
type Node struct {
	// Name is the Kubernetes node name.
	Name string
	// Labels are the node's labels.
	Labels map[string]string
	// ProviderID is the Node's spec.providerID: the cloud's identifier of the machine
	// ("aws:///us-east-1a/i-0123456789abcdef0", "gce://project/zone/name", "oci://ocid1.instance…"); empty off-cloud.
	ProviderID string
}

// Lister lists the cluster's Nodes; the aggregator and the CLI give the sources one.
type Lister func(ctx context.Context) ([]Node, error)

// ErrNoNode is what ReadFile returns for a file without any Node.
var ErrNoNode = errors.New("no Node found; is it `kubectl get nodes -o yaml` output?")

// object is what a Node dump holds that the sources need; a List or NodeList carries its Nodes in Items.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		ProviderID string `json:"providerID"`
	} `json:"spec"`
	Items []object `json:"items"`
}

// ReadFile reads the Nodes of a YAML or JSON file: Lists or NodeLists (as `kubectl get nodes -o yaml|json`
// prints them) or single Nodes, in one or more documents. Objects of other kinds are skipped with a warning on
// errw; a file without any Node is ErrNoNode.
func ReadFile(path string, errw io.Writer) ([]Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []Node
	for doc := 1; ; doc++ {
		var obj object
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", path, doc, err)
		}
		objs := []object{obj}
		if obj.Kind == "List" || obj.Kind == "NodeList" {
			objs = obj.Items
		}
		for _, o := range objs {
			if o.Kind != "Node" && !(o.Kind == "" && obj.Kind == "NodeList") {
				if o.Kind != "" || o.Metadata.Name != "" {
					fmt.Fprintf(errw, "warning: %s, document %d: skipping a %s %q\n", path, doc, o.Kind, o.Metadata.Name)
				}
				continue
			}
			out = append(out, Node{Name: o.Metadata.Name, Labels: o.Metadata.Labels, ProviderID: o.Spec.ProviderID})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoNode)
	}
	return out, nil
}
