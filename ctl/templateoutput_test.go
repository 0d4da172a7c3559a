package ctl

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTemplateOutput: the kubectl forms of -o print what the command's -o json holds, by kubectl's printers:
// -o name names Kubernetes objects as kind.group/name, a node's place as node/NAME and a tier by its name; a
// JSONPath that finds nothing fails with what failed (not kubectl's dump of the whole object); a Go template
// has kubectl's functions; custom columns, as kubectl's, join the values a path finds with commas and print
// <none> for a path that finds nothing.
func TestTemplateOutput(t *testing.T) {
	const hyperNodes = `{"apiVersion": "v1", "kind": "List", "items": [
	  {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "leaf-a"}, "spec": {"tier": 1}},
	  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-a1"}}]}`
	const nodes = `{"nodes": [{"node": "gpu-a1", "path": [{"name": "leaf-a"}, {"name": "spine"}]}, {"node": "gpu-x", "noTopology": true}]}`
	const tiers = `{"tiers": [{"tier": 1, "name": "leaf"}, {"tier": 2, "name": "spine"}]}`
	const findings = `{"findings": [{"kind": "DegradedLink", "node": "gpu-a1", "message": "down"}]}`
	for _, tc := range []struct {
		name, json, output string
		want, wantErr      string
	}{
		{"name of objects", hyperNodes, "name", "hypernode.topology.volcano.sh/leaf-a\nnode/gpu-a1\n", ""},
		{"name of node places", nodes, "name", "node/gpu-a1\nnode/gpu-x\n", ""},
		{"name of tiers", tiers, "name", "leaf\nspine\n", ""},
		{"name of findings", findings, "name", "node/gpu-a1\n", ""},
		{"jsonpath", nodes, "jsonpath={.nodes[*].node}", "gpu-a1 gpu-x\n", ""},
		{"jsonpath on a missing key", nodes, "jsonpath={.items[*].metadata}", "", "--output jsonpath: items is not found"},
		{"jsonpath unparsed", nodes, "jsonpath={.nodes[}", "", `--output: the JSONPath "{.nodes[}": unterminated array`},
		{"go-template", hyperNodes, `go-template={{range .items}}{{.metadata.name}}{{if exists . "spec" "tier"}} tier {{.spec.tier}}{{end}}{{"\n"}}{{end}}`,
			"leaf-a tier 1\ngpu-a1\n", ""},
		{"go-template unparsed", hyperNodes, "go-template={{range .items}", "", "--output: the Go template: template: output:1: bad character U+007D '}'"},
		{"custom-columns", nodes, "custom-columns=NODE:.node,PATH:.path[*].name,LEAF:path[0].name,NO TOPOLOGY:{.noTopology}",
			"NODE     PATH           LEAF     NO TOPOLOGY\ngpu-a1   leaf-a,spine   leaf-a   <none>\ngpu-x    <none>         <none>   true\n", ""},
		{"custom-columns of objects", hyperNodes, "custom-columns=NAME:.metadata.name,TIER:.spec.tier",
			"NAME     TIER\nleaf-a   1\ngpu-a1   <none>\n", ""},
		{"custom-columns without a path", nodes, "custom-columns=NODE", "",
			`--output "custom-columns=NODE": custom-columns want HEADER:PATH pairs separated by commas, e.g. custom-columns=NAME:.metadata.name`},
		{"custom-columns unparsed", nodes, "custom-columns=NODE:.path[", "", `--output: the JSONPath ".path[": unterminated array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, gotErr string
			tmpl, ok, err := parseTemplateOutput(tc.output)
			if !ok {
				t.Fatalf("%q is not a template form", tc.output)
			}
			if err == nil {
				render := tmpl.wrap(func(_ context.Context, _ client.Reader, w, _ io.Writer) error {
					_, err := io.WriteString(w, tc.json)
					return err
				})
				var out bytes.Buffer
				err = render(context.Background(), nil, &out, io.Discard)
				got = out.String()
			}
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok, _ := parseTemplateOutput("json"); ok {
		t.Error("json parsed as a template form")
	}
}
