package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The -o forms kubectl users reach for, on every command that prints JSON: name, jsonpath=TEMPLATE,
// go-template=TEMPLATE and custom-columns=HEADER:PATH,…, each made of what -o json prints by kubectl's own
// printers (k8s.io/cli-runtime's; custom columns: customcolumns.go).
const (
	outputName          = "name"
	outputJSONPath      = "jsonpath="
	outputGoTemplate    = "go-template="
	outputCustomColumns = "custom-columns="
)

// templateOutput is one of those forms, parsed: print writes what it makes of the JSON output obj.
type templateOutput struct {
	print func(w io.Writer, obj map[string]any) error
}

// parseTemplateOutput parses value when it is one of the template forms; ok is false for any other value.
func parseTemplateOutput(value string) (t templateOutput, ok bool, err error) {
	switch {
	case value == outputName:
		return templateOutput{print: printNames}, true, nil
	case strings.HasPrefix(value, outputJSONPath):
		tmpl := strings.TrimPrefix(value, outputJSONPath)
		p, err := printers.NewJSONPathPrinter(tmpl) // a missing key is an error, as in kubectl's own -o jsonpath
		if err != nil {
			return t, true, fmt.Errorf("--output: the JSONPath %q: %w", tmpl, err)
		}
		return templateOutput{print: func(w io.Writer, obj map[string]any) error {
			if err := p.PrintObj(&unstructured.Unstructured{Object: obj}, w); err != nil {
				// kubectl's error holds the whole object, megabytes for a large cluster: say what failed alone.
				if short := p.Execute(io.Discard, obj); short != nil {
					err = short
				}
				return fmt.Errorf("--output jsonpath: %w", err)
			}
			_, err := fmt.Fprintln(w) // a line of its own (kubectl leaves the newline to the template)
			return err
		}}, true, nil
	case strings.HasPrefix(value, outputGoTemplate):
		p, err := printers.NewGoTemplatePrinter([]byte(strings.TrimPrefix(value, outputGoTemplate)))
		if err != nil {
			return t, true, fmt.Errorf("--output: the Go template: %w", err)
		}
		return templateOutput{print: func(w io.Writer, obj map[string]any) error {
			if err := p.PrintObj(&unstructured.Unstructured{Object: obj}, w); err != nil {
				return fmt.Errorf("--output go-template: %w", err)
			}
			return nil
		}}, true, nil
	case strings.HasPrefix(value, outputCustomColumns):
		return parseCustomColumns(value)
	}
	return templateOutput{}, false, nil
}

// wrap returns a render that renders as -o json and prints what t makes of it.
func (t templateOutput) wrap(render renderFunc) renderFunc {
	return func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
		var buf bytes.Buffer
		if err := render(ctx, r, &buf, errw); err != nil {
			return err
		}
		var obj map[string]any
		if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
			return fmt.Errorf("reading the JSON output back: %w", err)
		}
		return t.print(w, obj)
	}
}

// items are the objects of a JSON output: a List's items, the nodes of `get nodes`, or the output itself.
func items(obj map[string]any) []any {
	for _, key := range []string{"items", "nodes", "tiers", "findings"} {
		if list, ok := obj[key].([]any); ok {
			return list
		}
	}
	return []any{obj}
}

// printNames writes -o name of a JSON output, one line an item, as kubectl's name printer names objects: a
// Kubernetes object as kind.group/name (hypernode.topology.volcano.sh/leaf-a), a node's place as the Node
// (node/NAME), anything else (a tier) by its name alone.
func printNames(w io.Writer, obj map[string]any) error {
	var names printers.NamePrinter
	for _, item := range items(obj) {
		m, _ := item.(map[string]any)
		var u *unstructured.Unstructured
		if _, ok := m["metadata"].(map[string]any); ok {
			u = &unstructured.Unstructured{Object: m}
		} else if node, ok := m["node"].(string); ok {
			u = &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("Node")
			u.SetName(node)
		} else {
			name, ok := m["name"].(string)
			if !ok {
				name = fmt.Sprint(item)
			}
			if _, err := fmt.Fprintln(w, name); err != nil {
				return err
			}
			continue
		}
		if err := names.PrintObj(u, w); err != nil {
			return fmt.Errorf("--output name: %w", err)
		}
	}
	return nil
}
