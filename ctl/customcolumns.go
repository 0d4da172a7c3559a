package ctl

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// columnPath is a custom column's PATH as kubectl takes it: .a.b, a.b, {.a.b} or {a.b}.
var columnPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// parseCustomColumns parses -o custom-columns=HEADER:PATH,… (value whole) into a templateOutput printing a
// row an item of the JSON output as kubectl's custom-columns printer prints it: aligned by kubectl's tab
// writer (printers.GetNewTabWriter), the values a PATH finds joined by commas, <none> when it finds none.
//
// kubectl's own printer is in k8s.io/kubectl/pkg/cmd/get, which links Go's plugin package (through
// k8s.io/cli-runtime/pkg/resource and kustomize): with it the linker binds every symbol at start-up, and
// go-nvml's (resolved lazily, from the library the NVML probe opens) then stop the CLI before main
// (TestCLILinksNoGoPlugin).
func parseCustomColumns(value string) (templateOutput, bool, error) {
	var headers []string
	var columns []*jsonpath.JSONPath
	for _, col := range strings.Split(strings.TrimPrefix(value, outputCustomColumns), ",") {
		header, path, found := strings.Cut(col, ":")
		m := columnPath.FindStringSubmatch(path)
		if !found || header == "" || m == nil {
			return templateOutput{}, true, fmt.Errorf("--output %q: custom-columns want HEADER:PATH pairs separated by commas, e.g. custom-columns=NAME:.metadata.name", value)
		}
		p := jsonpath.New(header).AllowMissingKeys(true)
		if err := p.Parse("{." + m[1] + m[2] + "}"); err != nil {
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
				results, err := c.FindResults(item)
				if err != nil {
					return fmt.Errorf("--output custom-columns: the column %s: %w", headers[i], err)
				}
				var values []string
				for _, found := range results {
					for _, v := range found {
						values = append(values, printers.EscapeTerminal(fmt.Sprint(v.Interface())))
					}
				}
				if len(values) == 0 {
					values = []string{"<none>"}
				}
				cells[i] = strings.Join(values, ",")
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		return tw.Flush()
	}}, true, nil
}
