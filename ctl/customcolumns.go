package ctl

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// parseCustomColumns parses -o custom-columns=HEADER:PATH,… (value whole) into a templateOutput printing one
// row an item of the JSON output, aligned as kubectl aligns its tables (printers.GetNewTabWriter), a PATH
// that finds nothing printed as <none>.
//
// kubectl's own custom-columns printer is in k8s.io/kubectl/pkg/cmd/get, which links Go's plugin package
// (through k8s.io/cli-runtime/pkg/resource and kustomize): with it the linker binds every symbol at start-up,
// and go-nvml's (resolved lazily, from the library the NVML probe opens) then stop the CLI before main.
func parseCustomColumns(value string) (templateOutput, bool, error) {
	var headers []string
	var columns []*jsonpath.JSONPath
	for _, col := range strings.Split(strings.TrimPrefix(value, outputCustomColumns), ",") {
		header, path, found := strings.Cut(col, ":")
		if !found || header == "" || path == "" {
			return templateOutput{}, true, fmt.Errorf("--output %q: custom-columns want HEADER:PATH pairs separated by commas, e.g. custom-columns=NAME:.metadata.name", value)
		}
		if !strings.HasPrefix(path, "{") {
			path = "{" + path + "}"
		}
		p := jsonpath.New(header)
		if err := p.Parse(path); err != nil {
			return templateOutput{}, true, fmt.Errorf("--output: the JSONPath %q: %w", path, err)
		}
		headers, columns = append(headers, header), append(columns, p)
	}
	return templateOutput{print: func(w io.Writer, obj map[string]any) error {
		tw := printers.GetNewTabWriter(w)
		fmt.Fprintln(tw, strings.Join(headers, "\t"))
		for _, item := range items(obj) {
			cells := make([]string, len(columns))
			for i, c := range columns {
				var cell bytes.Buffer
				if err := c.Execute(&cell, item); err != nil || cell.Len() == 0 {
					cell.Reset()
					cell.WriteString("<none>")
				}
				cells[i] = printers.EscapeTerminal(cell.String())
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		return tw.Flush()
	}}, true, nil
}
