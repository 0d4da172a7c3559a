package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"text/template"

	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The -o forms kubectl users reach for, on every command that prints JSON: name, jsonpath=TEMPLATE,
// go-template=TEMPLATE and custom-columns=HEADER:PATH,…, each applied to what -o json prints.
const (
	outputName          = "name"
	outputJSONPath      = "jsonpath="
	outputGoTemplate    = "go-template="
	outputCustomColumns = "custom-columns="
)

// templateOutput is one of those forms, parsed.
type templateOutput struct {
	kind    string // outputName, outputJSONPath, outputGoTemplate or outputCustomColumns
	path    *jsonpath.JSONPath
	tmpl    *template.Template
	headers []string
	columns []*jsonpath.JSONPath
}

// parseTemplateOutput parses value when it is one of the template forms; ok is false for any other value.
func parseTemplateOutput(value string) (t templateOutput, ok bool, err error) {
	switch {
	case value == outputName:
		return templateOutput{kind: outputName}, true, nil
	case strings.HasPrefix(value, outputJSONPath):
		p, err := parsePath("jsonpath", strings.TrimPrefix(value, outputJSONPath))
		return templateOutput{kind: outputJSONPath, path: p}, true, err
	case strings.HasPrefix(value, outputGoTemplate):
		tmpl, err := template.New("output").Parse(strings.TrimPrefix(value, outputGoTemplate))
		if err != nil {
			err = fmt.Errorf("--output: the Go template: %w", err)
		}
		return templateOutput{kind: outputGoTemplate, tmpl: tmpl}, true, err
	case strings.HasPrefix(value, outputCustomColumns):
		t := templateOutput{kind: outputCustomColumns}
		for _, col := range strings.Split(strings.TrimPrefix(value, outputCustomColumns), ",") {
			header, path, found := strings.Cut(col, ":")
			if !found || header == "" || path == "" {
				return t, true, fmt.Errorf("--output %q: custom-columns want HEADER:PATH pairs separated by commas, e.g. custom-columns=NAME:.metadata.name", value)
			}
			if !strings.HasPrefix(path, "{") {
				path = "{" + path + "}"
			}
			p, err := parsePath(header, path)
			if err != nil {
				return t, true, err
			}
			t.headers, t.columns = append(t.headers, header), append(t.columns, p)
		}
		return t, true, nil
	}
	return templateOutput{}, false, nil
}

// parsePath parses a JSONPath template as kubectl's printers do (a missing key is an error).
func parsePath(name, template string) (*jsonpath.JSONPath, error) {
	p := jsonpath.New(name)
	if err := p.Parse(template); err != nil {
		return nil, fmt.Errorf("--output: the JSONPath %q: %w", template, err)
	}
	return p, nil
}

// wrap returns a render that renders as -o json and writes what t makes of it.
func (t templateOutput) wrap(render renderFunc) renderFunc {
	return func(ctx context.Context, r client.Reader, w, errw io.Writer) error {
		var buf bytes.Buffer
		if err := render(ctx, r, &buf, errw); err != nil {
			return err
		}
		var obj any
		if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
			return fmt.Errorf("reading the JSON output back: %w", err)
		}
		switch t.kind {
		case outputJSONPath:
			if err := t.path.Execute(w, obj); err != nil {
				return fmt.Errorf("--output jsonpath: %w", err)
			}
			_, err := fmt.Fprintln(w)
			return err
		case outputGoTemplate:
			if err := t.tmpl.Execute(w, obj); err != nil {
				return fmt.Errorf("--output go-template: %w", err)
			}
			return nil
		case outputName:
			for _, item := range items(obj) {
				if _, err := fmt.Fprintln(w, itemName(item)); err != nil {
					return err
				}
			}
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, strings.Join(t.headers, "\t"))
		for _, item := range items(obj) {
			cells := make([]string, len(t.columns))
			for i, c := range t.columns {
				var cell bytes.Buffer
				if err := c.Execute(&cell, item); err != nil {
					cell.Reset()
					cell.WriteString("<none>")
				}
				cells[i] = cell.String()
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		return tw.Flush()
	}
}

// items are the objects of a JSON output: a List's items, the nodes of `get nodes`, or the output itself.
func items(obj any) []any {
	if m, ok := obj.(map[string]any); ok {
		for _, key := range []string{"items", "nodes", "tiers", "findings"} {
			if list, ok := m[key].([]any); ok {
				return list
			}
		}
	}
	return []any{obj}
}

// itemName is what -o name prints for an item: kind.group/name for a Kubernetes object, as kubectl prints it
// (hypernode.topology.volcano.sh/leaf-a), node/NAME for a node's place.
func itemName(item any) string {
	m, _ := item.(map[string]any)
	if meta, ok := m["metadata"].(map[string]any); ok {
		kind, _ := m["kind"].(string)
		resource := strings.ToLower(kind)
		if apiVersion, _ := m["apiVersion"].(string); strings.Contains(apiVersion, "/") {
			group, _, _ := strings.Cut(apiVersion, "/")
			resource += "." + group // as kubectl names it: hypernode.topology.volcano.sh/leaf-a
		}
		return resource + "/" + fmt.Sprint(meta["name"])
	}
	for _, key := range []string{"node", "name"} {
		if v, ok := m[key].(string); ok {
			if key == "node" {
				return "node/" + v
			}
			return v
		}
	}
	return fmt.Sprint(item)
}
